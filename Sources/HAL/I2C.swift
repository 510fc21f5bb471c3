/// A 7-bit I2C address in the range a device may use: 0x08...0x77 (0x00-0x07 and 0x78-0x7F are
/// reserved by the I2C specification).
public struct I2CAddress: Hashable, Comparable, Sendable {
    public let rawValue: UInt8

    /// The usable range of 7-bit addresses.
    public static let validRange: ClosedRange<UInt8> = 0x08...0x77

    /// Returns nil for a reserved or 8-bit address.
    public init?(_ rawValue: UInt8) {
        guard I2CAddress.validRange.contains(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// An address written in the program (a datasheet's default): a reserved one is our bug.
    public init(constant rawValue: UInt8) {
        precondition(I2CAddress.validRange.contains(rawValue), "I2CAddress(constant:): a reserved address")
        self.rawValue = rawValue
    }

    public static func < (a: I2CAddress, b: I2CAddress) -> Bool { a.rawValue < b.rawValue }
}

/// An I2C master. Transactions are synchronous: `write` returns once the bytes are on the wire
/// (or the transfer failed). Implementations never print.
public protocol I2CBus {
    /// True when one `write` may carry several bytes in one transaction (one START, one address
    /// byte, then the data). False on SMBus-only adapters: callers must then send one byte per
    /// transaction.
    var supportsMultiByteWrite: Bool { get }

    /// Writes `bytes` to the device at `address` in one transaction. `bytes` holds exactly one
    /// element when `supportsMultiByteWrite` is false. Throws `.noDevice` when nothing acknowledges.
    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError)

    /// Asks whether a device acknowledges `address`, without changing its state where the device
    /// allows (a one-byte read, as i2cdetect does for the PCF8574 ranges). Returns false for
    /// `.noDevice`; throws other faults (a missing bus, no permission).
    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool
}
