import CharacterLCD
import ResendConfig

extension DeviceConfig {
    /// For an OLED (`display.kind` ssd1306 or sh1106): reads `display.font` (a GNU Unifont .hex
    /// file, at most `Display.maximumFontSize` bytes, opened as every outside file is) and keeps
    /// the glyphs of the texts the device shows. Nil for the character LCD.
    ///
    /// Exit 78 (EX_CONFIG) with `source: display.font: ...` when the file is missing, unreadable
    /// or malformed (naming its line), and with one `source: texts.KEY: ...` line per text whose
    /// character the font lacks (the text, the character, its code point) or that is wider than
    /// the glass.
    public func loadOLEDFont(source: String, read: (String) -> ConfigFileContents) throws(ExitError) -> Unifont? {
        guard display.isOLED else { return nil }
        let path = display.font
        let bytes: [UInt8]
        switch read(path) {
        case .bytes(let read): bytes = read
        case .text(let text): bytes = Array(text.utf8)
        case .missing:
            throw ExitError(
                .config, "\(source): display.font: \(path): no such file (Debian's package unifont installs /usr/share/unifont/unifont.hex)")
        case .unreadable(let reason):
            throw ExitError(.config, "\(source): display.font: \(path): \(reason)")
        }
        let font: Unifont
        do throws(UnifontError) {
            font = try Unifont(parsing: bytes, wanted: displayedScalars)
        } catch {
            throw ExitError(.config, "\(source): display.font: \(path): not a GNU Unifont .hex file: \(error.message)")
        }
        let problems = glyphProblems(font: font, fontPath: path)
        if !problems.isEmpty {
            throw ExitError(.config, problems.map { $0.rendered(source: source) }.joined(separator: "\n"))
        }
        return font
    }

    /// `ConfigFileContents.read` with the font's size limit.
    public static func readFontFile(_ path: String) -> ConfigFileContents {
        ConfigFileContents.read(path, limit: Display.maximumFontSize, what: "a font file")
    }
}
