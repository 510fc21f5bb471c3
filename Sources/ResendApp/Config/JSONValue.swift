import FoundationEssentials

/// A generic JSON (JSON5) tree. Objects keep their members in a list, so the order of the file
/// can be kept (`JSONValue.decode(json5:)` restores it) and messages come out in a stable order.
public indirect enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number that is whole and fits an `Int` (`60`, `0x27`, `1e3`, `60.0`).
    case integer(Int)
    /// Any other number: a fraction, one too large for `Int`, `Infinity`, `NaN`.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([Member])

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

    /// Parses JSON5 `text` with FoundationEssentials' `JSONDecoder` (`allowsJSON5`), then puts
    /// object members back in the order of the file using `outline` (the decoder keeps members in
    /// a dictionary, which loses the order). Returns nil when the decoder rejects the text; it does
    /// not say where, which is what `JSON5Scanner` is for.
    ///
    /// Give it only text `JSON5Scanner` accepted: the Swift 6.3 decoder traps (crashes the
    /// process) on some invalid numbers, such as `0x0x23`, which the scanner refuses.
    static func decode(json5 text: String, outline: JSON5Outline?) -> JSONValue? {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        guard let value = try? decoder.decode(DecodedJSON.self, from: Data(text.utf8)).value else { return nil }
        guard let outline else { return value }
        return value.ordered(by: outline, at: [])
    }

    /// This tree with each object's members in the order `outline` recorded for its path; members
    /// the outline does not know (it never happens when scanner and decoder agree) go last.
    func ordered(by outline: JSON5Outline, at path: [JSONPathComponent]) -> JSONValue {
        switch self {
        case .array(let items):
            return .array(items.enumerated().map { index, item in item.ordered(by: outline, at: path + [.index(index)]) })
        case .object(let members):
            let order = outline.keyOrder[path] ?? []
            func rank(_ key: String) -> Int { order.firstIndex(of: key) ?? order.count }
            let sorted = members.enumerated().sorted { a, b in
                (rank(a.element.key), a.offset) < (rank(b.element.key), b.offset)
            }
            return .object(sorted.map { _, member in
                Member(member.key, member.value.ordered(by: outline, at: path + [.key(member.key)]))
            })
        default:
            return self
        }
    }
}

/// What the decoder produces: objects sorted by key (the dictionary has no order of its own).
private struct DecodedJSON: Decodable {
    var value: JSONValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let bool = try? container.decode(Bool.self) {
            value = .bool(bool)
        } else if let integer = try? container.decode(Int.self) {
            value = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            value = .number(number)
        } else if let string = try? container.decode(String.self) {
            value = .string(string)
        } else if let object = try? container.decode([String: DecodedJSON].self) {
            value = .object(object.sorted { $0.key < $1.key }.map { JSONValue.Member($0.key, $0.value.value) })
        } else {
            value = .array(try container.decode([DecodedJSON].self).map(\.value))
        }
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
func quoted(_ text: String) -> String { jsonString(text) }

/// `value` in upper-case hex, zero-padded to `width` digits.
func hexDigits(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
