import HAL
import HALMock
import Testing

/// One protocol mistake, fed as raw port bytes, and the violation it must produce.
struct Mistake: CustomTestStringConvertible, Sendable {
    let name: String
    let expected: HD44780Emulator.Violation.Kind
    let feed: @Sendable (inout Feeder) -> Void

    var testDescription: String { name }

    static let all: [Mistake] = [
        Mistake(name: "E falls 10 ms after power-on", expected: .tooSoonAfterPowerOn) { feeder in
            feeder.time = .origin + .milliseconds(10)
            feeder.initialize()
        },
        Mistake(name: "an instruction (set DDRAM address) before the init dance", expected: .beforeInitialization) { feeder in
            feeder.send(pulse(Code.setDDRAMAddress >> 4))
        },
        Mistake(name: "data before the init dance", expected: .beforeInitialization) { feeder in
            feeder.send(pulse(0x4, rs: true))
        },
        Mistake(name: "4-bit switch without the 0x3 0x3 0x3 dance", expected: .initSequence) { feeder in
            feeder.send(pulse(Code.fourBitNibble))
            feeder.send(fourBit(Code.functionSet4Bit2Lines))
        },
        Mistake(name: "only 1 ms after the first 0x3", expected: .initWaitTooShort) { feeder in
            feeder.send(pulse(Code.eightBitNibble))
            feeder.wait(.milliseconds(1))
            feeder.send(pulse(Code.eightBitNibble))
            feeder.wait(.microseconds(150))
            feeder.send(pulse(Code.eightBitNibble))
            feeder.send(pulse(Code.fourBitNibble))
        },
        Mistake(name: "only 40 us after the second 0x3", expected: .initWaitTooShort) { feeder in
            feeder.step = .microseconds(20)
            feeder.send(pulse(Code.eightBitNibble))
            feeder.wait(.milliseconds(5))
            feeder.send(pulse(Code.eightBitNibble))
            feeder.send(pulse(Code.eightBitNibble))  // E falls 40 us after the previous fall
            feeder.wait(.microseconds(100))
            feeder.send(pulse(Code.fourBitNibble))
        },
        Mistake(name: "a byte 180 us after clear display (1.52 ms)", expected: .busy) { feeder in
            feeder.initialize()
            feeder.send(fourBit(Code.clearDisplay))
            feeder.send(fourBit(Code.setDDRAMAddress))
        },
        Mistake(name: "a byte 10 us after a data write (37 us)", expected: .busy) { feeder in
            feeder.initialize()
            feeder.step = .microseconds(5)
            feeder.send(text("AB"))
        },
        Mistake(name: "RS changes between the two nibbles of a byte", expected: .nibbleDesync) { feeder in
            feeder.initialize()
            feeder.send(pulse(0x4, rs: true) + pulse(0x1, rs: false))
        },
        Mistake(name: "R/W high (a read)", expected: .read) { feeder in
            feeder.initialize()
            feeder.send(pulse(0x0, rw: true) + pulse(0x0, rw: true))
        },
        Mistake(name: "data lines change in the write that drops E", expected: .holdTime) { feeder in
            feeder.initialize()
            feeder.send([0x40 | Port.rs | Port.backlight | Port.e, 0x00 | Port.backlight])
        },
        Mistake(name: "data after a function set back to 8 bits", expected: .beforeInitialization) { feeder in
            feeder.initialize()
            feeder.send(fourBit(0b0011_0000))  // function set, DL = 1
            feeder.send(pulse(0x4, rs: true))
        },
        Mistake(name: "set DDRAM address 0x28 in 2-line mode", expected: .invalidAddress) { feeder in
            feeder.initialize()
            feeder.send(fourBit(Code.setDDRAMAddress | 0x28))
        },
    ]
}

@Suite("HD44780 emulator: violations")
struct HD44780ViolationTests {
    @Test("each protocol mistake is reported with its kind and time", arguments: Mistake.all)
    func mistakeIsReported(_ mistake: Mistake) throws {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        var feeder = Feeder(lcd)
        mistake.feed(&feeder)
        let violation = try #require(lcd.violations.first { $0.kind == mistake.expected }, "\(lcd.violations)")
        #expect(violation.time > .origin && violation.time <= feeder.time)
        #expect(!violation.description.isEmpty)
    }

