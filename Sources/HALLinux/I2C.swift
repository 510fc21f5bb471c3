import CI2C
import CLinuxOS
import HAL

/// What an I2C adapter can do, from the `I2C_FUNCS` ioctl (linux/i2c.h bits).
public struct I2CFunctionality: OptionSet, Hashable, Sendable {
    public let rawValue: UInt

    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Plain I2C messages: read()/write() of several bytes in one transaction.
    public static let plainI2C = I2CFunctionality(rawValue: RB_I2C_FUNC_I2C)
    /// SMBus quick command (address + R/W bit, no data).
    public static let smbusQuick = I2CFunctionality(rawValue: RB_I2C_FUNC_SMBUS_QUICK)
    /// SMBus receive byte (one byte read without a command code).
    public static let smbusReadByte = I2CFunctionality(rawValue: RB_I2C_FUNC_SMBUS_READ_BYTE)
    /// SMBus send byte (one byte written without a command code).
    public static let smbusWriteByte = I2CFunctionality(rawValue: RB_I2C_FUNC_SMBUS_WRITE_BYTE)

    /// How expander bytes go out: batched in one write() when the adapter does plain I2C, else one
    /// SMBus send-byte per byte; nil when it can do neither.
    public var writeStrategy: I2CWriteStrategy? {
        if contains(.plainI2C) { return .batchedWrite }
        if contains(.smbusWriteByte) { return .smbusSendBytePerByte }
        return nil
    }

    /// How `probe` asks an address: an SMBus receive byte (harmless on a PCF8574: it returns the
    /// port pins), else an SMBus quick write, else a plain one-byte read(); nil when none is possible.
    public var probeMethod: I2CProbeMethod? {
        if contains(.smbusReadByte) { return .smbusReadByte }
        if contains(.smbusQuick) { return .smbusQuickWrite }
        if contains(.plainI2C) { return .plainRead }
        return nil
    }
}

public enum I2CWriteStrategy: Hashable, Sendable {
    /// One write() per call: one START, the address, every byte.
    case batchedWrite
    /// One `i2c_smbus_write_byte` transaction per byte.
    case smbusSendBytePerByte
}

public enum I2CProbeMethod: Hashable, Sendable {
    case smbusReadByte
    case smbusQuickWrite
    case plainRead
}

/// An I2C adapter through /dev/i2c-N (the Pi header's bus is 1, enabled by `dtparam=i2c_arm=on`).
///
/// Every call blocks until the transfer is done (about 90 us per byte at the PCF8574's 100 kHz).
/// The target address is set with `I2C_SLAVE` only when it changes. A device that does not
/// acknowledge gives `.noDevice` (ENXIO; EREMOTEIO on the Pi's i2c-bcm2835). The descriptor is
/// closed when the last copy of the bus goes away. Never prints.
public struct LinuxI2CBus: I2CBus {
    /// "/dev/i2c-1"
    public let path: String
    /// What the adapter reported for `I2C_FUNCS`.
    public let functionality: I2CFunctionality
    private let strategy: I2CWriteStrategy
    private let handle: Handle

    /// True on adapters that do plain I2C: then `write` sends all bytes in one transaction.
    public var supportsMultiByteWrite: Bool { strategy == .batchedWrite }

    /// Opens /dev/i2c-`number`.
    public init(busNumber: Int) throws(HALError) {
        try self.init(path: LinuxI2CBus.devicePath(busNumber: busNumber))
    }

    /// Opens an i2c-dev node and asks what the adapter can do. Throws `.notFound` (with the path
    /// in `operation`) when the node does not exist, `.permission` without access (the i2c group),
    /// `.unsupported` when the adapter can neither write plainly nor send SMBus bytes.
    public init(path: String) throws(HALError) {
        let fd = try Syscall.run("open \(path)") { rb_open(path, O_RDWR | O_CLOEXEC, 0) }
        let handle = Handle(fd: fd)
        var funcs: UInt = 0
        _ = try Syscall.run("I2C_FUNCS \(path)") { rb_i2c_get_funcs(fd, &funcs) }
        try self.init(path: path, handle: handle, functionality: I2CFunctionality(rawValue: funcs))
    }

    /// Wraps an open descriptor (tests use /dev/null with injected errors); takes ownership of `fd`.
    init(path: String, fileDescriptor fd: Int32, functionality: I2CFunctionality) throws(HALError) {
        try self.init(path: path, handle: Handle(fd: fd), functionality: functionality)
    }

    private init(path: String, handle: Handle, functionality: I2CFunctionality) throws(HALError) {
        guard let strategy = functionality.writeStrategy else {
            throw HALError(.unsupported, operation: "\(path): adapter can neither write I2C messages nor send SMBus bytes")
        }
        self.path = path
        self.handle = handle
        self.functionality = functionality
        self.strategy = strategy
    }

    /// "/dev/i2c-N"
    public static func devicePath(busNumber: Int) -> String { "/dev/i2c-\(busNumber)" }

