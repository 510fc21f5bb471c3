import CharacterLCD
import HAL
import HALMock
import Testing

/// The driver at bus clocks above the PCF8574's rated 100 kHz: the HD44780 needs 37 us after each
/// latched byte before the next byte's E rises, and one expander byte lasts 9 SCL clocks.
@Suite("PCF8574 backpack at 100 and 400 kHz")
struct BusSpeedTests {
    /// The driver on the emulator, the bus's byte time matching the clock the backpack pads for.
    private static func rig(busClockHz: Int, multiByte: Bool = true)
        -> (HD44780<PCF8574Backpack<RecordingI2CBus>, VirtualDelay>, RecordingI2CBus, HD44780Emulator)
    {
        let clock = ManualClock()
        let bus = RecordingI2CBus(
            clock: clock, supportsMultiByteWrite: multiByte,
            byteTime: PCF8574Backpack<RecordingI2CBus>.byteTime(busClockHz: busClockHz), blocking: true)
        let emulator = HD44780Emulator(columns: 16, rows: 2, clock: clock)
        let address = I2CAddress(0x27)!
        bus.attach(emulator, at: address)
        let lcd = HD44780(
            port: PCF8574Backpack(bus: bus, address: address, busClockHz: busClockHz), delay: VirtualDelay(clock: clock),
            geometry: .lcd16x2)
        return (lcd, bus, emulator)
    }

    @Test("one expander byte lasts 9 SCL clocks: 90 us at 100 kHz, 22.5 us at 400 kHz")
    func byteTimes() {
        #expect(PCF8574Backpack<RecordingI2CBus>.byteTime(busClockHz: 100_000) == .microseconds(90))
        #expect(PCF8574Backpack<RecordingI2CBus>.byteTime(busClockHz: 400_000) == TimeSpan(nanoseconds: 22_500))
    }

    @Test(
        "a one-digit tick is 11 wire bytes at 100 and at 400 kHz: its two RS set-up bytes already give the spacing",
        arguments: [
            // set DDRAM 0x49 then '8': both need an RS set-up byte, which is also enough spacing
            // at 400 kHz (two byte times = 45 us >= 37 us).
            (100_000, 11, ["C8 CC C8 9C 98 39 3D 39 8D 89"]),
            (400_000, 11, ["C8 CC C8 9C 98 39 3D 39 8D 89"]),
        ])
    func tick(busClockHz: Int, wireBytes: Int, transactions: [String]) throws {
        var (lcd, bus, emulator) = Self.rig(busClockHz: busClockHz)
        try lcd.initialize()
        try lcd.render([Array("Code sent".utf8), Array("Resend (59)".utf8)])
        bus.resetCounters()
        try lcd.render([Array("Code sent".utf8), Array("Resend (58)".utf8)])
        #expect(bus.trace.map { String($0.dropFirst("i2c 0x27 <- ".count)) } == transactions)
        #expect(bus.wireBytes == wireBytes)
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }

    @Test(
        "consecutive data bytes: no padding at 100 kHz, one idle byte each at 400 kHz, and the emulator sees no busy violation",
        arguments: [(100_000, 0), (400_000, 1)])
    func textPadding(busClockHz: Int, padding: Int) throws {
        var (lcd, bus, emulator) = Self.rig(busClockHz: busClockHz)
        #expect(lcd.port.paddingBytesPerLCDByte == padding)
        try lcd.initialize()
        try lcd.render([Array("Verification".utf8), Array("Send code".utf8)])
        bus.resetCounters()
        try lcd.render([Array("ABCDEFGHIJKL".utf8), Array("Send code".utf8)])
        // 12 data bytes from the counter's place after "Send code": one address, RS set-ups
        // before the address and the data; padding before each data byte after the first.
        let expected = 1 + (1 + 12) * 4 + 2 + padding * 11
        #expect(bus.wireBytes == expected)
        #expect(emulator.screen == ["ABCDEFGHIJKL    ", "Send code       "])
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }

    @Test("at 400 kHz without the padding the emulator would see E rise while busy (the oracle catches it)")
    func unpaddedIsBusy() throws {
        // The backpack pads for 100 kHz while the wire runs at 400 kHz.
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, byteTime: TimeSpan(nanoseconds: 22_500), blocking: true)
        let emulator = HD44780Emulator(columns: 16, rows: 2, clock: clock)
        let address = I2CAddress(0x27)!
        bus.attach(emulator, at: address)
        var lcd = HD44780(
            port: PCF8574Backpack(bus: bus, address: address, busClockHz: 100_000), delay: VirtualDelay(clock: clock),
            geometry: .lcd16x2)
        try lcd.initialize()
        try lcd.render([Array("ABCDEFGHIJKL".utf8)])
        #expect(emulator.violations.contains { $0.kind == .busy }, "\(emulator.violations)")
    }

    @Test("on an SMBus-only adapter each byte brings its own address byte: no padding at 400 kHz")
    func perBytePadding() {
        let (lcd, _, _) = Self.rig(busClockHz: 400_000, multiByte: false)
        #expect(lcd.port.paddingBytesPerLCDByte == 0)
    }
}
