import HAL

/// The HD44780 register a byte goes to, selected by the RS line.
public enum HD44780Register: Sendable {
    /// RS = 0: the instruction register (commands such as clear or set DDRAM address).
    case instruction
    /// RS = 1: the data register (a character code for DDRAM, or a glyph row for CGRAM).
    case data
}

/// One byte for the HD44780 and the register it is meant for.
public struct HD44780Byte: Hashable, Sendable {
    public var register: HD44780Register
    public var value: UInt8

    public init(register: HD44780Register, value: UInt8) {
        self.register = register
        self.value = value
    }

    /// A byte for the instruction register (RS = 0).
    public static func instruction(_ value: UInt8) -> HD44780Byte {
        HD44780Byte(register: .instruction, value: value)
    }

    /// A byte for the data register (RS = 1).
    public static func data(_ value: UInt8) -> HD44780Byte {
        HD44780Byte(register: .data, value: value)
    }
}

/// Moves bytes to an HD44780 wired in 4-bit mode, write-only (R/W held low; the busy flag is never
/// read, so callers wait the datasheet execution times instead).
///
/// Implementations: the PCF8574 I2C backpack (`PCF8574Backpack`), a 4-bit GPIO bus later.
///
/// Timing contract: an implementation must leave at least the HD44780's instruction execution time
/// (`HD44780Timing.instructionExecution`, 37 us at 270 kHz) between the latch of one byte and the
/// start (E rising) of the next within one `write`, so a batch of fast instructions and data is
/// safe in a single call; and it must set RS and R/W up with E low before E rises (tAS). Slow
/// instructions (clear display, return home) and the initialisation waits are the caller's job: the
/// driver ends a `write` after such an instruction and calls its `Delay`.
public protocol HD44780Port {
    /// Puts the controller's control lines at rest without strobing it: E, RS and R/W low. The
    /// driver calls it first in every initialisation, since an expander may have just powered up
    /// with every pin high (E=1, R/W=1). Blocks for the transfer only.
    mutating func writeIdle() throws(HALError)
    /// One 4-bit transfer with RS=0 (the initialisation dance, while the controller may be in 8-bit
    /// mode). `nibble` is the high 4 bits' value 0...15 (D7..D4). Blocks for the transfer only.
    mutating func writeInitNibble(_ nibble: UInt8) throws(HALError)
    /// Sends all `bytes` (each as two nibbles, high first) as ONE bus transaction when the bus can,
    /// else one bus transaction per expander byte. Callers guarantee spacing for slow instructions.
    /// An empty `bytes` sends nothing.
    mutating func write(_ bytes: [HD44780Byte]) throws(HALError)
    /// Switches the module's backlight, without strobing the HD44780. The state is kept for
    /// every later transfer (a backpack drives the backlight from the same port as the data).
    mutating func setBacklight(_ on: Bool) throws(HALError)
}
