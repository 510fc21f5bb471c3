import CharacterLCD
import HAL
import HALLinux
import ResendCore

/// What reading a configuration file (or another text file the user names) gave.
public enum ConfigFileContents: Sendable {
    /// The file's bytes, as read: the parser checks that they are UTF-8 (with a line and column).
    case bytes([UInt8])
    /// Text already decoded (tests, and callers that hold a String).
    case text(String)
    /// There is no file at the path.
    case missing
    /// There is something at the path but it cannot be read (`reason` says why, without the path:
    /// the errno's meaning, "is a FIFO (named pipe), not a regular file", "is larger than ...").
    case unreadable(reason: String)

    /// Reads the configuration file at `path`: never follows a link, opens nothing but a regular
    /// file, never blocks on a FIFO or device, reads at most `DeviceConfig.maximumFileSize` bytes.
    public static func read(_ path: String) -> ConfigFileContents {
        read(path, limit: DeviceConfig.maximumFileSize, what: "a configuration file")
    }

    /// Reads the text file at `path` as `read(_:)` does, with at most `limit` bytes; `what` names
    /// the file's role in the message about the limit ("a script file"). Gives the bytes as read:
    /// the configuration parser reports bytes that are not UTF-8 with their line and column.
    public static func read(_ path: String, limit: Int, what: String) -> ConfigFileContents {
        do throws(FileReadError) {
            return .bytes(try FileReader.read(path, limit: limit))
        } catch {
            if error.isMissing { return .missing }
            return .unreadable(reason: error.reason(limitFor: what))
        }
    }

    /// The file's text; bytes that are not UTF-8 become U+FFFD (for files other than the
    /// configuration, which `DeviceConfig.parse(bytes:source:)` reads as bytes). Nil when unread.
    public var text: String? {
        switch self {
        case .text(let text): return text
        case .bytes(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .missing, .unreadable: return nil
        }
    }

    /// The reason as `config check` and `--script-file` print it: a missing file is ENOENT too.
    var failureReason: String? {
        switch self {
        case .text, .bytes: return nil
        case .missing: return missingFileDescription
        case .unreadable(let reason): return reason
        }
    }
}

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
        let document: JSON5Document
        switch JSON5Parser.parse(bytes) {
        case .success(let parsed):
            document = parsed
        case .failure(let syntax):
            throw ConfigErrors(source: source, errors: [ConfigError(path: "", message: syntax.message, line: syntax.line, column: syntax.column)])
        }
        let reader = ConfigReader(fullSchema: schema)
        for duplicate in document.duplicates {
            reader.report(duplicate.path, "given twice (at \(duplicate.firstLine):\(duplicate.firstColumn) and \(duplicate.line):\(duplicate.column)); give each key once")
        }
        let config = read(document.value, reader: reader)
        guard reader.errors.isEmpty else { throw ConfigErrors(source: source, errors: reader.allErrors) }
        return config
    }

    /// Loads the configuration for `run` or `simulate`. `explicit` tells whether the user named the
    /// file (`--config PATH`): then a missing file is an error; the default path
    /// (`DeviceConfig.defaultPath`) may be absent, which means "all defaults". A file that exists
    /// but cannot be read is always an error. Every error exits 78 (EX_CONFIG).
    public static func load(path: String, explicit: Bool, read: (String) -> ConfigFileContents) throws(ExitError) -> DeviceConfig {
        switch read(path) {
        case .missing:
            if explicit { throw ExitError(.config, "\(path): no such configuration file") }
            return DeviceConfig()
        case .unreadable(let reason):
            throw ExitError(.config, "\(path): cannot read the configuration file: \(reason)")
        case .text(let text):
            do throws(ConfigErrors) {
                return try parse(text: text, source: path)
            } catch {
                throw error.exitError
            }
        case .bytes(let bytes):
            do throws(ConfigErrors) {
                return try parse(bytes: bytes, source: path)
            } catch {
                throw error.exitError
            }
        }
    }

    /// `load(path:explicit:read:)` with a reader that cannot tell a missing file from an unreadable
    /// one (nil for both): a nil for an explicit path is an error, for the default path it means
    /// "all defaults".
    public static func load(path: String, explicit: Bool = true, readFile: (String) -> String?) throws(ExitError) -> DeviceConfig {
        try load(path: path, explicit: explicit) { path in
            if let text = readFile(path) { return .text(text) }
            return .missing
        }
    }

    /// The file a command line names with `--config`, or the default file (which may be absent).
    public static func load(for arguments: ParsedArguments, read: (String) -> ConfigFileContents) throws(ExitError) -> DeviceConfig {
        try load(path: arguments.value("config") ?? defaultPath, explicit: arguments.value("config") != nil, read: read)
    }

    /// One line for `config check`: what this configuration sets up.
    public var summary: String {
        let bias: String
        switch button.bias {
        case .pullUp: bias = "pull-up"
        case .pullDown: bias = "pull-down"
        case .disabled: bias = "no bias"
        case .asIs: bias = "bias as-is"
        }
        var parts: [String] = []
        parts.append("button \(button.line) (\(bias), \(button.activeLow ? "active-low" : "active-high"), debounce \(button.debounceMs) ms \(button.debounceMode == .stable ? "stable" : "prompt"))")
        parts.append("LED " + (led.line.map { "\($0)\(led.activeLow ? " (active-low)" : "")" } ?? "none"))
        let address: String
        switch lcd.address {
        case .auto: address = "auto"
        case .fixed(let fixed): address = DeviceConfig.hexAddress(Int(fixed.rawValue))
        }
        parts.append("LCD \(lcd.geometry.name) ROM \(lcd.rom.rawValue) on i2c-\(lcd.bus) at \(address)" + (lcd.wiring == .common ? "" : ", custom wiring"))
        parts.append("cooldown \(cooldown.seconds) s")
        if let command = send.command {
            parts.append("send \(command[0]) (timeout \(send.timeoutSeconds) s)")
        } else {
            parts.append("no send command")
        }
        parts.append("state \(stateFile)")
        if policy.enabled {
            parts.append("policy on (cooldowns \(policy.cooldowns.map(String.init).joined(separator: "/")) s, at most \(policy.maxSends) sends per \(policy.windowSeconds) s)")
        } else {
            parts.append("policy off")
        }
        parts.append("log \(log.format.rawValue)")
        if keypad.enabled { parts.append(keypad.summary) }
        return parts.joined(separator: "; ")
    }
}
