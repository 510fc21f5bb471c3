/// How the emulator renders character codes as text: the HD44780U A00 ROM (ASCII + Japanese), as
/// fitted to most cheap modules (HARDWARE.md).
///
/// | codes | shown as |
/// |---|---|
/// | 0x00-0x07 (and 0x08-0x0F, which address the same CGRAM glyphs) | "⓪" "①" ... "⑦": the glyph's index, circled |
/// | 0x20-0x7D | ASCII, except 0x5C, which is "¥" in the A00 ROM |
/// | 0x7E, 0x7F | "→", "←" |
/// | 0xDF | "°" |
/// | 0xFF | "█" (all dots on) |
/// | everything else (0x10-0x1F, 0x80-0xFE but 0xDF: katakana, Greek, blanks) | "?" |
public enum EmulatedROM {
    /// Placeholders for the eight CGRAM glyphs, indexed by glyph number.
    public static let cgramPlaceholders: [Character] = ["⓪", "①", "②", "③", "④", "⑤", "⑥", "⑦"]

    /// Shown for codes the table does not render.
    public static let unknown: Character = "?"

    /// The A00 ROM cells that differ from ASCII or lie outside it, and that we render.
    private static let specialCodes: [(code: UInt8, character: Character)] = [
        (0x5C, "¥"),
        (0x7E, "→"),
        (0x7F, "←"),
        (0xDF, "°"),
        (0xFF, "█"),
    ]

    /// First and last code rendered as ASCII (0x5C excepted, see `specialCodes`).
    private static let asciiRange: ClosedRange<UInt8> = 0x20...0x7D
    /// Character codes that select CGRAM glyphs (0x08-0x0F mirror 0x00-0x07 for 5x8 fonts).
    private static let cgramRange: ClosedRange<UInt8> = 0x00...0x0F
    private static let glyphCount: UInt8 = 8

    /// The full table, one entry per code.
    public static let table: [Character] = (0...255).map { (value: Int) -> Character in
        let code = UInt8(value)
        if let special = specialCodes.first(where: { $0.code == code }) {
            return special.character
        }
        if cgramRange.contains(code) {
            return cgramPlaceholders[Int(code % glyphCount)]
        }
        if asciiRange.contains(code) {
            return Character(Unicode.Scalar(code))
        }
        return unknown
    }

    /// The character a person would read for `code`.
    public static func character(for code: UInt8) -> Character {
        table[Int(code)]
    }
}
