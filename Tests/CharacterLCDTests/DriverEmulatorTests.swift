import CharacterLCD
import HAL
import HALMock
import Testing

/// The driver against the independent PCF8574 + HD44780 emulator: what a person would see on the
/// glass, and what it costs on the wire.
private struct Rig {
    let clock = ManualClock()
    let bus: RecordingI2CBus
    let emulator: HD44780Emulator
    var lcd: HD44780<PCF8574Backpack<RecordingI2CBus>, VirtualDelay>
    static let address = I2CAddress(0x27)!

    init(_ geometry: LCDGeometry = .lcd16x2, multiByte: Bool = true) {
        bus = RecordingI2CBus(clock: clock, supportsMultiByteWrite: multiByte, blocking: true)
        emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
        bus.attach(emulator, at: Rig.address)
        lcd = HD44780(port: PCF8574Backpack(bus: bus, address: Rig.address), delay: VirtualDelay(clock: clock), geometry: geometry)
    }

    /// Renders text lines (A00 ROM), padded by the driver.
    mutating func show(_ lines: [String]) throws {
        try lcd.render(lines.map { try CharacterROM.a00.encode($0) })
    }

    func blank(_ geometry: LCDGeometry) -> [String] {
        Array(repeating: String(repeating: " ", count: geometry.columns), count: geometry.rows)
    }
}

private func padded(_ text: String, _ width: Int = 16) -> String {
    text + String(repeating: " ", count: width - text.count)
}

@Suite("HD44780 driver on the emulated LCD")
struct DriverEmulatorTests {
    @Test(
        "after init the emulated screen is blank, in 4-bit mode, display on, with no protocol violation",
        arguments: LCDGeometry.supported)
    func initLeavesBlankScreen(geometry: LCDGeometry) throws {
        var rig = Rig(geometry)
        try rig.lcd.initialize()
        #expect(rig.emulator.isFourBitMode)
        #expect(rig.emulator.isInitialized)
        #expect(rig.emulator.displayOn)
        #expect(rig.emulator.screen == rig.blank(geometry))
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("frames appear exactly as rendered")
    func framesAppear() throws {
        var rig = Rig()
        try rig.lcd.initialize()
        try rig.show(["Verification", "Send code"])
        #expect(rig.emulator.screen == [padded("Verification"), padded("Send code")])
        try rig.show(["Code sent", "Resend (60)"])
        #expect(rig.emulator.screen == [padded("Code sent"), padded("Resend (60)")])
        try rig.show(["", "Resend"])
        #expect(rig.emulator.screen == [padded(""), padded("Resend")])
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("a countdown tick that changes one digit is one I2C transaction of 11 bytes, two digits 15")
    func tickCosts() throws {
        var rig = Rig()
        try rig.lcd.initialize()
        try rig.show(["Verification", "Resend (60)"])
        rig.bus.resetCounters()
        try rig.show(["Verification", "Resend (59)"])  // two digits change
        #expect(rig.bus.transactions.count == 1)
        // 3 HD44780 bytes of 4 expander bytes, 2 RS set-up bytes (tAS), 1 address byte.
        #expect(rig.bus.wireBytes == 15)
        rig.bus.resetCounters()
        try rig.show(["Verification", "Resend (58)"])  // one digit changes
        #expect(rig.bus.transactions.count == 1)
        #expect(rig.bus.wireBytes == 11)
        #expect(rig.emulator.screen[1] == padded("Resend (58)"))
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("an unchanged frame sends nothing")
    func unchangedFrameIsFree() throws {
        var rig = Rig()
        try rig.lcd.initialize()
        try rig.show(["Verification", "Resend (42)"])
        rig.bus.resetCounters()
        try rig.show(["Verification", "Resend (42)"])
        #expect(rig.bus.transactions.isEmpty)
    }

    @Test("a full 16x2 repaint is one transaction")
    func fullRepaintIsOneTransaction() throws {
        var rig = Rig()
        try rig.lcd.initialize()
        rig.bus.resetCounters()
        try rig.show(["ABCDEFGHIJKLMNOP", "abcdefghijklmnop"])
        #expect(rig.bus.transactions.count == 1)
        // 32 data bytes + at most 2 address commands, 4 expander bytes each, at most 4 RS
        // set-up bytes, plus the address byte.
        #expect(rig.bus.wireBytes <= (32 + 2) * 4 + 4 + 1)
        #expect(rig.emulator.screen == ["ABCDEFGHIJKLMNOP", "abcdefghijklmnop"])
    }

    @Test("a 20x4 layout shows every row in its place")
    func twentyByFour() throws {
        var rig = Rig(.lcd20x4)
        try rig.lcd.initialize()
        let lines = ["Row one", "Row two: 12345678901", "Row three", "Row four ends here.."]
        try rig.show(lines)
        #expect(rig.emulator.screen == lines.map { padded(String($0.prefix(20)), 20) })
        try rig.show(["Row one", "Row two: 12345678901", "Row 3", "Row four ends here.."])
        #expect(rig.emulator.screen[2] == padded("Row 3", 20))
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("on an SMBus-only adapter every expander byte is its own transaction and the screen is the same")
    func smbusFallback() throws {
        var rig = Rig(multiByte: false)
        try rig.lcd.initialize()
        try rig.show(["Verification", "Resend (59)"])
        rig.bus.resetCounters()
        try rig.show(["Verification", "Resend (58)"])
        #expect(rig.bus.transactions.count == 10)
        #expect(rig.bus.transactions.allSatisfy { $0.bytes.count == 1 })
        #expect(rig.emulator.screen == [padded("Verification"), padded("Resend (58)")])
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }

    @Test("after a power cycle (hot-plug) a re-init and repaint restore the frame")
    func recoversAfterPowerCycle() throws {
        var rig = Rig()
        try rig.lcd.initialize()
        try rig.show(["Verification", "Resend (30)"])
        rig.clock.advance(by: .seconds(1))
        rig.emulator.powerCycle()
        rig.clock.advance(by: .milliseconds(100))
        try rig.lcd.initialize()
        try rig.show(["Verification", "Resend (29)"])
        #expect(rig.emulator.screen == [padded("Verification"), padded("Resend (29)")])
        #expect(rig.emulator.violations.isEmpty, "\(rig.emulator.violations)")
    }
}
