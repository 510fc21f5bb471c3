import CharacterLCD
import HAL
import ResendCore

extension DeviceConfig {
    /// Parses and validates the JSON5 `text` of a configuration file; `source` names it in
    /// messages. Keys the file leaves out keep their defaults.
    ///
    /// Throws every problem found: the first syntax error (with line and column), or all the
    /// schema's complaints (unknown keys, wrong types, values out of range, keys given twice,
    /// texts the display cannot show).
    public static func parse(text: String, source: String) throws(ConfigErrors) -> DeviceConfig {
        try parse(bytes: Array(text.utf8), source: source)
    }

    /// `parse(text:source:)` for the file's bytes as read: bytes that are not UTF-8 are a syntax
    /// error with their line and column.
    public static func parse(bytes: [UInt8], source: String) throws(ConfigErrors) -> DeviceConfig {
        let (config, errors) = try readAll(bytes: bytes, source: source)
        guard errors.isEmpty else { throw ConfigErrors(source: source, errors: errors) }
        return config
    }

    /// The keypad section as `output off` needs it from a file that may be wrong elsewhere: the
    /// door must be driven off whenever its own keys are right. Returns the keypad read from the
    /// file (its `enabled`, `output.line` and `output.activeLow` as the file says) when none of
    /// the file's problems concerns those keys, their sections or the file as a whole (a syntax
    /// error, problems not shown); else throws them all, as `parse` does.
    public static func parseOutputKeys(bytes: [UInt8], source: String) throws(ConfigErrors) -> Keypad {
        let (config, errors) = try readAll(bytes: bytes, source: source)
        let needed = ["keypad.enabled", "keypad.output.line", "keypad.output.activeLow"]
        let concerned = errors.contains { error in
            error.path.isEmpty
                || needed.contains { key in
                    key == error.path || key.hasPrefix(error.path + ".") || error.path.hasPrefix(key + ".") || error.path.hasPrefix(key + "[")
                }
        }
        if concerned { throw ConfigErrors(source: source, errors: errors) }
        return config.keypad
    }

    /// The file read with every key it gets right, and every problem found (none: a valid file).
    /// Throws only a syntax error: then nothing can be read.
    private static func readAll(bytes: [UInt8], source: String) throws(ConfigErrors) -> (DeviceConfig, [ConfigError]) {
        let document: JSON5Document
        switch JSON5Parser.parse(bytes) {
        case .success(let parsed):
            document = parsed
        case .failure(let syntax):
            throw ConfigErrors(source: source, errors: [ConfigError(path: "", message: syntax.message, line: syntax.line, column: syntax.column)])
        }
        let reader = ConfigReader(fullSchema: schema)
        for duplicate in document.duplicates {
            reader.report(
                duplicate.path,
                "given twice (at \(duplicate.firstLine):\(duplicate.firstColumn) and \(duplicate.line):\(duplicate.column)); give each key once")
        }
        let config = read(document.value, reader: reader)
        return (config, reader.errors.isEmpty ? [] : reader.allErrors)
    }

    /// One line for `config check`: what this configuration sets up.
    public var summary: String {
        var parts: [String] = []
        parts.append(
            "button \(button.line) (\(button.bias.summary), \(button.activeLow ? "active-low" : "active-high"), debounce \(button.debounceMs) ms \(button.debounceMode.name))"
        )
        parts.append("LED " + (led.line.map { "\($0)\(led.activeLow ? " (active-low)" : "")" } ?? "none"))
        let address: String
        switch lcd.address {
        case .auto: address = "auto"
        case .fixed(let fixed): address = DeviceConfig.hexAddress(Int(fixed.rawValue))
        }
        if display.isOLED {
            parts.append(
                "OLED \(display.kind.rawValue) 128x64 on i2c-\(lcd.bus) at \(DeviceConfig.hexAddress(Int(display.address.rawValue))), font \(display.font)"
            )
        } else {
            parts.append(
                "LCD \(lcd.geometry.name) ROM \(lcd.rom.rawValue) on i2c-\(lcd.bus) at \(address)" + (lcd.wiring == .common ? "" : ", custom wiring"))
        }
        parts.append("cooldown \(cooldown.seconds) s")
        if let command = send.command {
            parts.append("send \(command[0]) (timeout \(send.timeoutSeconds) s)")
        } else {
            parts.append("no send command")
        }
        parts.append("state \(stateFile ?? "off")")
        if policy.enabled {
            parts.append(
                "policy on (cooldowns \(policy.cooldowns.map(String.init).joined(separator: "/")) s, at most \(policy.maxSends) sends per \(policy.windowSeconds) s)"
            )
        } else {
            parts.append("policy off")
        }
        parts.append("log \(log.format.rawValue)")
        if keypad.enabled { parts.append(keypad.summary) }
        return parts.joined(separator: "; ")
    }
}
