import HAL
import HALMock
import Testing

@Suite("HD44780 emulator: decoding")
struct HD44780DecodingTests {
    @Test("at power-on the module is in 8-bit mode, not initialised, display off, backlight on")
    func powerOnState() {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        #expect(!lcd.isFourBitMode)
        #expect(!lcd.isInitialized)
        #expect(!lcd.displayOn)
        #expect(lcd.backlight)
        #expect(lcd.screen == [blank(16), blank(16)])
        #expect(lcd.violations.isEmpty)
    }

    @Test(
        "the init dance gives 4-bit mode, a blank screen with the display on, and no violations",
        arguments: [(16, 2), (20, 4), (40, 2), (8, 1)])
    func initDance(columns: Int, rows: Int) {
        let (lcd, _) = initializedLCD(columns: columns, rows: rows)
        #expect(lcd.isFourBitMode)
        #expect(lcd.isInitialized)
        #expect(lcd.displayOn)
        #expect(lcd.twoLineMode)
        #expect(lcd.screen == Array(repeating: blank(columns), count: rows))
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("without clear display the power-on garbage stays visible")
    func garbageWithoutClear() {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        var feeder = Feeder(lcd)
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.milliseconds(5))
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.microseconds(150))
        feeder.send(pulse(Code.eightBitNibble))
        feeder.send(pulse(Code.fourBitNibble))
        feeder.command(Code.functionSet4Bit2Lines)
        feeder.command(Code.displayOn)
        #expect(lcd.screen[0] == String(repeating: "█", count: 16))
    }

    @Test("\"Hello\" written at the second row's DDRAM address 0x40 shows on row 1")
    func helloOnSecondRow() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.write("Hello", at: 0x40)
        #expect(lcd.screen == [blank(16), padded("Hello", to: 16)])
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("a 20x4 module shows DDRAM 0x00, 0x40, 0x14, 0x54 as rows 0, 1, 2, 3")
    func twentyByFourRowOrder() {
        var (lcd, feeder) = initializedLCD(columns: 20, rows: 4)
        feeder.write("row 0", at: 0x00)
        feeder.write("row 1", at: 0x40)
        feeder.write("row 2", at: 0x14)
        feeder.write("row 3", at: 0x54)
        #expect(lcd.screen == ["row 0", "row 1", "row 2", "row 3"].map { padded($0, to: 20) })
    }

    @Test("on a 20x4 module, text running past column 19 of row 0 continues on row 2")
    func twentyByFourOverflow() {
        var (lcd, feeder) = initializedLCD(columns: 20, rows: 4)
        feeder.write("ABCDEFGHIJKLMNOPQRSTUV", at: 0x00)
        #expect(lcd.screen[0] == "ABCDEFGHIJKLMNOPQRST")
        #expect(lcd.screen[2] == padded("UV", to: 20))
        #expect(lcd.screen[1] == blank(20))
    }

    @Test("in 2-line mode the address counter runs 0x27 -> 0x40 and 0x67 -> 0x00")
    func twoLineWrap() {
        var (lcd, feeder) = initializedLCD(columns: 40, rows: 2)
        feeder.write("XY", at: 0x27)
        #expect(lcd.ddramCode(at: 0x27) == UInt8(ascii: "X"))
        #expect(lcd.ddramCode(at: 0x40) == UInt8(ascii: "Y"))
        feeder.write("VW", at: 0x67)
        #expect(lcd.ddramCode(at: 0x00) == UInt8(ascii: "W"))
        #expect(lcd.addressCounter == 0x01)
        #expect(lcd.screen[0] == "W" + blank(38) + "X")
        #expect(lcd.screen[1] == "Y" + blank(38) + "V")
    }

    @Test("in 1-line mode the address counter runs 0x4F -> 0x00")
    func oneLineWrap() {
        var (lcd, feeder) = initializedLCD(columns: 8, rows: 1, twoLines: false)
        #expect(!lcd.twoLineMode)
        feeder.write("AB", at: 0x4F)
        #expect(lcd.ddramCode(at: 0x4F) == UInt8(ascii: "A"))
        #expect(lcd.ddramCode(at: 0x00) == UInt8(ascii: "B"))
        #expect(lcd.screen == [padded("B", to: 8)])
    }

    @Test("in 1-line mode only the first row of a 2-row module is driven")
    func oneLineModeOnTwoRows() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2, twoLines: false)
        feeder.write("top", at: 0x00)
        #expect(lcd.screen == [padded("top", to: 16), blank(16)])
    }

    @Test("entry mode decrement writes leftwards")
    func decrement() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.command(Code.entryDecrement)
        feeder.write("abc", at: 0x05)
        #expect(lcd.screen[0] == padded("   cba", to: 16))
        #expect(lcd.addressCounter == 0x02)
    }

    @Test("decrementing runs the 2-line address ring backwards: 0x40 -> 0x27 and 0x00 -> 0x67")
    func decrementWrap() {
        var (lcd, feeder) = initializedLCD(columns: 40, rows: 2)
        feeder.command(Code.entryDecrement)
        feeder.write("ab", at: 0x40)
        #expect(lcd.ddramCode(at: 0x40) == UInt8(ascii: "a"))
        #expect(lcd.ddramCode(at: 0x27) == UInt8(ascii: "b"))
        feeder.write("cd", at: 0x00)
        #expect(lcd.ddramCode(at: 0x67) == UInt8(ascii: "d"))
        #expect(lcd.addressCounter == 0x66)
    }

    @Test("entry mode with shift moves the display left on each write, keeping the cursor column")
    func entryShift() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.command(Code.entryIncrementShift)
        feeder.write("ab", at: 0x10)  // just right of the visible 16 columns
        #expect(lcd.displayShift == 2)
        #expect(lcd.screen[0] == blank(14) + "ab")
    }

    @Test("display shift left and right move the window over DDRAM; return home undoes it")
    func displayShift() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.write("0123456789ABCDEFGH", at: 0x00)
        feeder.write("line2", at: 0x40)
        feeder.command(Code.displayShiftLeft)
        #expect(lcd.screen == ["123456789ABCDEFG", padded("ine2", to: 16)])
        feeder.command(Code.displayShiftRight)
        feeder.command(Code.displayShiftRight)
        // Shifted right by one: the last cell of the 40-character line comes round to column 0.
        #expect(lcd.screen[0] == " 0123456789ABCDE")
        feeder.command(Code.returnHome)
        #expect(lcd.displayShift == 0)
        #expect(lcd.addressCounter == 0)
        #expect(lcd.screen[0] == "0123456789ABCDEF")
    }

    @Test("cursor shift right moves the address counter without writing")
    func cursorShift() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.command(Code.setDDRAMAddress | 0x03)
        feeder.command(Code.cursorRight)
        feeder.send(text("x"))
        #expect(lcd.screen[0] == padded("    x", to: 16))
    }

    @Test("clear display blanks DDRAM, homes the address counter and restores increment mode")
    func clear() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.command(Code.entryDecrement)
        feeder.write("junk", at: 0x44)
        feeder.command(Code.clearDisplay)
        #expect(lcd.screen == [blank(16), blank(16)])
        #expect(lcd.addressCounter == 0)
        #expect(lcd.incrementMode)
        feeder.send(text("ok"))
        #expect(lcd.screen[0] == padded("ok", to: 16))
    }

    @Test("display off shows nothing but keeps DDRAM; display on shows it again")
    func displayOff() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.write("kept", at: 0x00)
        feeder.command(Code.displayOff)
        #expect(!lcd.displayOn)
        #expect(lcd.screen == [blank(16), blank(16)])
        feeder.command(Code.displayOn)
        #expect(lcd.screen[0] == padded("kept", to: 16))
    }

    @Test(
        "the backlight follows P3 of every port byte",
        arguments: [
            (UInt8(0x00), false), (0x08, true), (0xF7, false), (0xFF, true), (0x0C, true),
        ])
    func backlightBit(port: UInt8, on: Bool) {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        lcd.receive(0x00, at: .origin + .milliseconds(50))  // the first byte after power-on
        lcd.receive(port, at: .origin + .milliseconds(51))
        #expect(lcd.backlight == on)
    }

    @Test("data sent with the backlight bit clear turns the backlight off without changing the text")
    func backlightOffDuringText() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.send(fourBit(Code.setDDRAMAddress, backlight: false))
        feeder.send(fourBit(UInt8(ascii: "A"), rs: true, backlight: false))
        #expect(!lcd.backlight)
        #expect(lcd.screen[0] == padded("A", to: 16))
    }

    @Test("CGRAM writes define a glyph, shown by its code and mirrored at code + 8")
    func cgramGlyph() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        let bell: [UInt8] = [0b00100, 0b01110, 0b01110, 0b01110, 0b11111, 0b00000, 0b00100, 0b00000]
        let glyphIndex: UInt8 = 2
        feeder.command(Code.setCGRAMAddress | glyphIndex * 8)
        for row in bell {
            feeder.send(fourBit(row, rs: true))
        }
        #expect(lcd.addressesCGRAM)
        #expect(lcd.glyph(2) == bell)
        #expect(lcd.glyph(10) == bell)
        #expect(lcd.glyph(3) != bell)
        // Writing CGRAM does not touch DDRAM; after set DDRAM address data goes to DDRAM again.
        #expect(lcd.screen[0] == blank(16))
        feeder.command(Code.setDDRAMAddress | 0x00)
        feeder.send(fourBit(glyphIndex, rs: true) + fourBit(glyphIndex + 8, rs: true))
        #expect(lcd.screen[0] == padded("②②", to: 16))
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test(
        "character codes render through the A00 ROM table",
        arguments: [
            (UInt8(0x20), Character(" ")), (0x41, "A"), (0x7A, "z"), (0x7D, "}"), (0x5C, "¥"),
            (0x7E, "→"), (0x7F, "←"), (0x00, "⓪"), (0x07, "⑦"), (0x0F, "⑦"), (0x10, "?"),
            (0x80, "?"), (0xDF, "°"), (0xFF, "█"), (0xB1, "?"),
        ])
    func characterTable(code: UInt8, expected: Character) {
        #expect(EmulatedROM.character(for: code) == expected)
        var (lcd, feeder) = initializedLCD(columns: 8, rows: 1)
        feeder.send(fourBit(code, rs: true))
        #expect(lcd.screen == [String(expected) + blank(7)])
    }

    @Test("a port byte that does not drop E latches nothing")
    func noFallingEdgeNoLatch() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        let a = UInt8(ascii: "A")
        // E stays low while the data lines change, then E rises and stays high.
        feeder.send([a & 0xF0 | Port.rs | Port.backlight, a << 4 | Port.rs | Port.backlight | Port.e])
        #expect(lcd.screen[0] == blank(16))
        #expect(lcd.violations.isEmpty)
    }

    @Test("the init dance brings a module out of nibble step: the next text shows correctly")
    func resyncFromHalfByte() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.send(pulse(0x4, rs: true))  // a lost half byte: the controller now waits for a low nibble
        feeder.wait(.milliseconds(5))
        lcd.clearViolations()
        feeder.initialize()
        feeder.write("again", at: 0x00)
        #expect(lcd.screen[0] == padded("again", to: 16))
        #expect(lcd.isInitialized)
        // Only the completion of the lost byte by the first 0x3 is a mistake the chip could see.
        #expect(lcd.violations.allSatisfy { $0.kind == .nibbleDesync }, "\(lcd.violations)")
    }

    @Test("repeating the init dance while in step re-initialises without violations")
    func reinitInStep() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.write("before", at: 0x00)
        feeder.wait(.milliseconds(1))
        feeder.initialize()
        feeder.write("after", at: 0x40)
        #expect(lcd.screen == [blank(16), padded("after", to: 16)])
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("a power cycle returns to 8-bit mode with the display off, and needs the init dance again")
    func powerCycle() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.write("Hi", at: 0x00)
        lcd.powerCycle(at: feeder.time)
        #expect(!lcd.isFourBitMode)
        #expect(!lcd.isInitialized)
        #expect(!lcd.displayOn)
        #expect(lcd.backlight)
        #expect(lcd.screen == [blank(16), blank(16)])
        #expect(lcd.poweredOnAt == feeder.time)
        feeder.wait(.milliseconds(45))
        feeder.initialize()
        #expect(lcd.screen == [blank(16), blank(16)])
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("powerCycle() without a time uses the emulator's clock")
    func powerCycleWithClock() {
        let clock = ManualClock(.origin + .seconds(3))
        let lcd = HD44780Emulator(columns: 16, rows: 2, clock: clock)
        #expect(lcd.poweredOnAt == clock.now())
        clock.advance(by: .seconds(2))
        lcd.powerCycle()
        #expect(lcd.poweredOnAt == .origin + .seconds(5))
    }
}

