// The shared test support (Tests/TestSupport) under its own names, in every file of this target.
@_exported import TestSupport
