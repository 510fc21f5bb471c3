import HAL

/// A PCF8574 I2C expander with an HD44780U character LCD controller behind it: an independent
/// oracle that decodes the expander's port bytes into what a person would see, and reports
/// protocol mistakes.
///
/// Model (HD44780U datasheet; HARDWARE.md):
/// - The PCF8574 drives its port with each received byte (`ExpanderWiring` says which bit is
///   which pin). It powers up with every port bit high; the E falling edge that the first write
///   after power-on may produce is not treated as a latch (it would be a harmless read).
/// - The HD44780 latches RS, R/W and D4-D7 on the falling edge of E, taking the levels that were
///   on the pins while E was high. It is timestamped with the arrival time of the port byte that
///   dropped E.
/// - Bus timing (HD44780U "Bus Timing Characteristics", write operation): RS and R/W must be set
///   up tAS (40 ns) before E rises and stay put while E is high. A port write changes all pins at
///   once, so RS or R/W changing in the write that raises E, or while E is high, is a violation
///   (`addressSetup`); so is a strobe whose E was already high at power-on (the PCF8574 powers up
///   with all pins high: E=1, R/W=1).
/// - Busy: the controller executes an instruction or data write after the latch that completes it
///   and takes no new transfer until done: the next transfer's E must not rise before then.
/// - Power-on state: 8-bit interface, 1 line, 5x8 font, display, cursor and blink off, increment,
///   no shift, address counter 0. The internal reset circuit is not relied upon (the datasheet
///   says it fails when the supply rises badly), so DDRAM holds garbage (code 0xFF, "█") and CGRAM
///   a checkerboard until written.
/// - In 8-bit mode one latch is one instruction, with D3-D0 (not wired on a backpack) read as 0.
///   After a function set with DL=0 the interface is 4 bits: two latches per byte, high nibble first.
/// - Every instruction is executed even when it breaks a rule (the violation is reported), so
///   the screen shows what the driver meant and `violations` says what a real chip might do wrong.
///   RS and R/W of a byte are those of its second nibble; a read (R/W=1) has no effect.
/// - `screen` renders DDRAM through `EmulatedROM` (A00 ROM).
public final class HD44780Emulator: I2CDevice {
    /// A protocol mistake seen on the pins.
    public struct Violation: Hashable, Sendable, CustomStringConvertible {
        public enum Kind: Hashable, Sendable {
            /// E fell less than 40 ms after power-on.
            case tooSoonAfterPowerOn
            /// An instruction (other than the init function sets) or data before the switch to
            /// 4-bit mode that ends the init dance.
            case beforeInitialization
            /// The switch to 4-bit mode was not preceded by the 0x3, 0x3, 0x3 function sets.
            case initSequence
            /// A wait of the init dance was too short: < 4.1 ms after the first 0x3, or < 100 us
            /// after the second.
            case initWaitTooShort
            /// A transfer started (E rose) while the previous instruction was still executing.
            case busy
            /// RS or R/W was not set up before E rose (tAS): it changed in the write that raised E,
            /// while E was high, or E was high since power-on.
            case addressSetup
            /// RS or R/W differed between the two nibbles of one byte (the nibbles are out of step).
            case nibbleDesync
            /// R/W was high: reads are not supported on the backpack path.
            case read
            /// RS, R/W or D4-D7 changed in the same port write that dropped E (hold time tH).
            case holdTime
            /// Set DDRAM address outside the lines of the current function set.
            case invalidAddress
        }

        public var time: Instant
        public var kind: Kind
        /// What happened, in datasheet words.
        public var message: String

        public init(time: Instant, kind: Kind, message: String) {
            self.time = time
            self.kind = kind
            self.message = message
        }

        /// "40.090 ms busy: ..."
        public var description: String { "\(Format.millis(time)) \(kind): \(message)" }
    }

    public let columns: Int
    public let rows: Int
    public let wiring: ExpanderWiring
    /// DDRAM address of the first character of each row.
    public let rowStarts: [Int]

    /// When the module was last powered on (creation or `powerCycle`).
    public private(set) var poweredOnAt: Instant
    public private(set) var violations: [Violation] = []
    /// Every executed instruction and data write, one readable line each, for diagnostics.
    public private(set) var log: [String] = []

