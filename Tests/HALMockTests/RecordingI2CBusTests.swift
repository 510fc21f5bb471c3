import HAL
import HALMock
import Testing

/// A device that remembers what arrived when.
final class ByteLog: I2CDevice {
    var received: [(byte: UInt8, time: Instant)] = []
    var acknowledges = true

    func receive(_ byte: UInt8, at time: Instant) {
        received.append((byte: byte, time: time))
    }

    func acknowledgesProbe() -> Bool { acknowledges }
}

let lcdAddress = I2CAddress(0x27)!
let otherAddress = I2CAddress(0x3F)!

/// A 16x2 emulator at `lcdAddress` on a recording bus (blocking or not) whose clock starts at 50 ms;
/// the emulator initialised directly, then, 1 ms after the init, a clear display written through
/// the bus.
private func clearDisplayThroughBus(blocking: Bool) throws -> (clock: ManualClock, bus: RecordingI2CBus, lcd: HD44780Emulator) {
    let clock = ManualClock(.origin + .milliseconds(50))
    let bus = blocking ? RecordingI2CBus(clock: clock, blocking: true) : RecordingI2CBus(clock: clock)
    let lcd = HD44780Emulator(columns: 16, rows: 2)
    bus.attach(lcd, at: lcdAddress)
    var feeder = Feeder(lcd)
    feeder.initialize()
    clock.set(to: feeder.time + .milliseconds(1))
    try bus.write(fourBit(Code.clearDisplay), to: lcdAddress)
    return (clock, bus, lcd)
}

