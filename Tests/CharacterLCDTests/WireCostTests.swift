import CharacterLCD
import HAL
import Testing

/// A 16x2 on the backpack showing `label` under "Code sent", with the init and first paint cleared
/// from the trace: the counter is left after the label's last character, as in the running device.
func busLCDShowing(_ label: String, multiByte: Bool = true) throws
    -> (HD44780<PCF8574Backpack<RecordingBus>, RecordingDelay>, Trace)
{
    var (lcd, trace) = busLCD(.lcd16x2, multiByte: multiByte)
    try lcd.initialize()
    try lcd.render(frame("Code sent", label))
    trace.clear()
    return (lcd, trace)
}

struct WireCostTests {
    @Test("a one-digit countdown tick is one transaction of 10 expander bytes: 11 wire bytes")
    func oneDigitTick() throws {
        var (lcd, trace) = try busLCDShowing("Resend (59)")
        try lcd.render(frame("Code sent", "Resend (58)"))
        // RS falls with E low (C8), set DDRAM 0x49; RS rises with E low (39), '8'. The set-up
        // bytes are the tAS floor: RS changes twice per tick.
        #expect(trace.transactions == ["C8 CC C8 9C 98 39 3D 39 8D 89"])
        #expect(trace.wireBytes == 11)
    }

    @Test(
        "countdown label changes cost one transaction of 4 expander bytes per HD44780 byte and 1 per RS change",
        arguments: [
            ("Resend (59)", "Resend (58)", 11),  // address + 1 digit, 2 RS set-ups
            ("Resend (60)", "Resend (59)", 15),  // address + 2 digits
            ("Resend (10)", "Resend (09)", 15),
            ("Resend (120)", "Resend (119)", 15),  // address + 2 digits, the hundreds stay
            ("Resend (01)", "Resend", 23),  // address + "(01)" blanked
            ("Send code", "Resend (60)", 51),  // 11 characters (the unchanged "e" rewritten) + 1 address
        ])
    func tickCosts(before: String, after: String, wireBytes: Int) throws {
        var (lcd, trace) = try busLCDShowing(before)
        try lcd.render(frame("Code sent", after))
        #expect(trace.transactions.count == 1)
        #expect(trace.wireBytes == wireBytes)
    }

    @Test("a second tick right after the first still needs its address: the counter is past the digit")
    func consecutiveTicks() throws {
        var (lcd, trace) = try busLCDShowing("Resend (60)")
        try lcd.render(frame("Code sent", "Resend (59)"))
        try lcd.render(frame("Code sent", "Resend (58)"))
        #expect(trace.transactions.map { $0.split(separator: " ").count } == [14, 10])
        #expect(trace.wireBytes == 15 + 11)
    }

    @Test("a full 16x2 repaint after initialize is one transaction")
    func fullRepaint() throws {
        var (lcd, trace) = busLCD()
        try lcd.initialize()
        trace.clear()
        try lcd.render(frame("Verification", "Send code"))
        #expect(trace.transactions.count == 1)
        // Row 1 needs one address (0x40); RS changes three times (data, address, data).
        #expect(trace.dataBytes == (12 + 1 + 9) * 4 + 3)
        trace.clear()
        try lcd.render(frame("0123456789abcdef", "ghijklmnopqrstuv"))
        #expect(trace.transactions.count == 1)
    }

    @Test("an identical frame puts nothing on the bus")
    func identicalFrame() throws {
        var (lcd, trace) = try busLCDShowing("Resend (59)")
        try lcd.render(frame("Code sent", "Resend (59)"))
        #expect(trace.events.isEmpty)
    }

    @Test("without multi-byte writes a one-digit tick is 10 one-byte transactions: 20 wire bytes")
    func perByteTick() throws {
        var (lcd, trace) = try busLCDShowing("Resend (59)", multiByte: false)
        try lcd.render(frame("Code sent", "Resend (58)"))
        #expect(trace.transactions == ["C8", "CC", "C8", "9C", "98", "39", "3D", "39", "8D", "89"])
        #expect(trace.wireBytes == 20)
    }

    @Test("with the backlight off every byte of a tick has the backlight bit clear")
    func backlightOffTick() throws {
        var (lcd, trace) = try busLCDShowing("Resend (59)")
        try lcd.setBacklight(false)
        try lcd.render(frame("Code sent", "Resend (58)"))
        // setBacklight left RS low: only the data byte needs its set-up byte.
        #expect(trace.transactions == ["00", "C4 C0 94 90 31 35 31 85 81"])
    }
}