    /// DL = 0 in effect.
    public private(set) var isFourBitMode = false
    /// The init dance ended (the switch to 4-bit mode) since power-on or since the interface last
    /// went back to 8 bits.
    public private(set) var isInitialized = false
    /// D of display on/off control.
    public private(set) var displayOn = false
    /// C of display on/off control.
    public private(set) var cursorOn = false
    /// B of display on/off control.
    public private(set) var blinkOn = false
    /// N of function set.
    public private(set) var twoLineMode = false
    /// F of function set.
    public private(set) var font5x10 = false
    /// I/D of entry mode set.
    public private(set) var incrementMode = true
    /// S of entry mode set.
    public private(set) var shiftsDisplayOnWrite = false
    /// The address counter (AC): a DDRAM or CGRAM address, see `addressesCGRAM`.
    public private(set) var addressCounter = 0
    /// True after set CGRAM address, false after set DDRAM address, clear display, return home.
    public private(set) var addressesCGRAM = false
    /// How many positions the display has been shifted left (negative: right), modulo the line length.
    public private(set) var displayShift = 0

    private var ddram: [UInt8]
    private var cgram: [UInt8]
    private var port: UInt8 = HD44780Emulator.portPowerOnLevel
    private var portKnown = false
    private var pendingHighNibble: Latch?
    /// When E last rose and the RS/R/W levels it rose with; E high since power-on counts as a rise
    /// then with RS = R/W = 1 (the PCF8574's power-on level).
    private var enableRise: (time: Instant, rs: Bool, rw: Bool, atPowerOn: Bool)?
    private var recentLatches: [Latch] = []
    private var busyUntil: Instant
    private var busyWith = "power-on"
    private var lastTime: Instant
    private let clockNow: (() -> Instant)?

    /// RS, R/W and D7-D4 as sampled on one E falling edge.
    private struct Latch {
        var nibble: UInt8
        var rs: Bool
        var rw: Bool
        var time: Instant
        /// When E rose for this transfer (the start the busy check looks at).
        var started: Instant
    }

    // MARK: Datasheet facts (HD44780U datasheet; PCF8574 datasheet)

    /// PCF8574: the port powers up with every bit high.
    private static let portPowerOnLevel: UInt8 = 0xFF
    /// HD44780U Figure 24: wait more than 40 ms after VCC rises to 2.7 V.
    private static let powerOnWait = TimeSpan.milliseconds(40)
    /// HD44780U Figure 24: wait more than 4.1 ms after the first function set (0x3).
    private static let firstInitWait = TimeSpan.microseconds(4_100)
    /// HD44780U Figure 24: wait more than 100 us after the second function set (0x3).
    private static let secondInitWait = TimeSpan.microseconds(100)
    /// HD44780U Table 6 at 270 kHz: return home 1.52 ms. The table gives clear display no
    /// execution time; it is given the same here.
    fileprivate static let clearOrHomeTime = TimeSpan.microseconds(1_520)
    /// HD44780U Table 6 at 270 kHz: every other instruction and each data write, 37 us.
    fileprivate static let instructionTime = TimeSpan.microseconds(37)
    /// The high nibble of function set with DL = 1, sent three times by the init dance.
    private static let initNibble: UInt8 = 0b0011

    /// DDRAM address space (AC is 7 bits).
    private static let ddramAddressCount = 128
    /// 1-line mode: DDRAM 0x00-0x4F, one line of 80 characters.
    private static let oneLineLength = 80
    /// 2-line mode: DDRAM 0x00-0x27 and 0x40-0x67, two lines of 40 characters.
    private static let twoLineLength = 40
    /// DDRAM address of the second line in 2-line mode.
    private static let secondLineStart = 0x40
    /// CGRAM: 64 bytes, eight 5x8 glyphs of 8 rows (CGRAM address is 6 bits).
    private static let cgramSize = 64
    private static let rowsPerGlyph = 8
    private static let glyphCount = 8
    /// Pixel bits of a CGRAM row (a 5-dot-wide glyph).
    private static let glyphRowMask: UInt8 = 0b0001_1111
    /// Clear display writes the space code to all of DDRAM.
    private static let spaceCode: UInt8 = 0x20
    /// Power-on garbage: DDRAM code (all dots on) and CGRAM rows (a checkerboard).
    private static let ddramGarbage: UInt8 = 0xFF
    private static let cgramGarbage: [UInt8] = [0b10101, 0b01010]

    // MARK: Life cycle

