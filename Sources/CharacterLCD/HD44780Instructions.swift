import HAL

/// HD44780U instruction codes and flags (datasheet table 6, "Instructions"), by their datasheet names.
enum HD44780Instruction {
    /// Clear display: fills DDRAM with 0x20, sets the address counter to 0. Slow: table 6 gives no
    /// execution time for it (only "return home" has 1.52 ms); see `HD44780Timing.clearDisplayWait`.
    static let clearDisplay: UInt8 = 0x01

    /// Entry mode set, with I/D (increment) and S (shift the display) flags.
    static let entryModeSet: UInt8 = 0x04
    static let entryIncrement: UInt8 = 0x02
    static let entryShiftDisplay: UInt8 = 0x01

    /// Display on/off control, with D (display), C (cursor) and B (blink) flags.
    static let displayControl: UInt8 = 0x08
    static let displayOn: UInt8 = 0x04
    static let cursorOn: UInt8 = 0x02
    static let blinkOn: UInt8 = 0x01

    /// Function set, with DL (8-bit interface), N (2 display lines) and F (5x10 dots) flags.
    static let functionSet: UInt8 = 0x20
    static let dataLength8Bit: UInt8 = 0x10
    static let twoLines: UInt8 = 0x08
    static let font5x10: UInt8 = 0x04

    /// Set CGRAM address (6-bit address in the low bits).
    static let setCGRAMAddress: UInt8 = 0x40
    /// Set DDRAM address (7-bit address in the low bits).
    static let setDDRAMAddress: UInt8 = 0x80

    /// The nibble sent three times by the initialisation dance: the high nibble of
    /// "function set, 8-bit interface" (0x30).
    static let initNibble8Bit: UInt8 = (functionSet | dataLength8Bit) >> 4
    /// The nibble that switches to the 4-bit interface: the high nibble of "function set, 4-bit" (0x20).
    static let initNibble4Bit: UInt8 = functionSet >> 4

    /// Number of CGRAM glyphs (character codes 0...7 with 5x8 dots).
    static let glyphCount = 8
    /// Rows per 5x8 glyph (8 CGRAM bytes, the 8th is the cursor line).
    static let glyphRows = 8
    /// A glyph row uses the low 5 bits (one per dot column).
    static let glyphRowMask: UInt8 = 0x1F

    /// The character code for a blank cell (space), what clear display writes.
    static let blank: UInt8 = 0x20

    /// The last DDRAM address of each line and the address that follows it when the address counter
    /// increments (HD44780U: 1-line mode 0x00-0x4F; 2-line mode 0x00-0x27 and 0x40-0x67).
    static let oneLineLastAddress: UInt8 = 0x4F
    static let firstLineLastAddress: UInt8 = 0x27
    static let secondLineFirstAddress: UInt8 = 0x40
    static let secondLineLastAddress: UInt8 = 0x67
}

/// The HD44780U's timing requirements and the waits this driver uses for them. Each wait is at least
/// its datasheet minimum; the margin is stated where there is one.
public enum HD44780Timing {
    /// HD44780U figure 24: wait more than 40 ms after Vcc rises to 2.7 V; 50 ms for margin, as in
    /// common libraries (the supply of a backpack rises slowly).
    public static let powerOnWait = TimeSpan.milliseconds(50)
    /// HD44780U figure 24: more than 4.1 ms after the first "function set 8-bit" nibble; 4.5 ms.
    public static let firstInitNibbleWait = TimeSpan.microseconds(4_500)
    /// HD44780U figure 24: more than 100 us after the second nibble; 150 us.
    public static let secondInitNibbleWait = TimeSpan.microseconds(150)
    /// HD44780U table 6: 37 us for most instructions and for each data write at fosc = 270 kHz.
    public static let instructionExecution = TimeSpan.microseconds(37)
    /// The wait after the third and fourth init nibbles, which are sent as separate transfers:
    /// `instructionExecution` with a margin of almost 3x for slow oscillators (execution time scales
    /// with 1/fosc): 100 us.
    public static let initInstructionWait = TimeSpan.microseconds(100)
    /// After clear display. HD44780U table 6 lists no execution time for clear display; the
    /// 1.52 ms in that column (at fosc = 270 kHz) belongs to return home. Clear writes all 80 DDRAM
    /// cells, so it is taken to be at least as slow: 2 ms, as common libraries and Linux's
    /// drivers/auxdisplay/hd44780_common.c (`long_sleep(2)` after LCD_CMD_DISPLAY_CLEAR) wait.
    public static let clearDisplayWait = TimeSpan.milliseconds(2)
}
