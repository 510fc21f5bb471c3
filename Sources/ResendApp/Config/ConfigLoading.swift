import Glibc
import HAL
import HALLinux

/// What reading a configuration file (or another text file the user names) gave.
public enum ConfigFileContents: Sendable {
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
    /// the file's role in the message about the limit ("a script file").
    public static func read(_ path: String, limit: Int, what: String) -> ConfigFileContents {
        do throws(FileReadError) {
            return .text(try StandardStreams.readTextFile(path, limit: limit))
        } catch {
            if error.isMissing { return .missing }
            return .unreadable(reason: error.reason(limitFor: what))
        }
    }

    /// The reason as `config check` and `--script-file` print it: a missing file is ENOENT too.
    var failureReason: String? {
        switch self {
        case .text: return nil
        case .missing: return describe(errno: ENOENT)
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
        // The scanner goes first, and the decoder sees only what the scanner accepts: besides
        // giving a place for the error, this keeps the decoder from input it cannot take
        // (FoundationEssentials in Swift 6.3 traps on a number like 0x0x23 when decoding an Int).
        let outline: JSON5Outline
        switch JSON5Scanner.scan(text) {
        case .success(let found):
            outline = found
        case .failure(let syntax):
            throw ConfigErrors(source: source, errors: [ConfigError(path: "", message: syntax.message, line: syntax.line, column: syntax.column)])
        }
        guard let tree = JSONValue.decode(json5: text, outline: outline) else {
            // The scanner found nothing the decoder refuses: say so rather than guess a place.
            throw ConfigErrors(source: source, errors: [ConfigError(path: "", message: "syntax error: not valid JSON5 (the decoder does not say where)")])
        }
        let reader = ConfigReader(fullSchema: schema)
        for duplicate in outline.duplicates {
            reader.report(duplicate.path, "given twice (at \(duplicate.firstLine):\(duplicate.firstColumn) and \(duplicate.line):\(duplicate.column)); give each key once")
        }
        let config = read(tree, reader: reader)
        guard reader.errors.isEmpty else { throw ConfigErrors(source: source, errors: reader.errors) }
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
        return parts.joined(separator: "; ")
    }
}