    /// - Parameters:
    ///   - columns, rows: the module's size: 1, 2 or 4 rows; up to 40 columns (20 for 4 rows).
    ///   - wiring: the backpack's port bits.
    ///   - poweredOnAt: when VCC rose (the 40 ms power-on wait counts from here).
    public convenience init(columns: Int, rows: Int, wiring: ExpanderWiring = .common, poweredOnAt: Instant = .origin) {
        self.init(columns: columns, rows: rows, wiring: wiring, poweredOnAt: poweredOnAt, clockNow: nil)
    }

    /// Like `init(columns:rows:wiring:poweredOnAt:)`, powered on at `clock.now()`; `powerCycle()`
    /// then also reads this clock.
    public convenience init(columns: Int, rows: Int, wiring: ExpanderWiring = .common, clock: some MonotonicClock) {
        self.init(columns: columns, rows: rows, wiring: wiring, poweredOnAt: clock.now(), clockNow: { clock.now() })
    }

    private init(columns: Int, rows: Int, wiring: ExpanderWiring, poweredOnAt: Instant, clockNow: (() -> Instant)?) {
        precondition([1, 2, 4].contains(rows), "HD44780 modules have 1, 2 or 4 rows")
        let maxColumns = rows == 4 ? HD44780Emulator.twoLineLength / 2 : HD44780Emulator.twoLineLength
        precondition((1...maxColumns).contains(columns), "\(rows)-row modules have 1...\(maxColumns) columns")
        self.columns = columns
        self.rows = rows
        self.wiring = wiring
        // Row 3 and 4 of a 4-row module continue rows 1 and 2 in DDRAM.
        self.rowStarts = Array([0, HD44780Emulator.secondLineStart, columns, HD44780Emulator.secondLineStart + columns].prefix(rows))
        self.clockNow = clockNow
        self.poweredOnAt = poweredOnAt
        self.lastTime = poweredOnAt
        self.busyUntil = poweredOnAt
        self.ddram = []
        self.cgram = []
        resetToPowerOn(at: poweredOnAt)
    }

    /// Power off and on again (a hot-plug, a brown-out) at the emulator's clock time, or, without a
    /// clock, at the time of the last byte received.
    public func powerCycle() {
        powerCycle(at: clockNow?() ?? lastTime)
    }

    /// Power off and on again at `time`: both chips return to their power-on state. `violations`
    /// and `log` are kept.
    public func powerCycle(at time: Instant) {
        resetToPowerOn(at: time)
        log.append("\(Format.millis(time)) power cycle")
    }

    /// Forgets the violations seen so far.
    public func clearViolations() {
        violations.removeAll()
    }

    private func resetToPowerOn(at time: Instant) {
        poweredOnAt = time
        lastTime = time
        busyUntil = time
        busyWith = "power-on"
        port = HD44780Emulator.portPowerOnLevel
        portKnown = false
        enableRise = (time: time, rs: wiring.isHigh(wiring.rs, in: port), rw: wiring.isHigh(wiring.rw, in: port), atPowerOn: true)
        pendingHighNibble = nil
        recentLatches = []
        isFourBitMode = false
        isInitialized = false
        displayOn = false
        cursorOn = false
        blinkOn = false
        twoLineMode = false
        font5x10 = false
        incrementMode = true
        shiftsDisplayOnWrite = false
        addressCounter = 0
        addressesCGRAM = false
        displayShift = 0
        ddram = Array(repeating: HD44780Emulator.ddramGarbage, count: HD44780Emulator.ddramAddressCount)
        cgram = (0..<HD44780Emulator.cgramSize).map { HD44780Emulator.cgramGarbage[$0 % HD44780Emulator.cgramGarbage.count] }
    }

    // MARK: What a person sees

    /// `rows` strings of exactly `columns` characters (see `EmulatedROM`); all spaces while the
    /// display is off. In 1-line mode only the first row is driven; the others are blank.
    public var screen: [String] {
        (0..<rows).map { row in
            String(
                (0..<columns).map { column -> Character in
                    guard displayOn, let address = ddramAddress(row: row, column: column) else { return " " }
                    return EmulatedROM.character(for: ddram[address])
                })
        }
    }

