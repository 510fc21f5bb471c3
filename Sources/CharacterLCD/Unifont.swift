/// One GNU Unifont glyph: 16 rows, 8 or 16 pixels wide.
public struct UnifontGlyph: Hashable, Sendable {
    /// 8 (half-width: Latin, digits, most scripts) or 16 (full-width: CJK, many symbols).
    public let width: Int
    /// 16 rows, top first; bit 15 is the leftmost pixel (an 8-wide glyph uses bits 15...8).
    public let rows: [UInt16]

    public static let height = 16

    /// Whether the pixel at (x, y) of the glyph is set. Precondition: inside the glyph.
    public func pixel(x: Int, y: Int) -> Bool {
        precondition(x >= 0 && x < width && y >= 0 && y < UnifontGlyph.height, "UnifontGlyph: pixel outside the glyph")
        return rows[y] & (0x8000 >> UInt16(x)) != 0
    }
}

/// Why a Unifont .hex file was refused, and on which line (from 1).
public struct UnifontError: Error, Hashable, Sendable {
    public enum Reason: Hashable, Sendable {
        /// No ':' between the code point and the bitmap.
        case missingColon
        /// The code point is not 4 to 6 hex digits, or is above U+10FFFF.
        case badCodePoint
        /// The bitmap is not 32 (8x16) or 64 (16x16) hex digits.
        case badBitmapLength(Int)
        /// A character in the bitmap that is not a hex digit.
        case badHexDigit
        /// The code point appeared on an earlier line too.
        case duplicate(UInt32)
    }

    public var line: Int
    public var reason: Reason

    public init(line: Int, reason: Reason) {
        self.line = line
        self.reason = reason
    }

    /// "line 3: the bitmap has 31 hex digits (8x16 glyphs have 32, 16x16 glyphs 64)"
    public var message: String {
        let what: String
        switch reason {
        case .missingColon: what = "no ':' after the code point"
        case .badCodePoint: what = "the code point is not 4 to 6 hex digits up to 10FFFF"
        case .badBitmapLength(let count):
            what = "the bitmap has \(count) hex digits (8x16 glyphs have 32, 16x16 glyphs 64)"
        case .badHexDigit: what = "the bitmap has a character that is not a hex digit"
        case .duplicate(let code): what = "U+\(Unifont.codePointText(code)) is defined twice"
        }
        return "line \(line): \(what)"
    }
}

/// Glyphs from a GNU Unifont .hex file (Debian's `unifont`: /usr/share/unifont/unifont.hex):
/// one glyph per line, `XXXX:` and 32 hex digits (8x16) or 64 (16x16), each row of the bitmap 2
/// or 4 hex digits, top row first, the most significant bit leftmost.
///
/// The file is outside input: every line is checked (blank lines and a trailing CR are allowed;
/// anything else malformed is an error naming the line), whatever `wanted` keeps.
public struct Unifont: Hashable, Sendable {
    /// The glyphs kept, by code point.
    public private(set) var glyphs: [UInt32: UnifontGlyph]

