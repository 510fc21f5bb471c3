import CharacterLCD
import HAL
import HALMock
import Testing

/// `render(_:focus:)`: the caller's cell first, then its row, then the rest; same screen.
struct HD44780FocusTests {
    @Test("the focus cell goes first, then its row from the start, then the other rows; one write")
    func focusCellThenRowThenRest() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Wrong code", "Resend (59)"))  // leaves the counter at 0x4B
        trace.clear()
        try lcd.render(frame("Code: *_______", "Resend (58)"), focus: (row: 0, column: 6))
        #expect(
            trace.lines == [
                "I86 D2A"  // the key's cell: set-DDRAM-address 6, '*'
                    + " I80 " + dataBytes("Code:")  // its row from the start; column 5 is a space in both
                    + " I87 " + dataBytes("_______")  // column 6 is already written: jump over it
                    + " IC9 D38"  // then the rest: the label's digit
            ])
        #expect(lcd.shadowFrame == frame("Code: *_______  ", "Resend (58)     "))
    }

    @Test("without a focus the same change is written in address order from the counter, as before")
    func noFocusIsAddressOrder() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Wrong code", "Resend (59)"))
        trace.clear()
        try lcd.render(frame("Code: *_______", "Resend (58)"))
        #expect(trace.lines == ["I80 " + dataBytes("Code:") + " D20 " + dataBytes("*_______") + " IC9 D38"])
    }

    @Test("a focus on a cell that does not change costs nothing: the row's changes, then the rest")
    func unchangedFocusCell() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Code: **", "Resend (59)"))
        trace.clear()
        try lcd.render(frame("Code: **", "Resend (58)"), focus: (row: 0, column: 7))
        #expect(trace.lines == ["IC9 D38"])
    }

    @Test("on 20x4 the field's row (3) goes before the status row (2) that comes first in DDRAM")
    func fourRows() throws {
        var (lcd, trace) = try initializedPortLCD(.lcd20x4)
        try lcd.render(frame("Code sent", "Resend (50)", "Wrong code", "Code: ________"))  // counter: row 3
        trace.clear()
        try lcd.render(frame("Code sent", "Resend (49)", "Enter code", "Code: *_______"), focus: (row: 3, column: 6))
        #expect(trace.lines.first?.hasPrefix("IDA D2A ") == true)  // 0x54 + 6, '*'
        #expect(
            lcd.shadowFrame
                == frame(
                    "Code sent           ", "Resend (49)         ", "Enter code          ", "Code: *_______      "))
    }

    @Test(
        "with or without a focus the emulated glass ends the same, with no protocol violation",
        arguments: [(LCDGeometry.lcd16x2, 0, 6), (.lcd16x2, 1, 15), (.lcd20x4, 3, 6), (.lcd20x4, 2, 0), (.lcd20x4, 0, 19)])
    func sameGlass(geometry: LCDGeometry, row: Int, column: Int) throws {
        let before = ["Wrong, 2 left", "Resend (10)", "Wrong code", "Code: ________"]
        let after = ["Code: *_______", "Resend (09)", "Enter code", "Code: *_______"]
        var screens: [[String]] = []
        for focus in [nil, (row: row, column: column)] {
            let clock = ManualClock()
            let bus = RecordingI2CBus(clock: clock, blocking: true)
            let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
            let address = I2CAddress(0x27)!
            bus.attach(emulator, at: address)
            var lcd = HD44780(port: PCF8574Backpack(bus: bus, address: address), delay: VirtualDelay(clock: clock), geometry: geometry)
            try lcd.render(before.prefix(geometry.rows).map { Array($0.utf8) })
            try lcd.render(after.prefix(geometry.rows).map { Array($0.utf8) }, focus: focus)
            #expect(emulator.violations.isEmpty)
            screens.append(emulator.screen)
        }
        #expect(screens[0] == screens[1])
        #expect(screens[1].first?.hasPrefix("Code: *_______") == true)
    }
}
