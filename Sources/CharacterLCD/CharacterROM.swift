/// A character the selected character ROM cannot show: the first one found, and its position
/// counted in Unicode scalars from the start of the text (so "é" written as "e" + U+0301 fails at
/// the combining accent).
public struct UnsupportedCharacter: Error, Hashable, Sendable {
    public var character: Unicode.Scalar
    public var index: Int

    public init(character: Unicode.Scalar, index: Int) {
        self.character = character
        self.index = index
    }
}

/// The HD44780's character generator ROM, chosen by the part number suffix (HD44780UA00 / UA02).
///
/// Character codes 0...7 are the CGRAM glyphs, not part of either ROM: `encode` never produces
/// them from ordinary text (U+0000...U+0007 are rejected). To put a glyph into text, map a scalar of
/// your choice (e.g. a private-use one) with `encode(_:glyphs:)`, or write the code straight into a
/// frame: `HD44780.render` takes raw codes.
///
/// What is mapped (one Unicode scalar to one code; no look-alike substitutions):
///
/// A00 (ASCII + Japanese katakana, most cheap modules):
/// - U+0020...U+007D as ASCII, except backslash (0x5C holds a yen sign) and tilde (0x7E holds an
///   arrow): neither `\` nor `~` is accepted.
/// - ¥ -> 0x5C, → -> 0x7E, ← -> 0x7F.
/// - Half-width katakana and punctuation U+FF61...U+FF9F -> 0xA1...0xDF; ° (degree) -> 0xDF, the
///   semi-voiced mark it is drawn as.
/// - 0xE0...0xFF where the glyph is an unambiguous character: α ä β ε μ (and micro µ) σ ρ √ ¢ £ ñ ö
///   θ ∞ Ω (and ohm Ω) ü Σ π 千 万 円 ÷ █.
///
/// A02 (European/Cyrillic):
/// - U+0020...U+007E as ASCII (backslash and tilde included), ⌂ -> 0x7F.
/// - Arrows ↑ ↓ → ← -> 0x18...0x1B.
/// - Cyrillic capitals Б Д Ж З И Й Л П У Ц Ч Ш Щ Ъ Ы Э -> 0x80...0x8F, Ю -> 0xAC, Я -> 0xAD.
/// - Greek α Γ π Σ σ τ θ Ω δ ε -> 0x90...0x9E as in the ROM table; μ and µ -> 0xB5; ω -> 0xB8;
///   Φ -> 0xD8.
/// - The Latin-1 supplement U+00A1...U+00FF at its own code, except where the A02 ROM has another
///   glyph: ¨ (0xA8 is ƒ), ¬ (0xAC is Ю), soft hyphen (0xAD is Я), ¯ (0xAF is an acute accent),
///   ° (0xB0 is a raised letter O, not a degree sign), ´ (moved: -> 0xAF), ¸ (0xB8 is ω),
///   Ø (0xD8 is Φ) are rejected or moved as noted. ƒ -> 0xA8.
///
/// Sources: the HD44780U datasheet's ROM code tables as transcribed by the RPLCD project's codecs
/// (read for the facts only); not verified against physical A02 modules.
public enum CharacterROM: String, Sendable, CaseIterable {
    case a00 = "A00"
    case a02 = "A02"

    /// Character codes for `text`, one per Unicode scalar, or throws naming the first character
    /// the ROM cannot show (and its index in Unicode scalars).
    public func encode(_ text: String) throws(UnsupportedCharacter) -> [UInt8] {
        var codes: [UInt8] = []
        var index = 0
        for scalar in text.unicodeScalars {
            guard let code = code(for: scalar) else {
                throw UnsupportedCharacter(character: scalar, index: index)
            }
            codes.append(code)
            index += 1
        }
        return codes
    }

    /// Like `encode(_:)`, but the scalars in `glyphs` become the given CGRAM codes (each 0...7,
    /// a precondition) and take precedence over the ROM.
    public func encode(_ text: String, glyphs: [Unicode.Scalar: UInt8]) throws(UnsupportedCharacter) -> [UInt8] {
        for code in glyphs.values {
            precondition(code < CharacterROM.cgramCodeCount, "encode: CGRAM glyph codes are 0...7")
        }
        var codes: [UInt8] = []
        var index = 0
        for scalar in text.unicodeScalars {
            guard let code = glyphs[scalar] ?? code(for: scalar) else {
                throw UnsupportedCharacter(character: scalar, index: index)
            }
            codes.append(code)
            index += 1
        }
        return codes
    }

    /// The ROM code that shows `scalar`, or nil.
    public func code(for scalar: Unicode.Scalar) -> UInt8? {
        switch self {
        case .a00: return CharacterROM.a00Code(scalar.value)
        case .a02: return CharacterROM.a02Code(scalar.value)
        }
    }

    /// Character codes 0...7 address CGRAM.
    private static let cgramCodeCount: UInt8 = 8

    private static let asciiSpace: UInt32 = 0x20
    private static let asciiBackslash: UInt32 = 0x5C
    private static let asciiRightBrace: UInt32 = 0x7D
    private static let asciiTilde: UInt32 = 0x7E

    // MARK: A00

    private static let halfwidthKatakanaFirst: UInt32 = 0xFF61
    private static let halfwidthKatakanaLast: UInt32 = 0xFF9F
    /// U+FF61 (half-width ideographic full stop) is ROM code 0xA1; the block runs on in order.
    private static let a00KatakanaFirstCode: UInt8 = 0xA1