    /// The DDRAM address shown at `row`, `column` under the current function set and shift, or nil
    /// when that row is not driven.
    public func ddramAddress(row: Int, column: Int) -> Int? {
        precondition((0..<rows).contains(row) && (0..<columns).contains(column), "outside the module")
        if twoLineMode {
            let start = rowStarts[row]
            let lineBase = start >= HD44780Emulator.secondLineStart ? HD44780Emulator.secondLineStart : 0
            let offset = start - lineBase + column + displayShift
            return lineBase + positiveModulo(offset, HD44780Emulator.twoLineLength)
        }
        guard row == 0 else { return nil }
        return positiveModulo(column + displayShift, HD44780Emulator.oneLineLength)
    }

    /// The character code stored at DDRAM `address` (0x00-0x7F).
    public func ddramCode(at address: Int) -> UInt8 {
        precondition((0..<HD44780Emulator.ddramAddressCount).contains(address), "DDRAM addresses are 7 bits")
        return ddram[address]
    }

    /// The backlight as the backpack drives it (on at power-on: the PCF8574 port starts high).
    public var backlight: Bool {
        wiring.isHigh(wiring.backlight, in: port) == wiring.backlightActiveHigh
    }

    /// The eight pixel rows of CGRAM glyph `code` (0-7; 8-15 are the same glyphs), each the low
    /// 5 bits of its CGRAM byte (bit 4 = leftmost dot).
    public func glyph(_ code: Int) -> [UInt8] {
        precondition((0..<2 * HD44780Emulator.glyphCount).contains(code), "CGRAM glyph codes are 0-7 (8-15 mirror them)")
        let first = (code % HD44780Emulator.glyphCount) * HD44780Emulator.rowsPerGlyph
        return cgram[first..<first + HD44780Emulator.rowsPerGlyph].map { $0 & HD44780Emulator.glyphRowMask }
    }

    // MARK: The pins

    /// A byte written to the PCF8574 port at `time`.
    public func receive(_ byte: UInt8, at time: Instant) {
        if time > lastTime { lastTime = time }
        let previous = port
        port = byte
        let enableHigh = wiring.isHigh(wiring.e, in: byte)
        guard portKnown else {
            portKnown = true
            // E high since power-on: a later fall latches, and the rise was at power-on.
            if !enableHigh { enableRise = nil }
            return
        }
        let control: UInt8 = (1 << UInt8(wiring.rs)) | (1 << UInt8(wiring.rw))
        if !wiring.isHigh(wiring.e, in: previous) && enableHigh {
            if (previous ^ byte) & control != 0 {
                report(
                    .addressSetup, at: time,
                    "RS or R/W changed in the write that raised E (port \(Format.hexByte(previous)) -> \(Format.hexByte(byte))); they must be set up 40 ns (tAS) before E rises: put them out with E low first"
                )
            }
            enableRise = (time: time, rs: wiring.isHigh(wiring.rs, in: byte), rw: wiring.isHigh(wiring.rw, in: byte), atPowerOn: false)
            return
        }
        let enableFell = wiring.isHigh(wiring.e, in: previous) && !enableHigh
        guard enableFell else {
            if enableHigh, (previous ^ byte) & control != 0 {
                report(.addressSetup, at: time, "RS or R/W changed while E was high (port \(Format.hexByte(previous)) -> \(Format.hexByte(byte)))")
            }
            return
        }
        let rise = enableRise
        enableRise = nil
        if let rise, rise.atPowerOn,
            rise.rs != wiring.isHigh(wiring.rs, in: previous) || rise.rw != wiring.isHigh(wiring.rw, in: previous)
        {
            report(
                .addressSetup, at: time,
                "E fell without having risen since power-on (the PCF8574 powers up with every pin high, E = R/W = 1): RS and R/W were never set up before E; write a byte with E low first"
            )
        }
        if (previous ^ byte) & wiring.sampledMask != 0 {
            report(
                .holdTime, at: time,
                "RS, R/W or D4-D7 changed in the write that dropped E (port \(Format.hexByte(previous)) -> \(Format.hexByte(byte))); they must hold past E falling"
            )
        }
        latch(
            Latch(
                nibble: wiring.nibble(in: previous),
                rs: wiring.isHigh(wiring.rs, in: previous),
                rw: wiring.isHigh(wiring.rw, in: previous),
                time: time, started: rise?.time ?? time))
    }

