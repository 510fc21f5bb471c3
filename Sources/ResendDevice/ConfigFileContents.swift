import HALLinux
import ResendConfig

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
    public var failureReason: String? {
        switch self {
        case .text, .bytes: return nil
        case .missing: return missingFileDescription
        case .unreadable(let reason): return reason
        }
    }
}

extension DeviceConfig {
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
}

extension ConfigErrors {
    /// For the command line: the lines, and exit code 78 (EX_CONFIG).
    public var exitError: ExitError { ExitError(.config, lines.joined(separator: "\n")) }
}