    /// Scalars outside the ASCII and katakana runs that A00 shows, with their codes.
    private static let a00Extras: [(scalar: UInt32, code: UInt8)] = [
        (0x00A5, 0x5C),  // ¥ YEN SIGN, where ASCII has backslash
        (0x2192, 0x7E),  // → RIGHTWARDS ARROW, where ASCII has tilde
        (0x2190, 0x7F),  // ← LEFTWARDS ARROW
        (0x00B0, 0xDF),  // ° DEGREE SIGN, drawn like the semi-voiced mark
        (0x03B1, 0xE0),  // α
        (0x00E4, 0xE1),  // ä
        (0x03B2, 0xE2),  // β
        (0x03B5, 0xE3),  // ε
        (0x03BC, 0xE4),  // μ GREEK SMALL LETTER MU
        (0x00B5, 0xE4),  // µ MICRO SIGN
        (0x03C3, 0xE5),  // σ
        (0x03C1, 0xE6),  // ρ
        (0x221A, 0xE8),  // √
        (0x00A2, 0xEC),  // ¢
        (0x00A3, 0xED),  // £
        (0x00F1, 0xEE),  // ñ
        (0x00F6, 0xEF),  // ö
        (0x03B8, 0xF2),  // θ
        (0x221E, 0xF3),  // ∞
        (0x03A9, 0xF4),  // Ω GREEK CAPITAL LETTER OMEGA
        (0x2126, 0xF4),  // Ω OHM SIGN
        (0x00FC, 0xF5),  // ü
        (0x03A3, 0xF6),  // Σ
        (0x03C0, 0xF7),  // π
        (0x5343, 0xFA),  // 千
        (0x4E07, 0xFB),  // 万
        (0x5186, 0xFC),  // 円
        (0x00F7, 0xFD),  // ÷
        (0x2588, 0xFF),  // █ FULL BLOCK
    ]

    private static func a00Code(_ value: UInt32) -> UInt8? {
        if value >= asciiSpace && value <= asciiRightBrace && value != asciiBackslash {
            return UInt8(value)
        }
        if value >= halfwidthKatakanaFirst && value <= halfwidthKatakanaLast {
            return a00KatakanaFirstCode + UInt8(value - halfwidthKatakanaFirst)
        }
        return lookup(value, in: a00Extras)
    }

    // MARK: A02

    private static let latin1SupplementFirst: UInt32 = 0x00A1
    private static let latin1SupplementLast: UInt32 = 0x00FF

    /// Latin-1 supplement scalars whose code in A02 holds another glyph.
    private static let a02Latin1Missing: [UInt32] = [
        0x00A8,  // ¨ DIAERESIS (0xA8 is ƒ)
        0x00AC,  // ¬ NOT SIGN (0xAC is Ю)
        0x00AD,  // SOFT HYPHEN (0xAD is Я)
        0x00AF,  // ¯ MACRON (0xAF is an acute accent)
        0x00B0,  // ° DEGREE SIGN (0xB0 is a raised capital O)
        0x00B4,  // ´ ACUTE ACCENT (moved to 0xAF, see a02Extras)
        0x00B8,  // ¸ CEDILLA (0xB8 is ω)
        0x00D8,  // Ø (0xD8 is Φ)
    ]

    /// Scalars outside the ASCII and Latin-1 runs that A02 shows, with their codes.
    private static let a02Extras: [(scalar: UInt32, code: UInt8)] = [
        (0x2191, 0x18),  // ↑
        (0x2193, 0x19),  // ↓
        (0x2192, 0x1A),  // →
        (0x2190, 0x1B),  // ←
        (0x2302, 0x7F),  // ⌂ HOUSE
        (0x0411, 0x80),  // Б
        (0x0414, 0x81),  // Д
        (0x0416, 0x82),  // Ж
        (0x0417, 0x83),  // З
        (0x0418, 0x84),  // И
        (0x0419, 0x85),  // Й
        (0x041B, 0x86),  // Л
        (0x041F, 0x87),  // П
        (0x0423, 0x88),  // У
        (0x0426, 0x89),  // Ц
        (0x0427, 0x8A),  // Ч
        (0x0428, 0x8B),  // Ш
        (0x0429, 0x8C),  // Щ
        (0x042A, 0x8D),  // Ъ
        (0x042B, 0x8E),  // Ы
        (0x042D, 0x8F),  // Э
        (0x03B1, 0x90),  // α
        (0x0393, 0x92),  // Γ
        (0x03C0, 0x93),  // π
        (0x03A3, 0x94),  // Σ
        (0x03C3, 0x95),  // σ
        (0x03C4, 0x97),  // τ
        (0x03B8, 0x99),  // θ
        (0x03A9, 0x9A),  // Ω GREEK CAPITAL LETTER OMEGA
        (0x2126, 0x9A),  // Ω OHM SIGN
        (0x03B4, 0x9B),  // δ
        (0x221E, 0x9C),  // ∞
        (0x03B5, 0x9E),  // ε
        (0x0192, 0xA8),  // ƒ
        (0x042E, 0xAC),  // Ю
        (0x042F, 0xAD),  // Я
        (0x00B4, 0xAF),  // ´ ACUTE ACCENT
        (0x03BC, 0xB5),  // μ GREEK SMALL LETTER MU (µ MICRO SIGN is 0xB5 already)
        (0x03C9, 0xB8),  // ω
        (0x03A6, 0xD8),  // Φ
    ]

    private static func a02Code(_ value: UInt32) -> UInt8? {
        if value >= asciiSpace && value <= asciiTilde {
            return UInt8(value)
        }
        if value >= latin1SupplementFirst && value <= latin1SupplementLast && !a02Latin1Missing.contains(value) {
            return UInt8(value)
        }
        return lookup(value, in: a02Extras)
    }

    private static func lookup(_ value: UInt32, in table: [(scalar: UInt32, code: UInt8)]) -> UInt8? {
        for entry in table where entry.scalar == value {
            return entry.code
        }
        return nil
    }
}