    private func latch(_ latch: Latch) {
        let time = latch.time
        defer {
            recentLatches.append(latch)
            if recentLatches.count > 3 { recentLatches.removeFirst() }
        }
        if time - poweredOnAt < HD44780Emulator.powerOnWait {
            report(.tooSoonAfterPowerOn, at: time, "E fell \(Format.micros(time - poweredOnAt)) after power-on; wait more than 40 ms")
        }
        if latch.rw {
            report(.read, at: time, "R/W = 1 (a read); the backpack path supports writes only")
        }
        if isFourBitMode {
            guard let high = pendingHighNibble else {
                checkNotBusy(startedAt: latch.started)
                pendingHighNibble = latch
                return
            }
            pendingHighNibble = nil
            if high.rs != latch.rs || high.rw != latch.rw {
                report(
                    .nibbleDesync, at: time,
                    "RS/RW were \(bit(high.rs))/\(bit(high.rw)) for the high nibble and \(bit(latch.rs))/\(bit(latch.rw)) for the low nibble of one byte"
                )
            }
            complete(high.nibble << 4 | latch.nibble, rs: latch.rs, rw: latch.rw, at: time)
        } else {
            checkNotBusy(startedAt: latch.started)
            complete(latch.nibble << 4, rs: latch.rs, rw: latch.rw, at: time)
        }
    }

    private func checkNotBusy(startedAt time: Instant) {
        if time < busyUntil {
            report(.busy, at: time, "E rose while \(busyWith) was still executing (busy for another \(Format.micros(busyUntil - time)))")
        }
    }

    private func complete(_ value: UInt8, rs: Bool, rw: Bool, at time: Instant) {
        if rw { return }
        if rs {
            if !isInitialized {
                report(.beforeInitialization, at: time, "data \(Format.hexByte(value)) written before the init dance ended")
            }
            writeData(value, at: time)
        } else {
            let instruction = Instruction(value)
            if !isInitialized, !instruction.isFunctionSet {
                report(.beforeInitialization, at: time, "\(instruction.name) before the init dance ended")
            }
            execute(instruction, at: time)
        }
    }

    // MARK: Instructions

    private func execute(_ instruction: Instruction, at time: Instant) {
        log.append("\(Format.millis(time)) \(instruction.name)")
        switch instruction {
        case .clearDisplay:
            for address in ddram.indices { ddram[address] = HD44780Emulator.spaceCode }
            addressCounter = 0
            addressesCGRAM = false
            displayShift = 0
            incrementMode = true  // Datasheet: clear display also sets I/D to 1; S is unchanged.
        case .returnHome:
            addressCounter = 0
            addressesCGRAM = false
            displayShift = 0
        case .entryModeSet(let increment, let shift):
            incrementMode = increment
            shiftsDisplayOnWrite = shift
        case .displayControl(let display, let cursor, let blink):
            displayOn = display
            cursorOn = cursor
            blinkOn = blink
        case .cursorOrDisplayShift(let display, let right):
            if display {
                // Shifting the display right shows earlier addresses.
                shiftDisplay(by: right ? -1 : 1)
            } else {
                stepAddressCounter(forward: right)
            }
        case .functionSet(let eightBit, let twoLines, let font):
            let wasFourBit = isFourBitMode
            isFourBitMode = !eightBit
            twoLineMode = twoLines
            font5x10 = font
            if !wasFourBit && !eightBit {
                checkInitDance(endingAt: time)
                isInitialized = true
            } else if wasFourBit && eightBit {
                isInitialized = false  // Back to 8 bits: the driver is re-initialising (or out of step).
            }
        case .setCGRAMAddress(let address):
            addressCounter = address
            addressesCGRAM = true
        case .setDDRAMAddress(let address):
            if !isValidDDRAMAddress(address) {
                report(
                    .invalidAddress, at: time,
                    "set DDRAM address \(Format.hexByte(UInt8(address))) is outside the \(twoLineMode ? "2-line" : "1-line") layout")
            }
            addressCounter = address
            addressesCGRAM = false
        case .none:
            return
        }
        busyUntil = time + instruction.executionTime
        busyWith = instruction.name
    }

    private func writeData(_ value: UInt8, at time: Instant) {
        if addressesCGRAM {
            log.append("\(Format.millis(time)) write \(Format.hexByte(value)) to CGRAM \(Format.hexByte(UInt8(addressCounter)))")
            cgram[addressCounter] = value
            stepAddressCounter(forward: incrementMode)
        } else {
            log.append(
                "\(Format.millis(time)) write \(Format.hexByte(value)) '\(EmulatedROM.character(for: value))' to DDRAM \(Format.hexByte(UInt8(addressCounter)))"
            )
            ddram[addressCounter] = value
            stepAddressCounter(forward: incrementMode)
            if shiftsDisplayOnWrite {
                // Datasheet: with S = 1 the display shifts left on increment, right on decrement;
                // CGRAM writes do not shift it.
                shiftDisplay(by: incrementMode ? 1 : -1)
            }
        }
        busyUntil = time + HD44780Emulator.instructionTime
        busyWith = "a data write"
    }