    /// Parses `bytes` (the whole file). With `wanted`, keeps only those code points (a device needs
    /// the few its texts use, not 57 000).
    public init(parsing bytes: [UInt8], wanted: Set<UInt32>? = nil) throws(UnifontError) {
        var glyphs: [UInt32: UnifontGlyph] = [:]
        var seen = Set<UInt32>()
        var line = 1
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != Unifont.newline { end += 1 }
            var last = end
            if last > start && bytes[last - 1] == Unifont.carriageReturn { last -= 1 }
            if last > start {
                let (code, glyph) = try Unifont.parseLine(bytes, from: start, to: last, line: line)
                guard seen.insert(code).inserted else { throw UnifontError(line: line, reason: .duplicate(code)) }
                if wanted?.contains(code) ?? true { glyphs[code] = glyph }
            }
            line += 1
            start = end + 1
        }
        self.glyphs = glyphs
    }

    /// The glyph of `scalar`, nil when the font has none.
    public func glyph(for scalar: Unicode.Scalar) -> UnifontGlyph? { glyphs[scalar.value] }

    /// The first scalar of `text` the font lacks, nil when it has them all.
    public func firstMissing(in text: String) -> Unicode.Scalar? {
        text.unicodeScalars.first { glyphs[$0.value] == nil }
    }

    /// Pixel width of `text` laid out glyph by glyph (8 or 16 each; a missing glyph counts 8).
    public func width(of text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + (glyphs[$1.value]?.width ?? Unifont.halfWidth) }
    }

    /// "4E2D" / "1F600": the code point in hex, at least 4 digits, as Unicode writes it after "U+".
    public static func codePointText(_ value: UInt32) -> String {
        var digits: [Character] = []
        var rest = value
        repeat {
            digits.append(hexDigits[Int(rest & 0xF)])
            rest >>= 4
        } while rest > 0
        while digits.count < 4 { digits.append("0") }
        return String(digits.reversed())
    }

    public static let halfWidth = 8
    public static let fullWidth = 16
    /// Unicode's last code point.
    private static let maxCodePoint: UInt32 = 0x10_FFFF
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let colon = UInt8(ascii: ":")
    private static let hexDigits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]

    private static func parseLine(_ bytes: [UInt8], from start: Int, to end: Int, line: Int) throws(UnifontError) -> (UInt32, UnifontGlyph) {
        var colonAt = start
        while colonAt < end && bytes[colonAt] != colon { colonAt += 1 }
        guard colonAt < end else { throw UnifontError(line: line, reason: .missingColon) }
        let codeDigits = colonAt - start
        guard (4...6).contains(codeDigits) else { throw UnifontError(line: line, reason: .badCodePoint) }
        var code: UInt32 = 0
        for index in start..<colonAt {
            guard let digit = hexValue(bytes[index]) else { throw UnifontError(line: line, reason: .badCodePoint) }
            code = code << 4 | UInt32(digit)
        }
        guard code <= maxCodePoint else { throw UnifontError(line: line, reason: .badCodePoint) }
        let bitmapDigits = end - colonAt - 1
        let digitsPerRow: Int
        switch bitmapDigits {
        case 32: digitsPerRow = 2
        case 64: digitsPerRow = 4
        default: throw UnifontError(line: line, reason: .badBitmapLength(bitmapDigits))
        }
        var rows: [UInt16] = []
        rows.reserveCapacity(UnifontGlyph.height)
        var index = colonAt + 1
        for _ in 0..<UnifontGlyph.height {
            var row: UInt16 = 0
            for _ in 0..<digitsPerRow {
                guard let digit = hexValue(bytes[index]) else { throw UnifontError(line: line, reason: .badHexDigit) }
                row = row << 4 | UInt16(digit)
                index += 1
            }
            rows.append(digitsPerRow == 2 ? row << 8 : row)
        }
        return (code, UnifontGlyph(width: digitsPerRow == 2 ? halfWidth : fullWidth, rows: rows))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

/// Lays text out on the 128x64 glass with Unifont: line n's glyphs at y = 16 n, left to right by
/// their widths (8 or 16), clipped at the right edge; up to four lines. A character the font lacks
/// (the configuration check refuses those) draws as U+FFFD when the font has it, else as a
/// blank cell.
public enum UnifontText {
    /// Lines of 16 pixels on the 64-pixel glass.
    public static let lineCount = OLEDGlass.height / UnifontGlyph.height

    public static func render(_ lines: [String], font: Unifont) -> PixelFrame {
        var frame = PixelFrame()
        for (row, line) in lines.prefix(lineCount).enumerated() {
            var x = 0
            for scalar in line.unicodeScalars {
                guard x < OLEDGlass.width else { break }
                guard let glyph = font.glyph(for: scalar) ?? font.glyphs[replacementCharacter] else {
                    x += Unifont.halfWidth
                    continue
                }
                for gy in 0..<UnifontGlyph.height {
                    for gx in 0..<glyph.width where glyph.pixel(x: gx, y: gy) {
                        frame.set(x: x + gx, y: row * UnifontGlyph.height + gy, true)
                    }
                }
                x += glyph.width
            }
        }
        return frame
    }

    /// U+FFFD REPLACEMENT CHARACTER.
    private static let replacementCharacter: UInt32 = 0xFFFD
}
