import HAL

/// Glyphs of a GNU Unifont .hex file, for reading text off an emulated OLED glass: the text a
/// person would read, cell by cell. Read straight from the file's lines (`XXXX:` and 32 hex digits
/// for an 8x16 glyph, 64 for 16x16), with nothing of the driver's parser or renderer, so the
/// reading is an oracle: a label read off the glass equals the font's glyphs pixel for pixel.
public struct GlassGlyphs: Sendable {
    /// Glyph columns (16-bit words, top row in bit 15) -> the lowest code point drawn so.
    private var wide: [[UInt16]: Unicode.Scalar] = [:]
    private var narrow: [[UInt16]: Unicode.Scalar] = [:]
    public private(set) var count = 0

    public static let rows = 16
    public static let halfWidth = 8

    /// Parses `text` (a .hex file); throws naming the first malformed line.
    public init(hex text: String) throws(AdapterRecordError) {
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            if line.isEmpty { continue }
            let parts = line.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, (4...6).contains(parts[0].count), let code = UInt32(parts[0], radix: 16),
                parts[1].count == 32 || parts[1].count == 64
            else {
                throw AdapterRecordError("font line \(number): expected 'XXXX:' and 32 or 64 hex digits")
            }
            let digits = Array(parts[1].utf8)
            let width = digits.count / 4  // 8 or 16 pixels; 2 or 4 digits per row
            let perRow = digits.count / GlassGlyphs.rows
            var columns = [UInt16](repeating: 0, count: width)
            for row in 0..<GlassGlyphs.rows {
                var value = 0
                for digit in digits[(row * perRow)..<((row + 1) * perRow)] {
                    guard let nibble = GlassGlyphs.nibble(digit) else {
                        throw AdapterRecordError("font line \(number): '\(AdapterRecordError.escaped(String(parts[1])))' is not hex")
                    }
                    value = value << 4 | nibble
                }
                for x in 0..<width where value & (1 << (width - 1 - x)) != 0 {
                    columns[x] |= 0x8000 >> UInt16(row)
                }
            }
            guard let scalar = Unicode.Scalar(code), code != 0x20, columns.contains(where: { $0 != 0 }) else { continue }
            count += 1
            if width == 16 {
                if wide[columns] == nil { wide[columns] = scalar }
            } else if narrow[columns] == nil {
                narrow[columns] = scalar
            }
        }
    }

    private static func nibble(_ digit: UInt8) -> Int? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(digit - UInt8(ascii: "0"))
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(digit - UInt8(ascii: "A")) + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(digit - UInt8(ascii: "a")) + 10
        default: return nil
        }
    }

    /// What a person reads on `emulator`'s glass: four 16-pixel lines, each read left to right: a
    /// dark 8-pixel cell is a space; else a 16-wide glyph, then an 8-wide one, equal to the pixels
    /// there; "?" for an 8-pixel cell no glyph explains. Trailing spaces dropped.
    public func read(_ emulator: OLEDEmulator) -> [String] {
        let width = OLEDEmulator.glassWidth
        return (0..<(OLEDEmulator.glassHeight / GlassGlyphs.rows)).map { line in
            let glass = (0..<width).map { x in
                (0..<GlassGlyphs.rows).reduce(UInt16(0)) { word, y in
                    emulator.pixel(x: x, y: line * GlassGlyphs.rows + y) ? word | (0x8000 >> UInt16(y)) : word
                }
            }
            var text = ""
            var x = 0
            while x < width {
                let cell = min(GlassGlyphs.halfWidth, width - x)
                if glass[x..<(x + cell)].allSatisfy({ $0 == 0 }) {
                    text += " "
                } else if x + 16 <= width, let scalar = wide[Array(glass[x..<(x + 16)])] {
                    text.unicodeScalars.append(scalar)
                    x += 16
                    continue
                } else if cell == GlassGlyphs.halfWidth, let scalar = narrow[Array(glass[x..<(x + cell)])] {
                    text.unicodeScalars.append(scalar)
                } else {
                    text += "?"
                }
                x += cell
            }
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
    }
}

/// Feeds a record's acknowledged writes to the OLED's address (vm/module/i2c-plain.c, the same
/// record as `GlassDecoder`'s) into an `OLEDEmulator`, each message a write of its own (START,
/// control byte, ...), and tells what a person read on the glass after each transaction: the
/// logic of the oled-decode tool, here so tests can run it on recorded lines. Bytes reach the
/// controller at the adapter's wire times (9 clocks per byte at the bus rate, from the start).
public struct OLEDRecordDecoder {
    public let emulator: OLEDEmulator
    public let glyphs: GlassGlyphs
    public let address: UInt8
    public let byteTime: TimeSpan

    public init(chip: OLEDEmulator.Chip, glyphs: GlassGlyphs, address: UInt8, busHz: Int = 100_000) {
        precondition((10_000...3_400_000).contains(busHz), "bus rate outside 10 kHz-3.4 MHz")
        self.emulator = OLEDEmulator(chip: chip)
        self.glyphs = glyphs
        self.address = address
        self.byteTime = TimeSpan(nanoseconds: 9_000_000_000 / Int64(busHz))
    }

    /// The output lines for `messages` (in record order), one per transaction that wrote to the
    /// OLED:
    ///     <start s.nnnnnnnnn> tx=<transaction> wire=<bytes on the wire, address bytes included> data=<display data bytes> |<line 1>|<line 2>|<line 3>|<line 4>|
    /// `<start> tx=<transaction> nak` per transaction the device did not acknowledge, then
    /// `violation <time>: <what>` per datasheet rule the emulator saw broken, and
    /// `transactions=<n> wire=<bytes> violations=<n>`. Throws when a transfer returned before its
    /// wire time was over (the record is not from such an adapter at this rate).
    public func decode(_ messages: [AdapterRecordMessage]) throws(AdapterRecordError) -> [String] {
        var output: [String] = []
        var transactionCount = 0
        var wireTotal = 0
        for transaction in try wireTransactions(messages, address: address, byteTime: byteTime) {
            let dataBefore = emulator.dataBytesWritten
            for write in transaction.writes {
                emulator.transactionStarted(at: write.start)
                for (byte, time) in write.bytes { emulator.receive(byte, at: time) }
                emulator.transactionEnded(at: write.end)
            }
            if transaction.nak {
                output.append("\(transaction.startText) tx=\(transaction.number) nak")
                continue
            }
            guard transaction.wrote else { continue }
            transactionCount += 1
            wireTotal += transaction.wire
            let glass = glyphs.read(emulator).map { "|" + $0 }.joined() + "|"
            output.append(
                "\(transaction.startText) tx=\(transaction.number) wire=\(transaction.wire) data=\(emulator.dataBytesWritten - dataBefore) \(glass)")
        }
        for violation in emulator.violations {
            output.append("violation \(violation)")
        }
        output.append("transactions=\(transactionCount) wire=\(wireTotal) violations=\(emulator.violations.count)")
        return output
    }
}
