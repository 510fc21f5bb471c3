/// A key of the configuration schema: its path (`lcd.wiring.rs`) and whether it is a section
/// (an object of further keys) rather than a value.
public struct ConfigSchemaKey: Hashable, Sendable {
    public var path: String
    public var isSection: Bool
}

/// Reads a JSON tree against the configuration schema, collecting every problem instead of
/// stopping at the first. The schema is the code that reads it: each key a `ConfigSection` is
/// asked for is known, every other key is an error, and reading an empty tree lists the schema.
final class ConfigReader {
    private(set) var errors: [ConfigError] = []
    /// Every key asked for, in the order asked.
    private(set) var schema: [ConfigSchemaKey] = []
    /// The whole schema, for suggesting a key that belongs in another section; nil while the
    /// schema itself is being listed.
    let fullSchema: [ConfigSchemaKey]?

    init(fullSchema: [ConfigSchemaKey]?) {
        self.fullSchema = fullSchema
    }

    /// A file with thousands of mistakes (a generated or wrong file) gets the first
    /// `maxReported` of them and a count of the rest: the messages stay readable and the check
    /// stays fast (a message with its suggestions costs far more than reading a key).
    static let maxReported = 100
    /// Problems found after the first `maxReported`.
    private(set) var omitted = 0
    var isFull: Bool { errors.count >= ConfigReader.maxReported }

    func report(_ path: [JSONPathComponent], _ message: String) {
        guard !isFull else {
            omitted += 1
            return
        }
        errors.append(ConfigError(path: renderPath(path), message: message))
    }

    /// Every problem found, the count of those not shown last.
    var allErrors: [ConfigError] {
        guard omitted > 0 else { return errors }
        return errors + [
            ConfigError(
                path: "",
                message:
                    "\(omitted) more problem\(omitted == 1 ? "" : "s") not shown (only the first \(ConfigReader.maxReported) are); fix these and check again"
            )
        ]
    }

    func noteSchemaKey(_ path: [JSONPathComponent], isSection: Bool) {
        let key = ConfigSchemaKey(path: renderPath(path), isSection: isSection)
        if !schema.contains(key) { schema.append(key) }
    }

    // MARK: Values anywhere (also list items)

    /// The items of a list of `counts` entries, or nil with the problem reported: not a list
    /// ("expected <allowed>, got ..."), or too short or too long ("the list is empty; allowed:
    /// <allowed>"). The items themselves are the caller's to read.
    func items(_ value: JSONValue, at path: [JSONPathComponent], counts: ClosedRange<Int>, allowed: String) -> [JSONValue]? {
        guard case .array(let items) = value else {
            report(path, "expected \(allowed), got \(describe(value))")
            return nil
        }
        guard counts.contains(items.count) else {
            report(path, (items.isEmpty ? "the list is empty" : "the list has \(items.count) entries") + "; allowed: \(allowed)")
            return nil
        }
        return items
    }

    /// A whole number within `range`; `unit` completes "allowed: <unit> from A to B".
    func integer(_ value: JSONValue, at path: [JSONPathComponent], range: ClosedRange<Int>, unit: String) -> Int? {
        let allowed = "\(unit) from \(range.lowerBound) to \(range.upperBound)"
        switch value {
        case .integer(let number):
            guard range.contains(number) else {
                report(path, "\(number) is out of range; allowed: \(allowed)")
                return nil
            }
            return number
        case .number(let number):
            report(path, "\(number.text) is \(number.isWhole ? "out of range" : "not a whole number"); allowed: \(allowed)")
            return nil
        default:
            report(path, "expected \(allowed), got \(describe(value))")
            return nil
        }
    }

    func bool(_ value: JSONValue, at path: [JSONPathComponent]) -> Bool? {
        guard case .bool(let flag) = value else {
            report(path, "expected true or false, got \(describe(value))")
            return nil
        }
        return flag
    }

    /// A string; `what` describes what is allowed ("a GPIO line name such as \"GPIO17\"").
    func string(_ value: JSONValue, at path: [JSONPathComponent], what: String, allowEmpty: Bool) -> String? {
        guard case .string(let text) = value else {
            report(path, "expected \(what), got \(describe(value))")
            return nil
        }
        if !allowEmpty && text.isEmpty {
            report(path, "must not be empty; allowed: \(what)")
            return nil
        }
        if text.unicodeScalars.contains("\u{0}") {
            report(path, "\(quoted(text)) contains a NUL character (\\u0000), which no file name, argument or display can carry")
            return nil
        }
        return text
    }

    /// One of the named `options`.
    func choice<Value>(_ value: JSONValue, at path: [JSONPathComponent], options: [(name: String, value: Value)]) -> Value? {
        let names = options.map { $0.name }
        let allowed = names.map(quoted).joined(separator: ", ")
        guard case .string(let text) = value else {
            report(path, "expected one of \(allowed), got \(describe(value))")
            return nil
        }
        if let option = options.first(where: { $0.name == text }) { return option.value }
        var message = "\(quoted(text)) is not allowed; use one of \(allowed)"
        if let near = closestName(to: text, among: names) ?? names.first(where: { $0.lowercased() == text.lowercased() }) {
            message += " (did you mean \(quoted(near))?)"
        }
        report(path, message)
        return nil
    }
}

