/// A generic JSON (JSON5) tree, as `JSON5Parser` reads it. Objects keep their members in a list,
/// in the order of the file (so messages come out in a stable order), repeated keys included.
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number that is whole and fits 32 bits (`60`, `0x27`, `1e3`, `60.0`, `-2147483648`), exact:
    /// no binary floating point in between. 32 bits on every platform, so messages do not depend
    /// on the architecture.
    case integer(Int)
    /// Any other number, kept as written: a fraction, a whole number beyond 32 bits,
    /// `Infinity`, `NaN`. The configuration has no use for fractions; the text is for messages.
    case number(OtherNumber)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// A number that is not an `Int`.
    public struct OtherNumber: Hashable, Sendable {
        /// As the file wrote it (`1.5`, `0x100000000`, `-Infinity`).
        public var text: String
        /// True for a whole number (beyond 32 bits), false for a fraction, `Infinity` or `NaN`.
        public var isWhole: Bool

        public init(text: String, isWhole: Bool) {
            self.text = text
            self.isWhole = isWhole
        }
    }

    /// One member of an object, in file order.
    public struct Member: Hashable, Sendable {
        public var key: String
        public var value: JSONValue

        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value of `key` when this is an object that has it (the first, should the file repeat it).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }
}

/// One step of a path into a JSON tree: an object key or an array index.
public enum JSONPathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)
}

/// `lcd.wiring.d4`, `policy.cooldowns[1]`; a key that is not a plain name is quoted: `send.environment["A B"]`.
func renderPath(_ path: [JSONPathComponent]) -> String {
    var text = ""
    for component in path {
        switch component {
        case .index(let index):
            text += "[\(index)]"
        case .key(let key):
            if isPlainName(key) {
                text += (text.isEmpty ? "" : ".") + key
            } else {
                text += "[" + quoted(key) + "]"
            }
        }
    }
    return text
}

/// True for an ASCII name that needs no quotes in a key path: a letter, `_` or `$`, then those or digits.
func isPlainName(_ key: String) -> Bool {
    guard let first = key.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return key.unicodeScalars.allSatisfy { scalar in
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "$"
    }
}

/// `text` in double quotes, with quotes, backslashes and control characters escaped, for messages:
/// the log's JSON string escaping (`jsonString`).
public func quoted(_ text: String) -> String { jsonString(text) }

/// `value` in upper-case hex, zero-padded to `width` digits.
func hexDigits(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