    public mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) {
        precondition(!bytes.isEmpty, "an I2C write needs at least one byte")
        try select(address)
        let operation = "write \(path) \(hex(address.rawValue))"
        let fd = handle.fd
        switch strategy {
        case .batchedWrite:
            // withUnsafeBytes only rethrows untyped errors: carry the outcome out as a Result.
            let outcome = bytes.withUnsafeBytes { buffer in
                Result { () throws(HALError) -> Int in
                    try Syscall.run(operation) { CLinuxOS.write(fd, buffer.baseAddress, buffer.count) }
                }
            }
            let written = try outcome.get()
            guard written == bytes.count else {
                throw HALError(.io, operation: "\(operation): \(written) of \(bytes.count) bytes written", errno: EIO)
            }
        case .smbusSendBytePerByte:
            for byte in bytes {
                _ = try Syscall.run(operation) { i2c_smbus_write_byte(fd, byte) }
            }
        }
    }

    public mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool {
        guard let method = functionality.probeMethod else {
            throw HALError(.unsupported, operation: "probe \(path): adapter has no read or quick command")
        }
        try select(address)
        let operation = "probe \(path) \(hex(address.rawValue))"
        let fd = handle.fd
        do throws(HALError) {
            switch method {
            case .smbusReadByte:
                _ = try Syscall.run(operation) { i2c_smbus_read_byte(fd) }
            case .smbusQuickWrite:
                _ = try Syscall.run(operation) { i2c_smbus_write_quick(fd, UInt8(I2C_SMBUS_WRITE)) }
            case .plainRead:
                var byte: UInt8 = 0
                _ = try Syscall.run(operation) { CLinuxOS.read(fd, &byte, 1) }
            }
            return true
        } catch  where error.kind == .noDevice || error.errno == ENODEV {
            // On an open bus ENODEV is about the address, not the bus: i2c-stub (and some
            // adapters) answer an absent device with it where i2c-bcm2835 says EREMOTEIO.
            return false
        }
    }

    /// Points the descriptor at `address` unless it already is.
    private func select(_ address: I2CAddress) throws(HALError) {
        if handle.selected == address { return }
        handle.selected = nil
        let fd = handle.fd
        _ = try Syscall.run("I2C_SLAVE \(path) \(hex(address.rawValue))") {
            rb_i2c_set_slave(fd, UInt32(address.rawValue))
        }
        handle.selected = address
    }

    private final class Handle {
        let fd: Int32
        var selected: I2CAddress?

        init(fd: Int32) { self.fd = fd }

        deinit { _ = close(fd) }
    }
}

// MARK: - Backpack address probing

/// The PCF8574 backpack's address ranges (7-bit): A2..A0 select one of eight in each.
public enum PCF8574AddressRange {
    /// PCF8574 / PCF8574T: 0x20-0x27 (0x27 with all jumpers open).
    public static let pcf8574: ClosedRange<UInt8> = 0x20...0x27
    /// PCF8574A / PCF8574AT: 0x38-0x3F (0x3F with all jumpers open).
    public static let pcf8574A: ClosedRange<UInt8> = 0x38...0x3F

    /// Both ranges in scan order.
    public static var all: [I2CAddress] {
        (Array(pcf8574) + Array(pcf8574A)).compactMap { I2CAddress($0) }
    }
}

/// What an `auto` address scan found.
public enum ProbeResult: Hashable, Sendable {
    case none
    case single(I2CAddress)
    /// Several responders, in ascending order: the user must choose.
    case several([I2CAddress])
}

/// The outcome of probing a list of addresses.
public struct I2CScan: Hashable, Sendable {
    /// Addresses that acknowledged, ascending.
    public var answered: [I2CAddress]
    /// Addresses a kernel driver has claimed (`I2C_SLAVE` gave EBUSY; i2cdetect shows "UU").
    public var claimed: [I2CAddress]

    public init(answered: [I2CAddress] = [], claimed: [I2CAddress] = []) {
        self.answered = answered
        self.claimed = claimed
    }
}

/// Probes each of `addresses` once, in order. Blocks for one transaction per address. Throws the
/// first fault that is not "no device" or "claimed by a driver" (a missing bus, no permission).
public func scanAddresses<Bus: I2CBus>(_ addresses: [I2CAddress], on bus: inout Bus) throws(HALError) -> I2CScan {
    var scan = I2CScan()
    for address in addresses {
        do throws(HALError) {
            if try bus.probe(address) { scan.answered.append(address) }
        } catch  where error.kind == .busy {
            scan.claimed.append(address)
        }
    }
    scan.answered.sort()
    return scan
}

/// Scans the PCF8574 (0x20-0x27) and PCF8574A (0x38-0x3F) ranges for a backpack.
public func probeBackpackAddress<Bus: I2CBus>(on bus: inout Bus) throws(HALError) -> ProbeResult {
    let answered = try scanAddresses(PCF8574AddressRange.all, on: &bus).answered
    switch answered.count {
    case 0: return .none
    case 1: return .single(answered[0])
    default: return .several(answered)
    }
}