@Suite("Recording I2C bus")
struct RecordingI2CBusTests {
    @Test("the trace reads \"i2c 0x27 <- 3C 38\" per transaction")
    func traceText() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: lcdAddress)
        bus.attach(ByteLog(), at: otherAddress)
        try bus.write([0x3C, 0x38], to: lcdAddress)
        try bus.write([0x08], to: otherAddress)
        #expect(bus.trace == ["i2c 0x27 <- 3C 38", "i2c 0x3F <- 08"])
    }

    @Test(
        "wire bytes count one address byte plus the data bytes per transaction",
        arguments: [
            ([[UInt8]](), 0),
            ([[0x08]], 2),
            ([[0x3C, 0x38, 0x8C, 0x88]], 5),
            ([[0x3C], [0x38], [0x8C], [0x88]], 8),
        ])
    func wireByteCount(writes: [[UInt8]], expected: Int) throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: lcdAddress)
        for bytes in writes {
            try bus.write(bytes, to: lcdAddress)
        }
        #expect(bus.wireBytes == expected)
        #expect(bus.transactions.count == writes.count)
    }

    @Test("data byte i reaches the device at start + (i + 1) * 90 us")
    func perByteTiming() throws {
        let clock = ManualClock(.origin + .milliseconds(7))
        let bus = RecordingI2CBus(clock: clock)
        let device = ByteLog()
        bus.attach(device, at: lcdAddress)
        try bus.write([0xA0, 0xA1, 0xA2], to: lcdAddress)
        let start = Instant.origin + .milliseconds(7)
        #expect(bus.transactions.first?.time == start)
        #expect(device.received.map(\.byte) == [0xA0, 0xA1, 0xA2])
        #expect(device.received.map(\.time) == [90, 180, 270].map { start + .microseconds($0) })
        #expect(bus.wireFreeAt == start + .microseconds(360))
        #expect(clock.now() == start, "the bus never moves the clock")
    }

    @Test("a write issued while the wire is still busy starts when the previous one ends")
    func transactionsDoNotOverlap() throws {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, byteTime: .microseconds(10))
        let device = ByteLog()
        bus.attach(device, at: lcdAddress)
        try bus.write([1, 2], to: lcdAddress)  // 0 ... 30 us on the wire
        try bus.write([3], to: lcdAddress)  // starts at 30 us
        clock.advance(by: .milliseconds(1))
        try bus.write([4], to: lcdAddress)  // the wire is idle: starts now
        #expect(bus.transactions.map(\.time) == [.origin, .origin + .microseconds(30), .origin + .milliseconds(1)])
        #expect(device.received.map(\.time) == [10, 20, 40, 1_010].map { .origin + .microseconds($0) })
    }

    @Test("a blocking bus advances its manual clock to the end of each transaction, failed ones included")
    func blockingBus() throws {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let device = ByteLog()
        bus.attach(device, at: lcdAddress)
        try bus.write([1, 2, 3], to: lcdAddress)
        #expect(clock.now() == .origin + .microseconds(360))
        try bus.write([4], to: lcdAddress)
        #expect(clock.now() == .origin + .microseconds(540))
        #expect(device.received.map(\.time) == [90, 180, 270, 450].map { .origin + .microseconds($0) })
        bus.failNext(1)
        #expect(throws: HALError.self) { try bus.write([5], to: lcdAddress) }
        #expect(clock.now() == .origin + .microseconds(630))
    }

    @Test("writing to an address with no device throws noDevice and delivers nothing")
    func noDevice() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: otherAddress)
        #expect(throws: HALError(.noDevice, operation: "write i2c 0x27", errno: 0)) {
            try bus.write([0x08], to: lcdAddress)
        }
        #expect(bus.transactions.map(\.failure) == [.noDevice])
        #expect(bus.trace == ["i2c 0x27 <- 08 FAILED(noDevice)"])
        #expect(bus.wireBytes == 0)
    }

    @Test("a detached device is gone: writes throw noDevice and probes say no")
    func detach() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: lcdAddress)
        #expect(try bus.probe(lcdAddress))
        bus.detach(at: lcdAddress)
        #expect(try !bus.probe(lcdAddress))
        #expect(throws: HALError(.noDevice, operation: "write i2c 0x27")) {
            try bus.write([0x08], to: lcdAddress)
        }
    }

    @Test("probe is true only for an attached device that acknowledges")
    func probe() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        let silent = ByteLog()
        silent.acknowledges = false
        bus.attach(ByteLog(), at: lcdAddress)
        bus.attach(silent, at: otherAddress)
        #expect(try bus.probe(lcdAddress))
        #expect(try !bus.probe(otherAddress))
        #expect(try !bus.probe(I2CAddress(0x20)!))
        #expect(bus.probes.map(\.acknowledged) == [true, false, false])
        #expect(bus.transactions.isEmpty)
    }

    @Test(
        "fail the next N: N writes throw the injected kind, deliver nothing, then writes succeed",
        arguments: [(2, HALError.Kind.injected), (1, .io), (3, .timeout)])
    func failNext(count: Int, kind: HALError.Kind) throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        let device = ByteLog()
        bus.attach(device, at: lcdAddress)
        bus.failNext(count, with: kind)
        for _ in 0..<count {
            #expect(throws: HALError(kind, operation: "write i2c 0x27", errno: 0)) {
                try bus.write([0x11], to: lcdAddress)
            }
        }
        try bus.write([0x22], to: lcdAddress)
        #expect(device.received.map(\.byte) == [0x22])
        #expect(bus.transactions.filter(\.failed).count == count)
        #expect(bus.wireBytes == 2)
    }

    @Test("failNext defaults to the injected kind")
    func failNextDefault() {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: lcdAddress)
        bus.failNext(1)
        #expect(throws: HALError(.injected, operation: "write i2c 0x27")) {
            try bus.write([0x11], to: lcdAddress)
        }
    }

    @Test(
        "a failure window [from, to) fails writes that start inside it only",
        arguments: [
            (Int64(999), false), (1_000, true), (1_500, true), (1_999, true), (2_000, false),
        ])
    func failureWindow(startMicroseconds: Int64, fails: Bool) {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock)
        bus.attach(ByteLog(), at: lcdAddress)
        bus.fail(from: .origin + .microseconds(1_000), to: .origin + .microseconds(2_000), with: .io)
        clock.set(to: .origin + .microseconds(startMicroseconds))
        var thrown: HALError?
        do {
            try bus.write([0x08], to: lcdAddress)
        } catch {
            thrown = error
        }
        #expect(thrown == (fails ? HALError(.io, operation: "write i2c 0x27") : nil))
    }

    @Test("fail always lasts until the failures are cleared")
    func failAlways() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        let device = ByteLog()
        bus.attach(device, at: lcdAddress)
        bus.failAlways()
        for _ in 0..<5 {
            #expect(throws: HALError(.injected, operation: "write i2c 0x27")) {
                try bus.write([0x08], to: lcdAddress)
            }
        }
        bus.clearFailures()
        try bus.write([0x09], to: lcdAddress)
        #expect(device.received.map(\.byte) == [0x09])
    }

    @Test("resetCounters forgets the recorded transactions but keeps the devices")
    func resetCounters() throws {
        let bus = RecordingI2CBus(clock: ManualClock())
        bus.attach(ByteLog(), at: lcdAddress)
        try bus.write([1, 2, 3], to: lcdAddress)
        bus.resetCounters()
        #expect(bus.wireBytes == 0)
        #expect(bus.trace.isEmpty)
        try bus.write([4], to: lcdAddress)
        #expect(bus.wireBytes == 2)
    }

    @Test("a bus without multi-byte writes says so")
    func smbusOnly() throws {
        let bus = RecordingI2CBus(clock: ManualClock(), supportsMultiByteWrite: false)
        bus.attach(ByteLog(), at: lcdAddress)
        #expect(!bus.supportsMultiByteWrite)
        try bus.write([0x08], to: lcdAddress)
        #expect(bus.wireBytes == 2)
    }

    @Test("a multi-byte write on a bus without multi-byte writes is a caller bug (crashes)")
    func multiByteOnSMBusCrashes() async {
        await #expect(processExitsWith: .failure) {
            let bus = RecordingI2CBus(clock: ManualClock(), supportsMultiByteWrite: false)
            bus.attach(ByteLog(), at: I2CAddress(0x27)!)
            try? bus.write([0x08, 0x0C], to: I2CAddress(0x27)!)
        }
    }

    @Test("the emulator behind the bus sees a paced init, driven with one byte per transaction, as clean")
    func emulatorBehindBus() throws {
        let clock = ManualClock(.origin + .milliseconds(50))
        let bus = RecordingI2CBus(clock: clock, supportsMultiByteWrite: false, blocking: true)
        let lcd = HD44780Emulator(columns: 16, rows: 2, poweredOnAt: .origin)
        bus.attach(lcd, at: lcdAddress)
        func send(_ bytes: [UInt8]) throws {
            for byte in bytes {
                try bus.write([byte], to: lcdAddress)
            }
        }
        try send(pulse(Code.eightBitNibble))
        clock.advance(by: .microseconds(4_100))
        try send(pulse(Code.eightBitNibble))
        clock.advance(by: .microseconds(100))
        try send(pulse(Code.eightBitNibble) + pulse(Code.fourBitNibble))
        try send(fourBit(Code.functionSet4Bit2Lines) + fourBit(Code.displayOn) + fourBit(Code.clearDisplay))
        clock.advance(by: .microseconds(1_520))
        try send(fourBit(Code.entryIncrement) + fourBit(Code.setDDRAMAddress | 0x40) + text("Resend (59)"))
        #expect(lcd.screen == [blank(16), padded("Resend (59)", to: 16)])
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
        // 4 dance nibbles of 3 port bytes (set-up, E high, E low); 5 instructions and 11
        // characters of 6 port bytes; each port byte its own transaction of 2 wire bytes.
        let portBytes = 4 * 3 + (5 + 11) * 6
        #expect(bus.wireBytes == 2 * portBytes)
    }

    @Test(
        "waiting exactly 1.52 ms after a clear display write is enough on a blocking bus but not on a non-blocking one",
        arguments: [(true, false), (false, true)])
    func clearWaitAndBlocking(blocking: Bool, busyReported: Bool) throws {
        let (clock, bus, lcd) = try clearDisplayThroughBus(blocking: blocking)
        clock.advance(by: .microseconds(1_520))
        try bus.write(text("x"), to: lcdAddress)
        #expect(lcd.violations.contains { $0.kind == .busy } == busyReported, "\(lcd.violations)")
    }

    @Test("a clear display followed at once by the next transaction is caught as busy")
    func busyThroughBus() throws {
        let (_, bus, lcd) = try clearDisplayThroughBus(blocking: false)
        try bus.write(text("x"), to: lcdAddress)
        #expect(lcd.violations.map(\.kind) == [.busy])
    }
}
