// What `run` and the simulator share (exit codes, option parsing, the loop's environment, the
// event log, configuration loading), under its own names in every file of this target and for
// whoever imports ResendApp.
@_exported import ResendDevice