    private func checkInitDance(endingAt time: Instant) {
        let dance = recentLatches
        let isDance = dance.count == 3 && dance.allSatisfy { !$0.rs && !$0.rw && $0.nibble == HD44780Emulator.initNibble }
        guard isDance else {
            report(.initSequence, at: time, "switched to 4-bit mode without the 0x3, 0x3, 0x3 function sets just before")
            return
        }
        let firstWait = dance[1].time - dance[0].time
        if firstWait < HD44780Emulator.firstInitWait {
            report(.initWaitTooShort, at: dance[1].time, "waited \(Format.micros(firstWait)) after the first 0x3; needs more than 4.1 ms")
        }
        let secondWait = dance[2].time - dance[1].time
        if secondWait < HD44780Emulator.secondInitWait {
            report(.initWaitTooShort, at: dance[2].time, "waited \(Format.micros(secondWait)) after the second 0x3; needs more than 100 us")
        }
    }

    // MARK: Address counter and shift

    private func stepAddressCounter(forward: Bool) {
        if addressesCGRAM {
            addressCounter = positiveModulo(addressCounter + (forward ? 1 : -1), HD44780Emulator.cgramSize)
            return
        }
        let lines: [ClosedRange<Int>]
        if twoLineMode {
            let lineLength = HD44780Emulator.twoLineLength
            let second = HD44780Emulator.secondLineStart
            lines = [0...lineLength - 1, second...second + lineLength - 1]
        } else {
            lines = [0...HD44780Emulator.oneLineLength - 1]
        }
        // The valid ranges form one ring: 0x27 -> 0x40 -> 0x67 -> 0x00 (2 lines), 0x4F -> 0x00 (1 line).
        if let index = lines.firstIndex(where: { $0.contains(addressCounter) }) {
            let line = lines[index]
            if forward && addressCounter == line.upperBound {
                addressCounter = lines[(index + 1) % lines.count].lowerBound
            } else if !forward && addressCounter == line.lowerBound {
                addressCounter = lines[(index + lines.count - 1) % lines.count].upperBound
            } else {
                addressCounter += forward ? 1 : -1
            }
        } else {
            // An invalid address (already reported): just count in the 7-bit space.
            addressCounter = positiveModulo(addressCounter + (forward ? 1 : -1), HD44780Emulator.ddramAddressCount)
        }
    }

    private func isValidDDRAMAddress(_ address: Int) -> Bool {
        if twoLineMode {
            let second = HD44780Emulator.secondLineStart
            return address < HD44780Emulator.twoLineLength || (second..<second + HD44780Emulator.twoLineLength).contains(address)
        }
        return address < HD44780Emulator.oneLineLength
    }

    private func shiftDisplay(by positions: Int) {
        let lineLength = twoLineMode ? HD44780Emulator.twoLineLength : HD44780Emulator.oneLineLength
        displayShift = positiveModulo(displayShift + positions, lineLength)
    }

    // MARK: Helpers

    private func report(_ kind: Violation.Kind, at time: Instant, _ message: String) {
        violations.append(Violation(time: time, kind: kind, message: message))
    }

    private func bit(_ high: Bool) -> String { high ? "1" : "0" }
}

private func positiveModulo(_ value: Int, _ modulus: Int) -> Int {
    let remainder = value % modulus
    return remainder < 0 ? remainder + modulus : remainder
}

/// An HD44780 instruction decoded from its code: the highest set bit selects it (HD44780U Table 6).
private enum Instruction {
    case clearDisplay
    case returnHome
    case entryModeSet(increment: Bool, shift: Bool)
    case displayControl(display: Bool, cursor: Bool, blink: Bool)
    case cursorOrDisplayShift(display: Bool, right: Bool)
    case functionSet(eightBit: Bool, twoLines: Bool, font5x10: Bool)
    case setCGRAMAddress(Int)
    case setDDRAMAddress(Int)
    /// 0x00: no instruction bit set.
    case none

