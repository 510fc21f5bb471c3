import CharacterLCD
import HAL
import ResendCore

extension DeviceConfig {
    /// `display`: which display the device drives. The HD44780 character LCD (the `lcd` section)
    /// by default; a 128x64 OLED (SSD1306 or SH1106) on the same I2C bus (`lcd.bus`) shows any
    /// language with GNU Unifont's glyphs (docs/wiring.md).
    public struct Display: Hashable, Sendable {
        public enum Kind: String, CaseIterable, Hashable, Sendable {
            case hd44780
            case ssd1306
            case sh1106

            /// The OLED controller, nil for the character LCD.
            public var oledController: OLEDController? { OLEDController(name: rawValue) }
        }

        /// `display.kind`.
        public var kind = Kind.hd44780
        /// `display.address`: the OLED's 7-bit address (0x3C with SA0 low, 0x3D high).
        public var address = Display.defaultAddress
        /// `display.font`: the GNU Unifont .hex file the OLED's glyphs come from.
        public var font = Display.defaultFont
        /// `display.contrast`: 0-255.
        public var contrast = Display.defaultContrast
        /// `display.flip`: turn the picture by 180 degrees (module mounted upside down).
        public var flip = false

        public init() {}

        public var isOLED: Bool { kind != .hd44780 }

        public static let defaultAddress = I2CAddress(constant: 0x3C)
        /// Debian's `unifont` package.
        public static let defaultFont = "/usr/share/unifont/unifont.hex"
        public static let addressRange: ClosedRange<Int> = 0x3C...0x3D
        public static let contrastRange = 0...255
        /// Both controllers' contrast after reset (SSD1306 and SH1106 datasheets: 0x7F).
        public static let defaultContrast = 0x7F
        /// The largest .hex file read (Unifont 15's plane 0 is 3.8 MB).
        public static let maximumFontSize = 16 << 20
    }

    /// Reads the `display` section.
    static func readDisplay(_ section: ConfigSection, reader: ConfigReader) -> Display {
        var display = Display()
        if let kind = section.choice("kind", options: Display.Kind.allCases.map { ($0.rawValue, $0) }) { display.kind = kind }
        if let value = section.value("address") {
            if case .integer(let number) = value, Display.addressRange.contains(number) {
                display.address = I2CAddress(constant: UInt8(number))
            } else {
                reader.report(section.keyPath("address"), "expected 0x3C (SA0 low) or 0x3D (SA0 high), got \(describe(value))")
            }
        }
        if let font = section.string("font", what: "an absolute path such as \(quoted(Display.defaultFont))", allowEmpty: false) {
            if let problem = pathProblem(font) {
                reader.report(section.keyPath("font"), "\(jsonString(font)) \(problem)")
            } else if !font.hasPrefix("/") {
                reader.report(
                    section.keyPath("font"), "\(quoted(font)) is not an absolute path; allowed: a path such as \(quoted(Display.defaultFont))")
            } else {
                display.font = font
            }
        }
        if let contrast = section.integer("contrast", range: Display.contrastRange, unit: "a level") { display.contrast = contrast }
        if let flip = section.bool("flip") { display.flip = flip }
        return display
    }

    /// Every text the OLED may show, with its key path, templates expanded at their widest
    /// number: what the font must have glyphs for and what must fit 128 pixels.
    public var displayedTexts: [(path: String, text: String)] {
        var texts: [(path: String, text: String)] = []
        for (key, get, _) in DeviceConfig.textKeys {
            var text = get(self.texts)
            if key == "countdownLabel" { text = self.texts.expand(text, seconds: longestCooldownSeconds) }
            if key == DeviceConfig.lockoutLabelKey { text = self.texts.expand(text, seconds: policy.windowSeconds) }
            texts.append((path: "texts." + key, text: text))
        }
        if keypad.enabled {
            for (key, placeholder, get, _) in DeviceConfig.entryTextKeys {
                var text = get(keypad.texts)
                if let placeholder { text = DeviceConfig.replacing(placeholder, in: text, with: "999") }
                if key == "fieldPrefix" {
                    // The field as it shows: the cells still to type (`emptyCharacter`) and the
                    // typed ones (`maskCharacter`, or digits); each needs its glyph and must fit.
                    let prefix = text
                    text += String(repeating: keypad.texts.maskCharacter, count: keypad.entry.maxLength)
                    texts.append(
                        (path: "keypad.texts." + key, text: prefix + String(repeating: keypad.texts.emptyCharacter, count: keypad.entry.maxLength)))
                }
                texts.append((path: "keypad.texts." + key, text: text))
            }
        }
        return texts
    }

    /// The code points of every displayed text (the glyphs to keep from the font file).
    public var displayedScalars: Set<UInt32> {
        var scalars = Set<UInt32>()
        for (_, text) in displayedTexts {
            for scalar in text.unicodeScalars { scalars.insert(scalar.value) }
        }
        // The seconds and counts of the templates take every digit.
        for scalar in DeviceConfig.digits.unicodeScalars { scalars.insert(scalar.value) }
        return scalars
    }

    /// The texts the OLED cannot show with `font`: a character the font lacks (naming the text,
    /// the character and its code point) or a text wider than the 128-pixel glass. `fontPath`
    /// names the file in the messages. Empty when all is well.
    public func glyphProblems(font: Unifont, fontPath: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        if let digit = font.firstMissing(in: DeviceConfig.digits) {
            problems.append(
                ConfigError(
                    path: "texts.countdownLabel",
                    message: "the seconds need the digits 0-9, and the font \(fontPath) has no glyph for \(glyphName(digit))"))
        }
        for (path, text) in displayedTexts {
            // Unifont has glyphs for combining marks, but each on a cell of its own: the layout
            // puts glyphs side by side and cannot place a mark over the character before it.
            if let mark = text.unicodeScalars.first(where: isCombiningMark) {
                problems.append(
                    ConfigError(
                        path: path,
                        message:
                            "\(jsonString(text)) has the combining mark \(glyphName(mark)), which the OLED cannot place over the character before it (write the precomposed character, e.g. 'é' U+00E9)"
                    ))
                continue
            }
            if let scalar = font.firstMissing(in: text) {
                problems.append(
                    ConfigError(
                        path: path,
                        message:
                            "\(jsonString(text)) has \(glyphName(scalar)), which the font \(fontPath) has no glyph for"
                    ))
                continue
            }
            let width = font.width(of: text)
            if width > OLEDGlass.width {
                problems.append(
                    ConfigError(
                        path: path, message: "\(jsonString(text)) is \(width) pixels wide; the \(display.kind.rawValue) glass has \(OLEDGlass.width)")
                )
            }
        }
        return problems
    }

    static let digits = "0123456789"

    /// `text` with each `placeholder` replaced by `value` (UTF-8 search).
    static func replacing(_ placeholder: String, in text: String, with value: String) -> String {
        let bytes = Array(text.utf8)
        let pattern = Array(placeholder.utf8)
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if !pattern.isEmpty && index + pattern.count <= bytes.count && Array(bytes[index..<(index + pattern.count)]) == pattern {
                result += value.utf8
                index += pattern.count
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// A mark drawn over or beside the character before it (Unicode's Mn, Me and Mc).
func isCombiningMark(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .spacingMark: return true
    default: return false
    }
}

/// "'码' (U+7801)", or "U+0301" for a character that is not visible on its own.
func glyphName(_ scalar: Unicode.Scalar) -> String {
    let name = characterName(scalar)
    return name.hasPrefix("U+") ? name : name + " (U+" + Unifont.codePointText(scalar.value) + ")"
}