@Suite("Expander wiring")
struct ExpanderWiringTests {
    @Test(
        "the common wiring's port bytes match the hand-computed ones",
        arguments: [
            (UInt8(0x3), false, true, true, UInt8(0x3C)),
            (0x3, false, false, true, 0x38),
            (0x4, true, true, true, 0x4D),
            (0x1, true, false, false, 0x11),
            (0x0, false, false, true, 0x08),
        ])
    func commonPortBytes(nibble: UInt8, rs: Bool, e: Bool, backlight: Bool, expected: UInt8) {
        #expect(ExpanderWiring.common.port(nibble: nibble, rs: rs, e: e, backlight: backlight) == expected)
        #expect(pulse(nibble, rs: rs, backlight: backlight)[e ? 1 : 2] == expected)
    }

    @Test("an emulator with another wiring decodes bytes laid out for that wiring")
    func otherWiring() {
        // A board with the data on P0-P3 and the controls on P4-P7, backlight active low.
        let wiring = ExpanderWiring(rs: 4, rw: 5, e: 6, backlight: 7, d4: 0, d5: 1, d6: 2, d7: 3, backlightActiveHigh: false)
        let lcd = HD44780Emulator(columns: 16, rows: 2, wiring: wiring)
        var time = Instant.origin + .milliseconds(50)
        func nibble(_ value: UInt8, rs: Bool = false, wait: TimeSpan = .microseconds(100)) {
            // Backlight on = P7 low; data in the low nibble; RS = P4, E = P6.
            let level = value | (rs ? 0x10 : 0)
            time = time + wait
            lcd.receive(level, at: time)  // RS set up with E low (tAS)
            time = time + .microseconds(90)
            lcd.receive(level | 0x40, at: time)
            time = time + .microseconds(90)
            lcd.receive(level, at: time)
        }
        func byte(_ value: UInt8, rs: Bool = false) {
            nibble(value >> 4, rs: rs)
            nibble(value & 0x0F, rs: rs)
        }
        nibble(Code.eightBitNibble)
        nibble(Code.eightBitNibble, wait: .milliseconds(5))
        nibble(Code.eightBitNibble)
        nibble(Code.fourBitNibble)
        byte(Code.functionSet4Bit2Lines)
        byte(Code.displayOn)
        byte(Code.clearDisplay)
        time = time + .milliseconds(2)
        byte(Code.entryIncrement)
        byte(UInt8(ascii: "O"), rs: true)
        byte(UInt8(ascii: "k"), rs: true)
        #expect(lcd.backlight)
        #expect(lcd.screen == [padded("Ok", to: 16), blank(16)])
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("two signals on one port bit is a wiring bug (crashes)")
    func duplicateBitCrashes() async {
        await #expect(processExitsWith: .failure) {
            _ = ExpanderWiring(rs: 0, rw: 0, e: 2, backlight: 3, d4: 4, d5: 5, d6: 6, d7: 7)
        }
    }
}
