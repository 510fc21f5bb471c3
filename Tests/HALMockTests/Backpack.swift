import HAL
import HALMock

// Port bytes computed here from the datasheets, independently of any driver and of the emulator:
// common backpack wiring (HARDWARE.md) P0 = RS, P1 = R/W, P2 = E, P3 = backlight, P4-P7 = D4-D7.
enum Port {
    static let rs: UInt8 = 1 << 0
    static let rw: UInt8 = 1 << 1
    static let e: UInt8 = 1 << 2
    static let backlight: UInt8 = 1 << 3
}

/// HD44780U Table 6 codes used by the tests (written out, not shared with the emulator).
enum Code {
    static let clearDisplay: UInt8 = 0b0000_0001
    static let returnHome: UInt8 = 0b0000_0010
    static let entryIncrement: UInt8 = 0b0000_0110  // I/D = 1, S = 0
    static let entryDecrement: UInt8 = 0b0000_0100  // I/D = 0, S = 0
    static let entryIncrementShift: UInt8 = 0b0000_0111  // I/D = 1, S = 1
    static let displayOn: UInt8 = 0b0000_1100  // D = 1, C = 0, B = 0
    static let displayOff: UInt8 = 0b0000_1000
    static let cursorRight: UInt8 = 0b0001_0100  // S/C = 0, R/L = 1
    static let displayShiftLeft: UInt8 = 0b0001_1000  // S/C = 1, R/L = 0
    static let displayShiftRight: UInt8 = 0b0001_1100  // S/C = 1, R/L = 1
    static let functionSet4Bit2Lines: UInt8 = 0b0010_1000  // DL = 0, N = 1, F = 0
    static let functionSet4Bit1Line: UInt8 = 0b0010_0000  // DL = 0, N = 0, F = 0
    static let setCGRAMAddress: UInt8 = 0b0100_0000
    static let setDDRAMAddress: UInt8 = 0b1000_0000
    /// The init dance nibbles (high nibble of function set, DL = 1, then DL = 0).
    static let eightBitNibble: UInt8 = 0b0011
    static let fourBitNibble: UInt8 = 0b0010
}

/// The three port bytes that latch one nibble: RS, R/W and the data with E low (set-up, tAS), E
/// high with the same, then E low again.
func pulse(_ nibble: UInt8, rs: Bool = false, rw: Bool = false, backlight: Bool = true) -> [UInt8] {
    let level = nibble << 4 | (rs ? Port.rs : 0) | (rw ? Port.rw : 0) | (backlight ? Port.backlight : 0)
    return [level, level | Port.e, level]
}

/// The six port bytes of one HD44780 byte in 4-bit mode: high nibble first.
func fourBit(_ value: UInt8, rs: Bool = false, backlight: Bool = true) -> [UInt8] {
    pulse(value >> 4, rs: rs, backlight: backlight) + pulse(value & 0x0F, rs: rs, backlight: backlight)
}

func text(_ string: String) -> [UInt8] {
    string.unicodeScalars.flatMap { fourBit(UInt8($0.value), rs: true) }
}

/// Feeds port bytes straight into an emulator at explicit times: each byte `step` after the
/// previous one (90 us = one byte at 100 kHz), `wait` adds a pause.
struct Feeder {
    let lcd: HD44780Emulator
    var time: Instant
    var step = TimeSpan.microseconds(90)

    init(_ lcd: HD44780Emulator, at time: Instant = Instant.origin + .milliseconds(50)) {
        self.lcd = lcd
        self.time = time
    }

    mutating func send(_ bytes: [UInt8]) {
        for byte in bytes {
            time = time + step
            lcd.receive(byte, at: time)
        }
    }

    mutating func wait(_ span: TimeSpan) {
        time = time + span
    }

    /// HD44780U Figure 24 (4-bit): 0x3, > 4.1 ms, 0x3, > 100 us, 0x3, 0x2; then function set,
    /// display on, clear (1.52 ms), entry mode increment.
    mutating func initialize(twoLines: Bool = true) {
        send(pulse(Code.eightBitNibble))
        wait(.microseconds(4_500))
        send(pulse(Code.eightBitNibble))
        wait(.microseconds(150))
        send(pulse(Code.eightBitNibble))
        send(pulse(Code.fourBitNibble))
        send(fourBit(twoLines ? Code.functionSet4Bit2Lines : Code.functionSet4Bit1Line))
        send(fourBit(Code.displayOn))
        send(fourBit(Code.clearDisplay))
        wait(.milliseconds(2))
        send(fourBit(Code.entryIncrement))
    }

    mutating func command(_ code: UInt8) {
        send(fourBit(code))
        if code == Code.clearDisplay || code == Code.returnHome {
            wait(.milliseconds(2))
        }
    }

    mutating func write(_ string: String, at address: UInt8) {
        command(Code.setDDRAMAddress | address)
        send(text(string))
    }
}

func initializedLCD(columns: Int, rows: Int, twoLines: Bool = true) -> (HD44780Emulator, Feeder) {
    let lcd = HD44780Emulator(columns: columns, rows: rows)
    var feeder = Feeder(lcd)
    feeder.initialize(twoLines: twoLines)
    return (lcd, feeder)
}

func blank(_ columns: Int) -> String { String(repeating: " ", count: columns) }

func padded(_ string: String, to columns: Int) -> String {
    string + String(repeating: " ", count: columns - string.count)
}
