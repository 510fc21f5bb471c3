/// The program's version: printed by `--version`, in the `started` event line, told to Home
/// Assistant as the device's `sw_version`, and the Debian package's version (scripts/package reads
/// this line, so keep its shape: `public let programVersion = "X.Y.Z"`).
public let programVersion = "0.1.0"
