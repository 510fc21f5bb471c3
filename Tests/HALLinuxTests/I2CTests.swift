import Glibc
import HAL
import Testing

@testable import HALLinux

@Suite("I2C through i2c-dev")
struct I2CTests {
    static let address = I2CAddress(0x27)!

    @Test(
        "the adapter's I2C_FUNCS choose batched writes or one SMBus send-byte per byte",
        arguments: [
            (I2CFunctionality([.plainI2C, .smbusQuick, .smbusReadByte, .smbusWriteByte]), I2CWriteStrategy?.some(.batchedWrite)),
            (I2CFunctionality([.plainI2C]), .some(.batchedWrite)),
            (I2CFunctionality([.smbusQuick, .smbusReadByte, .smbusWriteByte]), .some(.smbusSendBytePerByte)),
            (I2CFunctionality([.smbusWriteByte]), .some(.smbusSendBytePerByte)),
            (I2CFunctionality([.smbusQuick, .smbusReadByte]), nil),
            (I2CFunctionality([]), nil),
        ])
    func writeStrategy(functionality: I2CFunctionality, expected: I2CWriteStrategy?) {
        #expect(functionality.writeStrategy == expected)
    }

    @Test("the funcs bitmask uses the kernel's bit values")
    func kernelBitValues() {
        // linux/i2c.h: I2C_FUNC_I2C 0x1, SMBUS_QUICK 0x10000, SMBUS_READ_BYTE 0x20000, SMBUS_WRITE_BYTE 0x40000.
        #expect(I2CFunctionality(rawValue: 0x0006_0001).writeStrategy == .batchedWrite)
        #expect(I2CFunctionality(rawValue: 0x0007_0000).writeStrategy == .smbusSendBytePerByte)
        #expect(I2CFunctionality(rawValue: 0x0001_0000).probeMethod == .smbusQuickWrite)
    }

    @Test(
        "probing prefers SMBus receive byte, then quick, then a plain read",
        arguments: [
            (I2CFunctionality([.plainI2C, .smbusQuick, .smbusReadByte]), I2CProbeMethod?.some(.smbusReadByte)),
            (I2CFunctionality([.plainI2C, .smbusQuick]), .some(.smbusQuickWrite)),
            (I2CFunctionality([.plainI2C]), .some(.plainRead)),
            (I2CFunctionality([.smbusWriteByte]), nil),
        ])
    func probeMethod(functionality: I2CFunctionality, expected: I2CProbeMethod?) {
        #expect(functionality.probeMethod == expected)
    }

    @Test("a missing /dev/i2c-99 is notFound with the path in the operation")
    func missingBus() {
        let error = thrownError { _ = try LinuxI2CBus(busNumber: 99) }
        #expect(error?.kind == .notFound)
        #expect(error?.errno == ENOENT)
        #expect(error?.operation.contains("/dev/i2c-99") == true)
    }

    @Test("an adapter that can neither write nor send bytes is rejected")
    func uselessAdapter() {
        let error = thrownError { _ = try LinuxI2CBus(path: "/dev/i2c-t", fileDescriptor: openNull(), functionality: [.smbusQuick]) }
        #expect(error?.kind == .unsupported)
    }

    /// A bus over /dev/null: the scripted seam stands in for the adapter; any call the script does
    /// not cover really reaches /dev/null, where i2c ioctls fail (ENOTTY) and write() succeeds.
    func nullBus(_ functionality: I2CFunctionality) throws -> LinuxI2CBus {
        try LinuxI2CBus(path: "/dev/i2c-t", fileDescriptor: openNull(), functionality: functionality)
    }

    func openNull() -> Int32 {
        let fd = open("/dev/null", O_RDWR | O_CLOEXEC)
        precondition(fd >= 0)
        return fd
    }

    @Test("a plain I2C adapter sends all bytes in one write after one I2C_SLAVE")
    func batchedWrite() throws {
        var bus = try nullBus([.plainI2C, .smbusReadByte])
        #expect(bus.supportsMultiByteWrite)
        // I2C_SLAVE scripted to succeed, then the real write() to /dev/null.
        let (_, unused) = try Syscall.withScript([.succeed(0), .passThrough]) {
            try bus.write([0x3C, 0x38, 0x0C], to: Self.address)
        }
        #expect(unused == 0)
        // Same address again: no second I2C_SLAVE (the real ioctl on /dev/null would fail).
        try bus.write([0x3C], to: Self.address)
    }

