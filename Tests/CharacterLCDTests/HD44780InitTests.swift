import CharacterLCD
import HAL
import Testing

struct HD44780InitTests {
    @Test("initialize runs the 4-bit dance, function set, display off, clear, entry mode, display on")
    func sequence() throws {
        var (lcd, trace) = portLCD(.lcd16x2)
        try lcd.initialize()
        #expect(
            trace.lines.map { $0.hasPrefix("wait") ? "wait" : $0 } == [
                "idle",  // E, RS, R/W low: an expander powers up with all pins high
                "wait",  // power on
                "nibble 3", "wait",
                "nibble 3", "wait",
                "nibble 3", "wait",
                "nibble 2", "wait",  // now in 4-bit mode
                "I28 I08 I01", "wait",  // function set 2 lines 5x8, display off, clear
                "I06 I0C",  // entry mode increment no shift, display on
            ])
        #expect(lcd.isInitialized)
    }

    @Test(
        "initialize waits at least the datasheet minima",
        arguments: [
            (0, TimeSpan.milliseconds(40), "HD44780U fig. 24: > 40 ms after Vcc rises to 2.7 V"),
            (1, .microseconds(4_100), "HD44780U fig. 24: > 4.1 ms after the first 0x3"),
            (2, .microseconds(100), "HD44780U fig. 24: > 100 us after the second 0x3"),
            (3, .microseconds(37), "HD44780U table 6: 37 us for the third 0x3 (function set)"),
            (4, .microseconds(37), "HD44780U table 6: 37 us for 0x2 (function set)"),
            // Table 6 gives clear display no time; 1.52 ms is return home's, clear is not faster.
            (5, .microseconds(1_520), "HD44780U table 6: 1.52 ms (return home) for clear display"),
        ])
    func waits(index: Int, minimum: TimeSpan, source: String) throws {
        var (lcd, trace) = portLCD()
        try lcd.initialize()
        let waits = trace.waits
        try #require(waits.count == 6)
        #expect(waits[index] >= minimum, "\(source)")
    }

    @Test("the clear wait comes right after the write that ends with clear")
    func clearIsLastBeforeItsWait() throws {
        var (lcd, trace) = portLCD()
        try lcd.initialize()
        let clearIndex = try #require(trace.lines.firstIndex { $0.hasSuffix("I01") })
        #expect(trace.events[clearIndex + 1] == .wait(.milliseconds(2)))
    }

    @Test(
        "function set selects one display line only for 8x1",
        arguments: [
            (LCDGeometry.lcd8x1, "I20 I08 I01"), (.lcd16x2, "I28 I08 I01"),
            (.lcd20x4, "I28 I08 I01"), (.lcd40x2, "I28 I08 I01"),
        ])
    func functionSet(geometry: LCDGeometry, first: String) throws {
        var (lcd, trace) = portLCD(geometry)
        try lcd.initialize()
        #expect(trace.portWrites == [first, "I06 I0C"])
    }

    @Test("on the backpack the init dance is the expected expander bytes")
    func backpackBytes() throws {
        var (lcd, trace) = busLCD()
        try lcd.initialize()
        #expect(
            trace.transactions == [
                "08",  // idle: E, RS, R/W low, backlight on
                "3C 38", "3C 38", "3C 38", "2C 28",
                "2C 28 8C 88 0C 08 8C 88 0C 08 1C 18",  // I28 I08 I01
                "0C 08 6C 68 0C 08 CC C8",  // I06 I0C
            ])
    }

    @Test("after initialize the shadow is all spaces")
    func shadowBlank() throws {
        var (lcd, _) = portLCD(.lcd20x4)
        #expect(lcd.shadowFrame == nil)
        try lcd.initialize()
        #expect(lcd.shadowFrame == Array(repeating: Array(repeating: 0x20, count: 20), count: 4))
    }

    @Test("glyphs defined before initialize are stored, then uploaded by initialize with DDRAM restored to 0")
    func glyphsUploadedByInitialize() throws {
        var (lcd, trace) = portLCD()
        try lcd.defineGlyph(2, rows: [0x00, 0x0A, 0x1F, 0x1F, 0x0E, 0x04, 0x00, 0x00])
        try lcd.defineGlyph(0, rows: [0x1F, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1F])
        #expect(trace.events.isEmpty)
        try lcd.initialize()
        #expect(
            trace.portWrites.last
                == "I06 I40 D1F D11 D11 D11 D11 D11 D11 D1F I50 D00 D0A D1F D1F D0E D04 D00 D00 I80 I0C")
    }

    @Test("re-initializing repeats the whole dance and re-uploads CGRAM")
    func reinitialize() throws {
        var (lcd, trace) = portLCD()
        try lcd.defineGlyph(7, rows: [1, 2, 3, 4, 5, 6, 7, 8])
        try lcd.initialize()
        try lcd.render(frame("x"))
        let first = trace.lines
        trace.clear()
        try lcd.initialize()
        #expect(trace.lines == Array(first.dropLast()))  // the same, without the render
        #expect(trace.portWrites.last == "I06 I78 D01 D02 D03 D04 D05 D06 D07 D08 I80 I0C")
    }
}
