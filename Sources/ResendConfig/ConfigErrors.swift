/// One problem in a configuration file.
public struct ConfigError: Hashable, Sendable {
    /// Where: a key path (`lcd.address`, `policy.cooldowns[1]`), empty for the file as a whole.
    public var path: String
    /// What is wrong, naming the value and what is allowed.
    public var message: String
    /// For syntax errors: the 1-based line and column the message is about.
    public var line: Int?
    public var column: Int?

    public init(path: String, message: String, line: Int? = nil, column: Int? = nil) {
        self.path = path
        self.message = message
        self.line = line
        self.column = column
    }

    /// One line for the user: `FILE: key.path: message`, or for a syntax error
    /// `FILE:LINE:COL: syntax error: message` (the form editors jump to).
    public func rendered(source: String) -> String {
        if let line, let column {
            return "\(source):\(line):\(column): syntax error: \(message)"
        }
        return path.isEmpty ? "\(source): \(message)" : "\(source): \(path): \(message)"
    }
}

/// Every problem found in one configuration file (at least one). Syntax errors stop at the first;
/// otherwise all are collected.
public struct ConfigErrors: Error, Hashable, Sendable {
    /// The file's name as given (for messages).
    public var source: String
    public var errors: [ConfigError]

    public init(source: String, errors: [ConfigError]) {
        precondition(!errors.isEmpty, "ConfigErrors: at least one error")
        self.source = source
        self.errors = errors
    }

    /// One line per error, in the order found.
    public var lines: [String] { errors.map { $0.rendered(source: source) } }
}