/// One object of the file (or an absent one: then every key takes its default). Ask for each key
/// of the schema, then call `finish()` to report the keys nobody asked for.
final class ConfigSection {
    let reader: ConfigReader
    let path: [JSONPathComponent]
    private let members: [JSONValue.Member]
    /// The index of each key's first member: lookups stay O(1) however many keys the file has.
    private let firstIndex: [String: Int]
    /// Set when the file has something other than an object here; reported by `finish()`, which
    /// then knows the keys to name.
    private let wrongValue: JSONValue?
    /// The keys asked for, in the order asked, and as a set.
    private var known: [String] = []
    private var knownSet: Set<String> = []

    init(reader: ConfigReader, path: [JSONPathComponent], value: JSONValue?) {
        self.reader = reader
        self.path = path
        var members: [JSONValue.Member] = []
        switch value {
        case .object(let given)?:
            members = given
            self.wrongValue = nil
        case nil:
            self.wrongValue = nil
        case let other?:
            self.wrongValue = other
        }
        var firstIndex: [String: Int] = [:]
        for (index, member) in members.enumerated() where firstIndex[member.key] == nil {
            firstIndex[member.key] = index
        }
        self.members = members
        self.firstIndex = firstIndex
    }

    func keyPath(_ key: String) -> [JSONPathComponent] { path + [.key(key)] }

    /// The value of `key`, if the file sets it; records `key` as known.
    func value(_ key: String, isSection: Bool = false) -> JSONValue? {
        if knownSet.insert(key).inserted { known.append(key) }
        reader.noteSchemaKey(keyPath(key), isSection: isSection)
        return firstIndex[key].map { members[$0].value }
    }

    func section(_ key: String) -> ConfigSection {
        ConfigSection(reader: reader, path: keyPath(key), value: value(key, isSection: true))
    }

    func integer(_ key: String, range: ClosedRange<Int>, unit: String) -> Int? {
        guard let value = value(key) else { return nil }
        return reader.integer(value, at: keyPath(key), range: range, unit: unit)
    }

    /// Like `integer`, but null is allowed and means "none" (nil, as when the key is absent).
    func optionalInteger(_ key: String, range: ClosedRange<Int>, unit: String) -> Int? {
        guard let value = value(key), value != .null else { return nil }
        return reader.integer(value, at: keyPath(key), range: range, unit: unit)
    }

    func bool(_ key: String) -> Bool? {
        guard let value = value(key) else { return nil }
        return reader.bool(value, at: keyPath(key))
    }

    func string(_ key: String, what: String, allowEmpty: Bool = true) -> String? {
        guard let value = value(key) else { return nil }
        return reader.string(value, at: keyPath(key), what: what, allowEmpty: allowEmpty)
    }

    /// Like `string`, but null is allowed and means "none".
    func optionalString(_ key: String, what: String, allowEmpty: Bool = true) -> String? {
        guard let value = value(key), value != .null else { return nil }
        return reader.string(value, at: keyPath(key), what: what + " or null", allowEmpty: allowEmpty)
    }

    func choice<Value>(_ key: String, options: [(name: String, value: Value)]) -> Value? {
        guard let value = value(key) else { return nil }
        return reader.choice(value, at: keyPath(key), options: options)
    }

    /// Reports a value that is not an object, and every key that is not part of the schema, with
    /// the nearest known key (or the section the key belongs in) and the keys allowed here.
    func finish() {
        let place = path.isEmpty ? "at the top level" : "in \(renderPath(path))"
        if let wrongValue {
            reader.report(path, "expected an object { ... } with the keys \(known.joined(separator: ", ")); got \(describe(wrongValue))")
            return
        }
        for member in members where !knownSet.contains(member.key) {
            guard !reader.isFull else {
                // Only counted: no need to work out a suggestion nobody sees.
                reader.report(keyPath(member.key), "")
                continue
            }
            var message = "unknown key"
            if let near = closestName(to: member.key, among: known) {
                message += " (did you mean '\(near)'?)"
            } else if let elsewhere = reader.fullSchema?.first(where: { $0.path.hasSuffix("." + member.key) || $0.path == member.key }) {
                message += " (did you mean '\(elsewhere.path)'?)"
            }
            reader.report(keyPath(member.key), message + "; allowed \(place): \(known.joined(separator: ", "))")
        }
    }
}

/// How a value reads in "got ...": `the string "60"`, `the number 5`, `null`, `a list`, `an object`.
func describe(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let flag): return flag ? "true" : "false"
    case .integer(let number): return "the number \(number)"
    case .number(let number): return "the number \(number.text)"
    case .string(let text): return "the string \(quoted(text))"
    case .array(let items): return items.isEmpty ? "an empty list" : "a list"
    case .object: return "an object"
    }
}