    // Instruction bits (Table 6), highest first.
    private static let setDDRAMAddressBit: UInt8 = 0b1000_0000
    private static let setCGRAMAddressBit: UInt8 = 0b0100_0000
    private static let functionSetBit: UInt8 = 0b0010_0000
    private static let cursorOrDisplayShiftBit: UInt8 = 0b0001_0000
    private static let displayControlBit: UInt8 = 0b0000_1000
    private static let entryModeSetBit: UInt8 = 0b0000_0100
    private static let returnHomeBit: UInt8 = 0b0000_0010
    private static let clearDisplayBit: UInt8 = 0b0000_0001
    // Flags.
    private static let ddramAddressMask: UInt8 = 0b0111_1111
    private static let cgramAddressMask: UInt8 = 0b0011_1111
    private static let dataLength8Bit: UInt8 = 0b0001_0000  // DL
    private static let twoLinesBit: UInt8 = 0b0000_1000  // N
    private static let font5x10Bit: UInt8 = 0b0000_0100  // F
    private static let shiftDisplayBit: UInt8 = 0b0000_1000  // S/C
    private static let shiftRightBit: UInt8 = 0b0000_0100  // R/L
    private static let displayOnBit: UInt8 = 0b0000_0100  // D
    private static let cursorOnBit: UInt8 = 0b0000_0010  // C
    private static let blinkOnBit: UInt8 = 0b0000_0001  // B
    private static let incrementBit: UInt8 = 0b0000_0010  // I/D
    private static let entryShiftBit: UInt8 = 0b0000_0001  // S

    init(_ code: UInt8) {
        func has(_ flag: UInt8) -> Bool { code & flag != 0 }
        if has(Instruction.setDDRAMAddressBit) {
            self = .setDDRAMAddress(Int(code & Instruction.ddramAddressMask))
        } else if has(Instruction.setCGRAMAddressBit) {
            self = .setCGRAMAddress(Int(code & Instruction.cgramAddressMask))
        } else if has(Instruction.functionSetBit) {
            self = .functionSet(
                eightBit: has(Instruction.dataLength8Bit), twoLines: has(Instruction.twoLinesBit), font5x10: has(Instruction.font5x10Bit))
        } else if has(Instruction.cursorOrDisplayShiftBit) {
            self = .cursorOrDisplayShift(display: has(Instruction.shiftDisplayBit), right: has(Instruction.shiftRightBit))
        } else if has(Instruction.displayControlBit) {
            self = .displayControl(display: has(Instruction.displayOnBit), cursor: has(Instruction.cursorOnBit), blink: has(Instruction.blinkOnBit))
        } else if has(Instruction.entryModeSetBit) {
            self = .entryModeSet(increment: has(Instruction.incrementBit), shift: has(Instruction.entryShiftBit))
        } else if has(Instruction.returnHomeBit) {
            self = .returnHome
        } else if has(Instruction.clearDisplayBit) {
            self = .clearDisplay
        } else {
            self = .none
        }
    }

    var isFunctionSet: Bool {
        if case .functionSet = self { return true }
        return false
    }

    /// HD44780U Table 6 at 270 kHz.
    var executionTime: TimeSpan {
        switch self {
        case .clearDisplay, .returnHome: HD44780Emulator.clearOrHomeTime
        case .none: .zero
        default: HD44780Emulator.instructionTime
        }
    }

    var name: String {
        func onOff(_ flag: Bool) -> String { flag ? "on" : "off" }
        switch self {
        case .clearDisplay: return "clear display"
        case .returnHome: return "return home"
        case .entryModeSet(let increment, let shift):
            return "entry mode set (\(increment ? "increment" : "decrement")\(shift ? ", shift" : ""))"
        case .displayControl(let display, let cursor, let blink):
            return "display on/off control (display \(onOff(display)), cursor \(onOff(cursor)), blink \(onOff(blink)))"
        case .cursorOrDisplayShift(let display, let right):
            return "\(display ? "display" : "cursor") shift \(right ? "right" : "left")"
        case .functionSet(let eightBit, let twoLines, let font):
            return "function set (\(eightBit ? "8-bit" : "4-bit"), \(twoLines ? "2 lines" : "1 line"), \(font ? "5x10" : "5x8"))"
        case .setCGRAMAddress(let address):
            return "set CGRAM address \(Format.hexByte(UInt8(address)))"
        case .setDDRAMAddress(let address):
            return "set DDRAM address \(Format.hexByte(UInt8(address)))"
        case .none:
            return "no instruction (00)"
        }
    }
}
