import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig

/// The OLED the simulator emulates instead of the LCD (`display.kind` ssd1306 or sh1106 in the
/// configuration), with the glyphs the configuration's texts need.
public struct SimulatedOLED: Sendable {
    public var controller: OLEDController
    public var font: Unifont
    public var contrast: UInt8
    public var flip: Bool

    public init(controller: OLEDController, font: Unifont, contrast: UInt8 = 0x7F, flip: Bool = false) {
        self.controller = controller
        self.font = font
        self.contrast = contrast
        self.flip = flip
    }
}

/// What a person reads on the emulated glass: each 16-pixel line matched cell by cell against the
/// font's glyphs (a blank 8-pixel cell is a space; else a 16-wide glyph, then an 8-wide one, that
/// equals the pixels there; "?" for pixels no glyph explains). Trailing spaces are dropped.
public func readGlass(_ emulator: OLEDEmulator, font: Unifont) -> [String] {
    let width = OLEDEmulator.glassWidth
    var lines: [String] = []
    // Glyph columns as 16-bit words, top row in bit 15, for a quick comparison.
    var wide: [(Unicode.Scalar, [UInt16])] = []
    var narrow: [(Unicode.Scalar, [UInt16])] = []
    for (code, glyph) in font.glyphs.sorted(by: { $0.key < $1.key }) {
        guard let scalar = Unicode.Scalar(code), code != 0x20 else { continue }
        let columns = (0..<glyph.width).map { x in
            (0..<UnifontGlyph.height).reduce(UInt16(0)) { word, y in glyph.pixel(x: x, y: y) ? word | (0x8000 >> UInt16(y)) : word }
        }
        if glyph.width == Unifont.fullWidth { wide.append((scalar, columns)) } else { narrow.append((scalar, columns)) }
    }
    for line in 0..<(OLEDEmulator.glassHeight / UnifontGlyph.height) {
        let glass = (0..<width).map { x in
            (0..<UnifontGlyph.height).reduce(UInt16(0)) { word, y in
                emulator.pixel(x: x, y: line * UnifontGlyph.height + y) ? word | (0x8000 >> UInt16(y)) : word
            }
        }
        var text = ""
        var x = 0
        while x < width {
            let cell = min(Unifont.halfWidth, width - x)
            if glass[x..<(x + cell)].allSatisfy({ $0 == 0 }) {
                text += " "
                x += cell
                continue
            }
            func matches(_ columns: [UInt16]) -> Bool { x + columns.count <= width && Array(glass[x..<(x + columns.count)]) == columns }
            if let match = wide.first(where: { matches($0.1) }) ?? narrow.first(where: { matches($0.1) }) {
                text.unicodeScalars.append(match.0)
                x += match.1.count
            } else {
                text += "?"
                x += cell
            }
        }
        while text.hasSuffix(" ") { text.removeLast() }
        lines.append(text)
    }
    return lines
}

/// The glass in half-block characters: one terminal row per two glass rows (▀ top lit, ▄ bottom
/// lit, █ both), 32 rows of 128 columns.
public func halfBlockRows(_ emulator: OLEDEmulator) -> [String] {
    stride(from: 0, to: OLEDEmulator.glassHeight, by: 2).map { y in
        String(
            (0..<OLEDEmulator.glassWidth).map { x -> Character in
                switch (emulator.pixel(x: x, y: y), emulator.pixel(x: x, y: y + 1)) {
                case (true, true): return "█"
                case (true, false): return "▀"
                case (false, true): return "▄"
                case (false, false): return " "
                }
            })
    }
}

/// Writes `bytes` (a picture of the glass, `OLEDEmulator.pgm`) to `path`, replacing it; never
/// through a symbolic link. Returns why it could not, nil on success.
public func savePicture(_ bytes: [UInt8], to path: String) -> String? {
    do throws(HALError) {
        try StandardStreams.replaceFile(path, with: bytes)
        return nil
    } catch {
        return describe(error)
    }
}