    @Test("the correct sequence, text, CGRAM and cursor moves produce no violation")
    func correctSequenceIsClean() {
        var (lcd, feeder) = initializedLCD(columns: 20, rows: 4)
        feeder.write("Verification", at: 0x00)
        feeder.write("Resend (59)", at: 0x40)
        feeder.command(Code.setCGRAMAddress)
        feeder.send((0..<8).flatMap { fourBit(UInt8($0), rs: true) })
        feeder.command(Code.cursorRight)
        feeder.command(Code.returnHome)
        feeder.command(Code.clearDisplay)
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test(
        "the busy check is exact: 37 us after a data write passes, 36 us is reported",
        arguments: [(37, false), (36, true)])
    func busyBoundary(gapMicroseconds: Int64, reported: Bool) {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        // Data 'A' then data 'B', with E of B's first nibble rising `gap` after A's second nibble
        // was latched.
        let a = text("A")
        feeder.send(a)
        // text bytes: [set-up, E high, E low (latch), set-up, E high, E low (latch)].
        let b = text("B")
        feeder.step = .zero
        feeder.send([b[0]])
        feeder.wait(.microseconds(gapMicroseconds))
        feeder.send([b[1]])
        feeder.step = .microseconds(90)
        feeder.send(Array(b[2...5]))
        #expect(lcd.violations.contains { $0.kind == .busy } == reported, "\(lcd.violations)")
        #expect(lcd.screen[0] == padded("AB", to: 16))
    }

    @Test(
        "the first wait of the init dance is exact: 4.1 ms passes, 4.099 ms is reported",
        arguments: [(4_100, false), (4_099, true)])
    func initWaitBoundary(waitMicroseconds: Int64, reported: Bool) {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        var feeder = Feeder(lcd)
        feeder.step = .zero
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.microseconds(waitMicroseconds))
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.microseconds(100))
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.microseconds(37))
        feeder.send(pulse(Code.fourBitNibble))
        #expect(lcd.violations.contains { $0.kind == .initWaitTooShort } == reported, "\(lcd.violations)")
        #expect(lcd.violations.allSatisfy { $0.kind == .initWaitTooShort })
        #expect(lcd.isFourBitMode)
    }

    @Test(
        "the power-on wait is exact: E falling at 40 ms passes, at 39.999 ms is reported",
        arguments: [(40_000, false), (39_999, true)])
    func powerOnBoundary(microseconds: Int64, reported: Bool) {
        let lcd = HD44780Emulator(columns: 16, rows: 2, poweredOnAt: .origin + .seconds(1))
        var feeder = Feeder(lcd, at: .origin + .seconds(1) + .microseconds(microseconds))
        feeder.step = .zero
        feeder.initialize()
        #expect(lcd.violations.contains { $0.kind == .tooSoonAfterPowerOn } == reported, "\(lcd.violations)")
    }

    @Test("when data changes together with E falling, the levels held while E was high are latched")
    func holdTimeLatchesHeldLevels() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        let a = UInt8(ascii: "A")
        let high = (a >> 4) << 4 | Port.rs | Port.backlight
        let low = (a & 0x0F) << 4 | Port.rs | Port.backlight
        // Each nibble: set up, E high with the data, then E low with every other line low too.
        feeder.send([high, high | Port.e, Port.backlight, low, low | Port.e, Port.backlight])
        #expect(lcd.screen[0] == padded("A", to: 16))
        #expect(lcd.violations.map(\.kind) == [.holdTime, .holdTime])
    }

    @Test("a function set back to 8 bits ends initialisation until the dance is done again")
    func backToEightBits() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.send(fourBit(0b0011_0000))  // function set, DL = 1
        #expect(!lcd.isFourBitMode)
        #expect(!lcd.isInitialized)
        feeder.wait(.milliseconds(5))
        feeder.initialize()
        #expect(lcd.isInitialized)
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("the first write after power-on does not count as an E pulse")
    func firstWriteIsNotALatch() {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        // The PCF8574 port starts all high (E high, R/W high): a write with E low must not latch a read.
        lcd.receive(Port.backlight, at: .origin + .milliseconds(1))
        #expect(lcd.violations.isEmpty)
    }
}

