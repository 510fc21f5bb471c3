import CharacterLCD
import ResendCore

// The one check of a display text's characters, for the configuration file (`texts.*`) and the
// flags (`--title`, `--send-label`, ...) alike. Width and `{s}` are `Texts.problems` (ResendCore).

/// Why `text` cannot be shown on an LCD with `rom`, or nil when every character can. The HD44780
/// shows one ROM glyph per Unicode scalar, so a character made of several scalars (a combining
/// accent, a ZWJ emoji, a flag, "\r\n") is refused at its first scalar the ROM lacks:
/// `"e\u0301" has U+0301, which the A00 ROM cannot show`; when the other ROM could show the text,
/// the message says how to choose it (`romSetting`: `lcd.rom` in the configuration file).
public func textROMProblem(_ text: String, rom: CharacterROM, romSetting: String = "lcd.rom") -> String? {
    do throws(UnsupportedCharacter) {
        _ = try rom.encode(text)
        return nil
    } catch {
        var message = "\(jsonString(text)) has \(characterName(error.character)), which the \(rom.rawValue) ROM cannot show"
        let other: CharacterROM = rom == .a00 ? .a02 : .a00
        if (try? other.encode(text)) != nil {
            message += " (the \(other.rawValue) ROM can: set \(romSetting) to \(jsonString(other.rawValue)) if the module has it)"
        }
        return message
    }
}

/// 'ß' for a visible character, U+0301 for one that is not (controls, marks, spaces).
func characterName(_ scalar: Unicode.Scalar) -> String {
    switch scalar.properties.generalCategory {
    case .control, .format, .nonspacingMark, .enclosingMark, .spacingMark, .spaceSeparator,
        .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
        return "U+" + String(repeating: "0", count: max(0, 4 - String(scalar.value, radix: 16).count))
            + String(scalar.value, radix: 16, uppercase: true)
    default:
        return "'" + String(scalar) + "'"
    }
}
