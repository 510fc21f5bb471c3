import CharacterLCD
import HAL
import Testing

/// A driver on a recording port, initialized, with the init traffic cleared from the trace.
func initializedPortLCD(_ geometry: LCDGeometry = .lcd16x2) throws -> (HD44780<RecordingPort, RecordingDelay>, Trace) {
    var (lcd, trace) = portLCD(geometry)
    try lcd.initialize()
    trace.clear()
    return (lcd, trace)
}

struct HD44780RenderTests {
    @Test("text on the first row after initialize needs no address: the counter is at 0")
    func firstRowNoAddress() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Hi"))
        #expect(trace.lines == [dataBytes("Hi")])
    }

    @Test("text on the second row starts with one set-DDRAM-address 0x40")
    func secondRowAddress() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("", "Hi"))
        #expect(trace.lines == ["IC0 " + dataBytes("Hi")])
    }

    @Test("rendering the same frame again sends nothing")
    func identicalFrame() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Verification", "Send code"))
        trace.clear()
        try lcd.render(frame("Verification", "Send code"))
        try lcd.render(frame("Verification    ", "Send code       "))  // explicit padding is the same frame
        #expect(trace.events.isEmpty)
    }

    @Test("a blank frame right after initialize sends nothing")
    func blankAfterInit() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render([])
        try lcd.render(frame("", "   "))
        #expect(trace.events.isEmpty)
    }

    @Test(
        "only changed cells are written, with an address only where the counter is elsewhere",
        arguments: [
            ("abcdef", "aXcYef", "I81 D58 D63 D59"),  // 1-cell gap: rewrite 'c' instead of an address
            ("abcdef", "aXcdYf", "I81 D58 I84 D59"),  // 2-cell gap: an address is cheaper
            ("abcdef", "abcdefG", "D47"),  // the counter already points at column 6
            ("abcdef", "abcdef G", "D20 D47"),  // a blank 1-cell gap at the counter is rewritten
            ("abcdef", "abcdef  G", "I88 D47"),
            ("abcdef", "abcdeZ", "I85 D5A"),  // the counter is one past the change: no way back
            ("abcdef", "Abcdef", "I80 D41"),
            ("abcdef", "", "I80 D20 D20 D20 D20 D20 D20"),  // shorter rows are padded with spaces
        ])
    func diffing(before: String, after: String, expected: String) throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame(before))
        #expect(trace.lines == [dataBytes(before)])
        trace.clear()
        try lcd.render(frame(after))
        #expect(trace.lines == [expected])
    }

    @Test("changed cells are written starting where the address counter points")
    func startsAtCounter() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("abc", "Resend (60)"))  // leaves the counter at 0x4B
        trace.clear()
        try lcd.render(frame("Xbc", "Resend (60)!"))
        #expect(trace.lines == ["D21 I80 D58"])
    }

    @Test("countdown ticks write the changed digits after one address")
    func ticks() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("Code sent", "Resend (60)"))
        trace.clear()
        try lcd.render(frame("Code sent", "Resend (59)"))
        try lcd.render(frame("Code sent", "Resend (58)"))
        try lcd.render(frame("Code sent", "Resend (57)"))
        #expect(trace.lines == ["IC8 D35 D39", "IC9 D38", "IC9 D37"])
    }

    @Test("a full 20x4 repaint needs no address: the counter walks rows 0, 2, 1, 3 (0x27 is followed by 0x40)")
    func fullRepaint20x4() throws {
        var (lcd, trace) = try initializedPortLCD(.lcd20x4)
        let rows = ["row zero ..........0", "row one ...........1", "row two ...........2", "row three .........3"]
        try lcd.render(rows.map { Array($0.utf8) })
        let expected = [dataBytes(rows[0]), dataBytes(rows[2]), dataBytes(rows[1]), dataBytes(rows[3])]
        #expect(trace.lines == [expected.joined(separator: " ")])
        #expect(lcd.shadowFrame == rows.map { Array($0.utf8) })
    }

    @Test("a full 40x2 repaint needs no address: the counter jumps from 0x27 to 0x40")
    func fullRepaint40x2() throws {
        var (lcd, trace) = try initializedPortLCD(.lcd40x2)
        let rows = [String(repeating: "a", count: 40), String(repeating: "b", count: 40)]
        try lcd.render(rows.map { Array($0.utf8) })
        #expect(trace.lines == [dataBytes(rows[0] + rows[1])])
    }

    @Test("on an 8x1 in 1-line mode a change behind the counter needs an address")
    func oneLine() throws {
        var (lcd, trace) = try initializedPortLCD(.lcd8x1)
        try lcd.render(frame("12345678"))
        try lcd.render(frame("X2345678"))
        #expect(trace.lines == [dataBytes("12345678"), "I80 D58"])
    }

    @Test("codes 0...7 in a frame go out raw and show the CGRAM glyphs")
    func glyphCodes() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render([[0, 1, 7]])
        #expect(trace.lines == ["D00 D01 D07"])
    }

    @Test("the shadow frame is the rendered frame padded with spaces")
    func shadowFrame() throws {
        var (lcd, _) = try initializedPortLCD()
        try lcd.render(frame("Hi"))
        let blankRow = [UInt8](repeating: 0x20, count: 16)
        #expect(lcd.shadowFrame == [Array("Hi".utf8) + [UInt8](repeating: 0x20, count: 14), blankRow])
    }

    @Test("render on a display never initialized initializes first, then paints")
    func renderInitializes() throws {
        var (lcd, trace) = portLCD()
        try lcd.render(frame("Hi"))
        #expect(lcd.isInitialized)
        #expect(trace.lines.filter { $0.hasPrefix("nibble") } == ["nibble 3", "nibble 3", "nibble 3", "nibble 2"])
        #expect(trace.portWrites == ["I28 I08 I01", "I06 I0C", dataBytes("Hi")])
    }

    @Test("defining a glyph on a running display uploads it and restores the DDRAM address")
    func defineGlyphRestoresAddress() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.render(frame("", "ab"))  // counter at 0x42
        trace.clear()
        try lcd.defineGlyph(1, rows: [0x04, 0x0E, 0x1F, 0x04, 0x04, 0x04, 0x04, 0x00])
        #expect(trace.lines == ["I48 D04 D0E D1F D04 D04 D04 D04 D00 IC2"])
        trace.clear()
        try lcd.defineGlyph(1, rows: [0x04, 0x0E, 0x1F, 0x04, 0x04, 0x04, 0x04, 0x00])
        #expect(trace.events.isEmpty)  // the same rows: already in CGRAM
        try lcd.defineGlyph(1, rows: [0, 0, 0, 0, 0, 0, 0, 0x1F])
        try lcd.render(frame("", "abc"))  // the counter was restored: no address needed
        #expect(trace.lines == ["I48 D00 D00 D00 D00 D00 D00 D00 D1F IC2", "D63"])
    }

    @Test("setBacklight goes to the port")
    func backlight() throws {
        var (lcd, trace) = try initializedPortLCD()
        try lcd.setBacklight(false)
        try lcd.setBacklight(true)
        #expect(trace.lines == ["backlight off", "backlight on"])
    }
}
