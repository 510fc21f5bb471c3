/// Exit codes from sysexits(3), so scripts and systemd can tell a typo from a missing device.
public enum ExitCode: Int32, Sendable {
    case ok = 0
    /// A run-time failure that is none of the below.
    case failure = 1
    /// EX_USAGE: a bad flag or flag value.
    case usage = 64
    /// EX_UNAVAILABLE: hardware that is missing (no GPIO chip, no I2C bus, no LCD answering).
    case unavailable = 69
    /// EX_SOFTWARE: an internal error.
    case software = 70
    /// EX_IOERR: an I/O error that is not about availability.
    case ioError = 74
    /// EX_NOPERM: permission denied (not in the gpio or i2c group).
    case noPermission = 77
    /// EX_CONFIG: a bad configuration file.
    case config = 78
}

/// A failure that ends the program: one clear line for the user and the exit code.
public struct ExitError: Error, Sendable {
    public var code: ExitCode
    public var message: String

    public init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