    @Test("a changed address issues I2C_SLAVE again")
    func addressChangeReselects() throws {
        var bus = try nullBus([.plainI2C])
        _ = try Syscall.withScript([.succeed(0), .passThrough]) { try bus.write([0x08], to: Self.address) }
        let error = thrownError { try bus.write([0x08], to: I2CAddress(0x3F)!) }
        #expect(error?.kind == .unsupported)  // ENOTTY from /dev/null: the ioctl really ran
        #expect(error?.operation == "I2C_SLAVE /dev/i2c-t 0x3f")
    }

    @Test("an SMBus-only adapter sends one SMBus send-byte per byte")
    func smbusFallback() throws {
        var bus = try nullBus([.smbusQuick, .smbusReadByte, .smbusWriteByte])
        #expect(!bus.supportsMultiByteWrite)
        // I2C_SLAVE + exactly three i2c_smbus_write_byte calls; a fourth real call would fail on /dev/null.
        let (_, unused) = try Syscall.withScript([.succeed(0), .succeed(0), .succeed(0), .succeed(0)]) {
            try bus.write([0x3C, 0x38, 0x0C], to: Self.address)
        }
        #expect(unused == 0)
    }

    @Test("a write nobody acknowledges is noDevice", arguments: [ENXIO, EREMOTEIO])
    func writeWithoutDevice(errno: Int32) throws {
        var bus = try nullBus([.plainI2C])
        let (error, _) = Syscall.withScript([.succeed(0), .fail(errno)]) {
            thrownError { try bus.write([0x08], to: Self.address) }
        }
        #expect(error == HALError(.noDevice, operation: "write /dev/i2c-t 0x27", errno: errno))
    }

    @Test("a short write is an I/O error")
    func shortWrite() throws {
        var bus = try nullBus([.plainI2C])
        let (error, _) = Syscall.withScript([.succeed(0), .succeed(1)]) {
            thrownError { try bus.write([0x08, 0x0C], to: Self.address) }
        }
        #expect(error?.kind == .io)
    }

    @Test(
        "probe answers true, false for no device, and throws other faults",
        arguments: [
            (Syscall.Outcome.succeed(0xFF), Bool?.some(true)),
            (.fail(ENXIO), .some(false)),
            (.fail(EREMOTEIO), .some(false)),
            (.fail(ENODEV), .some(false)),  // i2c-stub's answer for an absent address
            (.fail(EIO), nil),
            (.fail(ETIMEDOUT), nil),
        ])
    func probe(outcome: Syscall.Outcome, expected: Bool?) throws {
        var bus = try nullBus([.smbusQuick, .smbusReadByte, .smbusWriteByte])
        var answer: Bool?
        let (error, unused) = Syscall.withScript([.succeed(0), outcome]) {
            thrownError { answer = try bus.probe(Self.address) }
        }
        #expect(answer == expected)
        #expect((error != nil) == (expected == nil))
        #expect(unused == 0)
    }
}

@Suite("backpack address probing")
struct AddressProbeTests {
    @Test("the PCF8574 and PCF8574A ranges are scanned in order")
    func scannedRanges() throws {
        var bus = FakeProbeBus(responders: [])
        _ = try probeBackpackAddress(on: &bus)
        #expect(bus.probed == Array(0x20...0x27) + Array(0x38...0x3F))
    }

    @Test(
        "zero, one and two responders",
        arguments: [
            ([UInt8](), ProbeResult.none),
            ([0x27], .single(I2CAddress(0x27)!)),
            ([0x3F], .single(I2CAddress(0x3F)!)),
            ([0x3F, 0x27], .several([I2CAddress(0x27)!, I2CAddress(0x3F)!])),
            ([0x50, 0x27], .single(I2CAddress(0x27)!)),
        ])
    func responders(responders: [UInt8], expected: ProbeResult) throws {
        var bus = FakeProbeBus(responders: Set(responders))
        #expect(try probeBackpackAddress(on: &bus) == expected)
    }

    @Test("an address claimed by a kernel driver is reported apart, not as an answer")
    func claimedAddress() throws {
        var bus = FakeProbeBus(responders: [0x27], claimed: [0x20])
        let scan = try scanAddresses(PCF8574AddressRange.all, on: &bus)
        #expect(scan.answered == [I2CAddress(0x27)!])
        #expect(scan.claimed == [I2CAddress(0x20)!])
    }

    @Test("a permission error stops the scan")
    func permissionStops() {
        var bus = FakeProbeBus(responders: [0x27], failure: HALError(.permission, operation: "open /dev/i2c-1", errno: EACCES))
        let error = thrownError { _ = try probeBackpackAddress(on: &bus) }
        #expect(error?.kind == .permission)
        #expect(bus.probed == [0x20])
    }
}