/// HD44780U bus timing, write operation: RS and R/W are set up (tAS, 40 ns) before E rises and
/// held while E is high. On a PCF8574 every write changes all pins at once.
struct AddressSetupTests {
    @Test("RS changing in the same port write that raises E is an address set-up violation")
    func rsWithRisingEnable() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        let a = UInt8(ascii: "A")
        let high = (a >> 4) << 4 | Port.rs | Port.backlight
        let low = (a & 0x0F) << 4 | Port.rs | Port.backlight
        // The last init byte had RS = 0: RS rises together with E.
        feeder.send([high | Port.e, high, low | Port.e, low])
        #expect(lcd.screen[0] == padded("A", to: 16))
        #expect(lcd.violations.map(\.kind) == [.addressSetup])
    }

    @Test("RS set up with E low in the write before is clean")
    func rsSetUpFirst() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.send(text("A"))
        #expect(lcd.screen[0] == padded("A", to: 16))
        #expect(lcd.violations.isEmpty, "\(lcd.violations)")
    }

    @Test("RS changing while E is high is an address set-up violation")
    func rsChangesWhileHigh() {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        let high = (UInt8(ascii: "A") >> 4) << 4 | Port.backlight
        feeder.send([high, high | Port.e, high | Port.e | Port.rs, high | Port.rs])
        #expect(lcd.violations.map(\.kind).contains(.addressSetup), "\(lcd.violations)")
    }

    @Test(
        "a first strobe straight from the PCF8574's power-on state (E = R/W = 1) is reported; an idle byte first is clean",
        arguments: [(false, true), (true, false)])
    func powerOnState(idleFirst: Bool, reported: Bool) {
        let lcd = HD44780Emulator(columns: 16, rows: 2)
        var feeder = Feeder(lcd)
        if idleFirst { feeder.send([Port.backlight]) }
        // E high with RS = R/W = 0 and the first 0x3, then E low: no rising edge after power-on
        // unless the idle byte dropped E first.
        let level = Code.eightBitNibble << 4 | Port.backlight
        feeder.send([level | Port.e, level])
        feeder.wait(.microseconds(4_500))
        feeder.send(pulse(Code.eightBitNibble))
        feeder.wait(.microseconds(150))
        feeder.send(pulse(Code.eightBitNibble) + pulse(Code.fourBitNibble))
        #expect(lcd.isInitialized)
        #expect(lcd.violations.contains { $0.kind == .addressSetup } == reported, "\(lcd.violations)")
    }

    @Test(
        "E rising less than 37 us after a byte was latched is busy; 37 us later is not",
        arguments: [(TimeSpan(nanoseconds: 36_999), true), (TimeSpan.microseconds(37), false)])
    func busyCountsFromTheRisingEdge(gap: TimeSpan, reported: Bool) {
        var (lcd, feeder) = initializedLCD(columns: 16, rows: 2)
        feeder.wait(.milliseconds(1))
        let x = UInt8(ascii: "x")
        let xHigh = (x >> 4) << 4 | Port.rs | Port.backlight
        let xLow = (x & 0x0F) << 4 | Port.rs | Port.backlight
        feeder.step = .microseconds(10)
        feeder.send([xHigh, xHigh | Port.e, xHigh, xLow, xLow | Port.e, xLow])
        // The latch was the last byte; the next byte's set-up comes at once, its E after `gap`.
        feeder.step = .zero
        feeder.send([xHigh])
        feeder.wait(gap)
        feeder.send([xHigh | Port.e])
        feeder.wait(.microseconds(100))
        feeder.send([xHigh])
        #expect(lcd.violations.contains { $0.kind == .busy } == reported, "\(lcd.violations)")
    }
}
