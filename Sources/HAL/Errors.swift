/// A fault in the world reported by a HAL implementation: a missing device, a busy line, a bus error.
///
/// `kind` is for decisions (retry? tell the user to fix permissions?); `operation` and `errno` are
/// for humans and logs. The table mapping errno values to kinds lives in one place, in HALLinux.
/// HAL implementations never print and never abort on these; callers decide.
public struct HALError: Error, Hashable, Sendable {
    /// The small classification callers branch on.
    public enum Kind: Hashable, Sendable {
        /// The chip, bus, line or device file does not exist (ENOENT, ENODEV).
        case notFound
        /// No device acknowledged at that address (ENXIO; EREMOTEIO on the Pi's i2c-bcm2835).
        case noDevice
        /// Held by another consumer (EBUSY).
        case busy
        /// Permission denied (EACCES, EPERM): usually a missing gpio/i2c group.
        case permission
        /// The operation timed out on the bus (ETIMEDOUT).
        case timeout
        /// An I/O error on the bus or device (EIO and anything else transient).
        case io
        /// The adapter or kernel cannot do this (EOPNOTSUPP, ENOTTY, EINVAL from an ioctl).
        case unsupported
        /// An argument was rejected before any I/O (e.g. an I2C address outside 0x08-0x77).
        case invalidArgument
        /// The mock hardware was told to fail (tests only).
        case injected
    }

    public var kind: Kind
    /// What was being done, in the vocabulary of the call: "write /dev/i2c-1", "request GPIO17".
    public var operation: String
    /// The raw errno when the fault came from the OS, else 0.
    public var errno: Int32

    public init(_ kind: Kind, operation: String, errno: Int32 = 0) {
        self.kind = kind
        self.operation = operation
        self.errno = errno
    }
}
