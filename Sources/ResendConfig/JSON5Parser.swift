/// The first place where a file is not JSON5 (or not UTF-8): 1-based line and column (in Unicode
/// scalars; a tab counts as one), and what is wrong there.
struct JSON5SyntaxError: Error, Hashable, Sendable {
    var line: Int
    var column: Int
    var message: String
}

/// What a well-formed file holds: the tree (members in file order) and the keys given twice.
struct JSON5Document: Sendable {
    var value: JSONValue
    /// Keys that appear a second (third, ...) time in the same object, in file order.
    var duplicates: [DuplicateKey]

    struct DuplicateKey: Hashable, Sendable {
        /// The path of the key itself (`lcd.address`).
        var path: [JSONPathComponent]
        var line: Int
        var column: Int
        /// Where the key was given first.
        var firstLine: Int
        var firstColumn: Int
    }
}

/// The configuration file's JSON5 parser: one pass over the file's bytes, building the tree and
/// saying *where* a file goes wrong. No Foundation, no recursion deeper than `maxDepth`, no
/// arithmetic on input that can trap; time and memory linear in the file (duplicate keys are
/// found with one hash table per object).
///
/// It follows the JSON5 specification (https://spec.json5.org, 1.0.0): comments, trailing commas,
/// single quotes, identifier keys (with `\uHHHH` escapes, decoded), hex numbers, `.5`, `5.`, `+1`,
/// `Infinity`, `NaN`, the escapes `\' \" \\ \b \f \n \r \t \v \0 \xHH \uHHHH` (surrogate pairs
/// combined), line continuations (a backslash ending a line adds nothing), and the white space of
/// the specification (including U+00A0, U+2028, U+2029, U+FEFF and the other space separators).
///
/// Where a configuration is better served by refusing, it is stricter than the specification,
/// always with the line and column:
/// - NUL (`\0`, `\x00`, `\u0000`, or the raw byte) in a string: no file name, argument or display
///   text can carry it.
/// - Raw control characters (U+0000-U+001F) in a string: write them as escapes.
/// - Escapes of other characters (`\q`, `\1`): the specification reads `\q` as `q`, but in a
///   configuration it is a typo far more often than intended.
/// - Nesting deeper than `maxDepth` (a configuration is three levels deep).
/// - Numbers beyond the range of a Double (`1e400`).
/// - Bytes that are not UTF-8.
/// It stops at the first error: there is no sensible way to go on after, say, a missing quote.
struct JSON5Parser {
    /// Objects and lists inside each other, the top-level value counting as 1. The configuration
    /// needs 3 (`{lcd: {wiring: {...}}}`); 32 leaves room and keeps the recursion shallow.
    static let maxDepth = 32

    private let bytes: [UInt8]
    private var position = 0
    /// The path to the value being read, for duplicate keys.
    private var path: [JSONPathComponent] = []
    private var duplicates: [(path: [JSONPathComponent], offset: Int, firstOffset: Int)] = []

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The tree of `bytes` (UTF-8 JSON5), or the first error in it.
    static func parse(_ bytes: [UInt8]) -> Result<JSON5Document, JSON5SyntaxError> {
        var parser = JSON5Parser(bytes)
        do throws(JSON5SyntaxError) {
            try parser.checkUTF8()
            let value = try parser.parseDocument()
            return .success(JSON5Document(value: value, duplicates: parser.resolveDuplicates()))
        } catch {
            return .failure(error)
        }
    }

    static func parse(_ text: String) -> Result<JSON5Document, JSON5SyntaxError> {
        parse(Array(text.utf8))
    }

    // MARK: Grammar

    private mutating func parseDocument() throws(JSON5SyntaxError) -> JSONValue {
        try skipTrivia()
        guard position < bytes.count else {
            throw error(at: position, "the file has no value; a configuration file is one object: { ... }")
        }
        let value = try parseValue(depth: 1)
        try skipTrivia()
        if position < bytes.count {
            throw error(
                at: position,
                "unexpected \(describeToken(at: position)) after the end of the top-level value (a configuration file is one object: { ... })")
        }
        return value
    }

    private mutating func parseValue(depth: Int) throws(JSON5SyntaxError) -> JSONValue {
        let byte = bytes[position]
        switch byte {
        case Byte.openBrace: return try parseObject(depth: depth)
        case Byte.openBracket: return try parseArray(depth: depth)
        case Byte.doubleQuote, Byte.singleQuote: return .string(try parseString())
        case Byte.plus, Byte.minus, Byte.dot, Byte.zero...Byte.nine: return try parseNumber()
        default:
            if isIdentifierStart(scalar(at: position).scalar) {
                return try parseWord()
            }
            throw error(at: position, "expected a value, found \(describeToken(at: position)); \(valueHint)")
        }
    }

    private let valueHint = "a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"

    private func checkDepth(_ depth: Int) throws(JSON5SyntaxError) {
        guard depth <= JSON5Parser.maxDepth else {
            throw error(
                at: position,
                "nested too deeply: more than \(JSON5Parser.maxDepth) objects and lists inside each other (a configuration file needs 3)")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSON5SyntaxError) -> JSONValue {
        try checkDepth(depth)
        let open = position
        position += 1
        var members: [JSONValue.Member] = []
        /// Each key so far and the offset where it was first given.
        var seen: [String: Int] = [:]
        while true {
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("object", "}", openedAt: open) }
            if bytes[position] == Byte.closeBrace {
                position += 1
                return .object(members)
            }
            let keyStart = position
            let key: String
            if bytes[position] == Byte.doubleQuote || bytes[position] == Byte.singleQuote {
                key = try parseString()
            } else if bytes[position] == Byte.backslash || isIdentifierStart(scalar(at: position).scalar) {
                key = try parseIdentifier()
            } else {
                throw error(at: position, "expected a key (a name or a string in quotes) or '}', found \(describeToken(at: position))")
            }
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("object", "}", openedAt: open) }
            guard bytes[position] == Byte.colon else {
                throw error(at: position, "expected ':' after the key \(quoted(key)), found \(describeToken(at: position))")
            }
            position += 1
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("object", "}", openedAt: open) }
            path.append(.key(key))
            if let first = seen[key] {
                duplicates.append((path, keyStart, first))
            } else {
                seen[key] = keyStart
            }
            let value = try parseValue(depth: depth + 1)
            path.removeLast()
            members.append(JSONValue.Member(key, value))
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("object", "}", openedAt: open) }
            switch bytes[position] {
            case Byte.comma: position += 1
            case Byte.closeBrace: position += 1; return .object(members)
            default:
                throw error(
                    at: position,
                    "expected ',' or '}' after the value of \(quoted(key)) (in the object opened at \(place(open))), found \(describeToken(at: position))"
                )
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSON5SyntaxError) -> JSONValue {
        try checkDepth(depth)
        let open = position
        position += 1
        var items: [JSONValue] = []
        while true {
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("list", "]", openedAt: open) }
            if bytes[position] == Byte.closeBracket {
                position += 1
                return .array(items)
            }
            path.append(.index(items.count))
            items.append(try parseValue(depth: depth + 1))
            path.removeLast()
            try skipTrivia()
            guard position < bytes.count else { throw unclosed("list", "]", openedAt: open) }
            switch bytes[position] {
            case Byte.comma: position += 1
            case Byte.closeBracket: position += 1; return .array(items)
            default:
                throw error(
                    at: position,
                    "expected ',' or ']' after item \(items.count) of the list opened at \(place(open)), found \(describeToken(at: position))")
            }
        }
    }

    // MARK: Strings

    /// A string in `"` or `'`; returns its value with the escapes resolved.
    private mutating func parseString() throws(JSON5SyntaxError) -> String {
        let open = position
        let quote = bytes[position]
        position += 1
        var value: [UInt8] = []
        while true {
            // The plain run up to the next byte that needs a look (the input is valid UTF-8,
            // so multi-byte characters are copied whole).
            let runStart = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == quote || byte == Byte.backslash || byte < Byte.firstNonControl { break }
                position += 1
            }
            if position > runStart { value.append(contentsOf: bytes[runStart..<position]) }
            guard position < bytes.count else {
                throw error(at: open, "unterminated string: the file ends before its closing \(String(Unicode.Scalar(quote)))")
            }
            let byte = bytes[position]
            if byte == quote {
                position += 1
                return String(decoding: value, as: UTF8.self)
            }
            if byte == Byte.lineFeed || byte == Byte.carriageReturn {
                throw error(
                    at: open,
                    "unterminated string: no closing \(String(Unicode.Scalar(quote))) before the end of the line (to go on on the next line, end the line with \\)"
                )
            }
            if byte == 0 {
                throw error(at: position, "NUL character (U+0000) inside a string; no file name, argument or display text can carry it")
            }
            if byte < Byte.firstNonControl {
                throw error(
                    at: position,
                    "control character U+\(hexDigits(UInt32(byte), width: 4)) inside a string; write it as an escape (\\t, \\n, \\u0009)")
            }
            try parseEscape(into: &value)
        }
    }

    static let escapeHelp = "allowed: \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\v \\xHH \\uHHHH, or \\ at the end of a line"

    /// One escape sequence after a backslash at `position`.
    private mutating func parseEscape(into value: inout [UInt8]) throws(JSON5SyntaxError) {
        let start = position
        position += 1
        guard position < bytes.count else { throw error(at: start, "unterminated string: the file ends inside an escape") }
        let (escaped, length) = scalar(at: position)
        position += length
        switch escaped {
        case "\"", "'", "\\", "/": value.append(UInt8(escaped.value))
        case "b": value.append(0x08)
        case "f": value.append(0x0C)
        case "n": value.append(Byte.lineFeed)
        case "r": value.append(Byte.carriageReturn)
        case "t": value.append(0x09)
        case "v": value.append(0x0B)
        case "\n", "\u{2028}", "\u{2029}":
            break  // A line continuation: nothing.
        case "\r":
            if position < bytes.count && bytes[position] == Byte.lineFeed { position += 1 }
        case "0":
            if position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) {
                throw error(at: start, "invalid escape \\0 followed by a digit (JSON5 has no octal escapes); \(JSON5Parser.escapeHelp)")
            }
            throw nulEscape(start)
        case "x":
            let code = try hexValue(digits: 2, escapeStart: start)
            if code == 0 { throw nulEscape(start) }
            append(code, to: &value)
        case "u":
            let code = try unicodeEscape(start: start)
            if code == 0 { throw nulEscape(start) }
            append(code, to: &value)
        default:
            throw error(at: start, "invalid escape \\\(printable(escaped)); \(JSON5Parser.escapeHelp)")
        }
    }

    private func nulEscape(_ start: Int) -> JSON5SyntaxError {
        error(at: start, "\(text(from: start)) is NUL (U+0000), which no file name, argument or display text can carry")
    }

    /// The scalar of a `\uHHHH` escape (after its `u`), combining a surrogate pair written as two.
    private mutating func unicodeEscape(start: Int) throws(JSON5SyntaxError) -> UInt32 {
        let unit = try hexValue(digits: 4, escapeStart: start)
        if Surrogates.high.contains(unit) {
            guard position + 1 < bytes.count, bytes[position] == Byte.backslash, bytes[position + 1] == Byte.lowerU else {
                throw error(at: start, "\\u escape: U+\(hexDigits(unit, width: 4)) is half a surrogate pair")
            }
            position += 2
            let low = try hexValue(digits: 4, escapeStart: start)
            guard Surrogates.low.contains(low) else {
                throw error(at: start, "\\u escape: a high surrogate must be followed by a low one")
            }
            let surrogateBits: UInt32 = 10
            return Surrogates.supplementaryPlanesStart + ((unit - Surrogates.high.lowerBound) << surrogateBits) + (low - Surrogates.low.lowerBound)
        }
        guard !Surrogates.low.contains(unit) else {
            throw error(at: start, "\\u escape: U+\(hexDigits(unit, width: 4)) is half a surrogate pair")
        }
        return unit
    }

    private mutating func hexValue(digits: Int, escapeStart: Int) throws(JSON5SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard position < bytes.count, let digit = hexDigitValue(bytes[position]) else {
                throw error(at: escapeStart, "escape needs \(digits) hex digits")
            }
            value = value * 16 + UInt32(digit)
            position += 1
        }
        return value
    }

    /// Appends the UTF-8 of `code` (a scalar value: escapes never give a surrogate here).
    private func append(_ code: UInt32, to value: inout [UInt8]) {
        guard let scalar = Unicode.Scalar(code) else { preconditionFailure("append: \(code) is not a scalar") }
        value.append(contentsOf: scalar.utf8)
    }

    // MARK: Names and words

    /// A bare name (an object key): letters, `$`, `_`, then also digits and combining marks;
    /// `\uHHHH` escapes stand for such characters and are decoded.
    private mutating func parseIdentifier() throws(JSON5SyntaxError) -> String {
        var name = String.UnicodeScalarView()
        while position < bytes.count {
            if bytes[position] == Byte.backslash {
                let start = position
                guard position + 1 < bytes.count, bytes[position + 1] == Byte.lowerU else {
                    throw error(at: start, "in a key name, a backslash must start a \\uHHHH escape (or put the key in quotes)")
                }
                position += 2
                let code = try unicodeEscape(start: start)
                guard let decoded = Unicode.Scalar(code), name.isEmpty ? isIdentifierStart(decoded) : isIdentifierPart(decoded) else {
                    throw error(at: start, "\(text(from: start)) is not a character a key name may have here (put the key in quotes)")
                }
                name.append(decoded)
                continue
            }
            let (next, length) = scalar(at: position)
            guard isIdentifierPart(next) else { break }
            name.append(next)
            position += length
        }
        return String(name)
    }

    /// A bare word as a value: true, false, null, Infinity or NaN.
    private mutating func parseWord() throws(JSON5SyntaxError) -> JSONValue {
        let start = position
        let word = try parseIdentifier()
        switch word {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "null": return .null
        case "Infinity", "NaN": return .number(.init(text: word, isWhole: false))
        default:
            var message = "unknown word \(quoted(word))"
            if let near = closestName(to: word, among: ["true", "false", "null"]) { message += " (did you mean \(near)?)" }
            throw error(at: start, message + "; " + valueHint)
        }
    }

    // MARK: Numbers

    /// A JSON5 number: an optional sign, then Infinity, NaN, 0x hex digits, or decimal digits with
    /// an optional fraction and exponent (`5.`, `.5`, `1e3`). Whole numbers that fit 32 bits become
    /// `.integer`, computed exactly; others keep their text.
    private mutating func parseNumber() throws(JSON5SyntaxError) -> JSONValue {
        let start = position
        var negative = false
        if bytes[position] == Byte.plus || bytes[position] == Byte.minus {
            negative = bytes[position] == Byte.minus
            position += 1
        }
        guard position < bytes.count else { throw error(at: start, "a sign must be followed by a number") }
        if isIdentifierStart(scalar(at: position).scalar) {
            let word = try parseIdentifier()
            guard word == "Infinity" || word == "NaN" else {
                throw error(at: start, "bad number \(quoted(text(from: start))); after a sign comes a number, Infinity or NaN")
            }
            try expectNumberEnd(start: start)
            return .number(.init(text: text(from: start), isWhole: false))
        }
        if bytes[position] == Byte.zero, position + 1 < bytes.count, bytes[position + 1] == Byte.lowerX || bytes[position + 1] == Byte.upperX {
            position += 2
            let digitsStart = position
            var magnitude: UInt64 = 0
            var overflow = false
            while position < bytes.count, let digit = hexDigitValue(bytes[position]) {
                let shifted = magnitude.multipliedReportingOverflow(by: 16)
                let added = shifted.partialValue.addingReportingOverflow(UInt64(digit))
                overflow = overflow || shifted.overflow || added.overflow
                magnitude = added.partialValue
                position += 1
            }
            guard position > digitsStart else { throw error(at: start, "bad number \(quoted(text(from: start))): 0x needs hex digits") }
            try expectNumberEnd(start: start)
            return integerOrText(magnitude: overflow ? nil : magnitude, negative: negative, start: start)
        }
        let integerStart = position
        let integerDigits = skipDigits()
        if integerDigits > 1 && bytes[integerStart] == Byte.zero {
            throw error(at: start, "bad number \(quoted(text(from: start))): a number must not start with 0 (write 0x... for hex)")
        }
        var fractionStart = position
        var fractionDigits = 0
        if position < bytes.count, bytes[position] == Byte.dot {
            position += 1
            fractionStart = position
            fractionDigits = skipDigits()
        }
        guard integerDigits + fractionDigits > 0 else {
            throw error(at: start, "expected a value, found \(describeToken(at: start)); \(valueHint)")
        }
        /// The exponent as written, saturated far beyond any number a Double holds. Int64 here and
        /// below: with a 32-bit Int, the exponent minus a huge count of fraction digits could overflow.
        var exponent: Int64 = 0
        if position < bytes.count, bytes[position] == Byte.lowerE || bytes[position] == Byte.upperE {
            position += 1
            var exponentNegative = false
            if position < bytes.count, bytes[position] == Byte.plus || bytes[position] == Byte.minus {
                exponentNegative = bytes[position] == Byte.minus
                position += 1
            }
            let exponentStart = position
            guard skipDigits() > 0 else {
                throw error(at: start, "bad number \(quoted(text(from: start))): the exponent needs digits")
            }
            for index in exponentStart..<position where exponent < JSON5Parser.exponentCap {
                exponent = exponent * 10 + Int64(bytes[index] - Byte.zero)
            }
            if exponentNegative { exponent = -exponent }
        }
        try expectNumberEnd(start: start)

        // The significant digits (integer and fraction part, without leading and trailing zeros)
        // times 10 to the power `scale`.
        var digits: [UInt8] = []
        digits.reserveCapacity(integerDigits + fractionDigits)
        for index in integerStart..<(integerStart + integerDigits) { digits.append(bytes[index]) }
        for index in fractionStart..<(fractionStart + fractionDigits) { digits.append(bytes[index]) }
        var scale = exponent - Int64(fractionDigits)
        var first = 0
        while first < digits.count, digits[first] == Byte.zero { first += 1 }
        guard first < digits.count else { return .integer(0) }
        var last = digits.count
        while digits[last - 1] == Byte.zero {
            last -= 1
            scale += 1
        }
        let significant = digits[first..<last]
        // The number is about 10 to the power `order`; beyond the largest Double it is refused.
        let order = Int64(significant.count) - 1 + scale
        if order > JSON5Parser.largestDoubleOrder
            || (order == JSON5Parser.largestDoubleOrder && JSON5Parser.isAtLeastDoubleOverflow(significant))
        {
            throw error(at: start, "number \(quoted(text(from: start))) is too large")
        }
        guard scale >= 0, order < JSON5Parser.maxIntegerDigits else {
            return .number(.init(text: text(from: start), isWhole: scale >= 0))
        }
        var magnitude: UInt64? = 0
        for digit in significant { magnitude = multiplyAdd(magnitude, 10, UInt64(digit - Byte.zero)) }
        for _ in 0..<Int(scale) { magnitude = multiplyAdd(magnitude, 10, 0) }
        return integerOrText(magnitude: magnitude, negative: negative, start: start)
    }

    /// 19 digits always fit a UInt64; 32 bits are checked after.
    private static let maxIntegerDigits: Int64 = 19
    /// The largest Double is 1.7976931348623157e308.
    private static let largestDoubleOrder: Int64 = 308
    /// Exponents are counted up to here; larger ones mean the same to every check.
    private static let exponentCap: Int64 = 100_000_000

    /// True when the significant digits (of a number of order 308) round to beyond the largest
    /// Double: from 1.7976931348623158e308 on (the midpoint to the next power of two, to 17 digits).
    private static func isAtLeastDoubleOverflow(_ significant: ArraySlice<UInt8>) -> Bool {
        let limit = Array("17976931348623158".utf8)
        for (index, limitDigit) in limit.enumerated() {
            let digit = index < significant.count ? significant[significant.startIndex + index] : Byte.zero
            if digit != limitDigit { return digit > limitDigit }
        }
        return true
    }

    private func multiplyAdd(_ value: UInt64?, _ factor: UInt64, _ addend: UInt64) -> UInt64? {
        guard let value else { return nil }
        let product = value.multipliedReportingOverflow(by: factor)
        let sum = product.partialValue.addingReportingOverflow(addend)
        return product.overflow || sum.overflow ? nil : sum.partialValue
    }

    /// `.integer` when `magnitude` with its sign fits 32 bits, else the text as a whole number.
    /// 32 bits on every platform (the armhf build's `Int` has no more), so that a file gets the
    /// same messages on every architecture; every range of the schema fits easily.
    private func integerOrText(magnitude: UInt64?, negative: Bool, start: Int) -> JSONValue {
        if let magnitude {
            if !negative, magnitude <= UInt64(Int32.max) { return .integer(Int(magnitude)) }
            // Negated in Int64: on a 32-bit Int, Int(2147483648) itself would trap.
            if negative, magnitude <= UInt64(Int32.max) + 1 { return .integer(Int(-Int64(magnitude))) }
        }
        return .number(.init(text: text(from: start), isWhole: true))
    }

    /// A number must not run straight into a name, a digit or a dot (`1_000`, `12px`, `0x1.5`).
    private mutating func expectNumberEnd(start: Int) throws(JSON5SyntaxError) {
        guard position < bytes.count else { return }
        func continues(_ index: Int) -> (Bool, Int) {
            if bytes[index] == Byte.dot { return (true, 1) }
            let (next, length) = scalar(at: index)
            return (isIdentifierPart(next), length)
        }
        guard continues(position).0 else { return }
        while position < bytes.count {
            let (more, length) = continues(position)
            guard more else { break }
            position += length
        }
        throw error(at: start, "bad number \(quoted(text(from: start)))")
    }

    private mutating func skipDigits() -> Int {
        let start = position
        while position < bytes.count, (Byte.zero...Byte.nine).contains(bytes[position]) { position += 1 }
        return position - start
    }

    // MARK: White space and comments

    private mutating func skipTrivia() throws(JSON5SyntaxError) {
        while position < bytes.count {
            let byte = bytes[position]
            switch byte {
            case Byte.space, 0x09, Byte.lineFeed, 0x0B, 0x0C, Byte.carriageReturn:
                position += 1
            case Byte.slash where position + 1 < bytes.count && bytes[position + 1] == Byte.slash:
                position += 2
                while position < bytes.count {
                    let (next, length) = scalar(at: position)
                    if next == "\n" || next == "\r" || next == "\u{2028}" || next == "\u{2029}" { break }
                    position += length
                }
            case Byte.slash where position + 1 < bytes.count && bytes[position + 1] == Byte.star:
                let open = position
                position += 2
                while true {
                    guard position + 1 < bytes.count else {
                        throw error(at: open, "unterminated comment: this /* is never closed with */")
                    }
                    if bytes[position] == Byte.star && bytes[position + 1] == Byte.slash {
                        position += 2
                        break
                    }
                    position += 1
                }
            default:
                guard byte >= Byte.firstNonASCII else { return }
                let (next, length) = scalar(at: position)
                guard isWhitespace(next) else { return }
                position += length
            }
        }
    }

    /// JSON5 white space beyond ASCII: no-break space, line and paragraph separators, the byte
    /// order mark, and the other space separators (Unicode category Zs).
    private func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00A0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF: return true
        default: return false
        }
    }

    // MARK: Characters

    /// The scalar starting at `index` and its length in bytes (the input is checked UTF-8).
    private func scalar(at index: Int) -> (scalar: Unicode.Scalar, length: Int) {
        let lead = bytes[index]
        if lead < Byte.firstNonASCII { return (Unicode.Scalar(lead), 1) }
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var code = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for offset in 1..<length { code = code << 6 | UInt32(bytes[index + offset] & 0x3F) }
        guard let decoded = Unicode.Scalar(code) else { preconditionFailure("scalar(at:): the input was checked to be UTF-8") }
        return (decoded, length)
    }

    /// ECMAScript's IdentifierStart (without the escape): a letter, `$` or `_`.
    private func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 {
            return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar == "$"
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .letterNumber: return true
        default: return false
        }
    }

    /// ECMAScript's IdentifierPart: also digits, combining marks, connector punctuation, ZWNJ, ZWJ.
    private func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value < 0x80 { return isIdentifierStart(scalar) || ("0"..."9").contains(scalar) }
        if scalar == "\u{200C}" || scalar == "\u{200D}" { return true }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .decimalNumber, .connectorPunctuation: return true
        default: return isIdentifierStart(scalar)
        }
    }

    private func hexDigitValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case Byte.zero...Byte.nine: return byte - Byte.zero
        case Byte.lowerA...Byte.lowerF: return byte - Byte.lowerA + 10
        case Byte.upperA...Byte.upperF: return byte - Byte.upperA + 10
        default: return nil
        }
    }

    // MARK: UTF-8

    /// The file must be UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing beyond
    /// U+10FFFF); the first byte that breaks it is an error, with its line and column.
    private func checkUTF8() throws(JSON5SyntaxError) {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < Byte.firstNonASCII {
                index += 1
                continue
            }
            let length: Int
            var secondRange: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; secondRange = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; secondRange = 0x80...0x9F
            case 0xF0: length = 4; secondRange = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; secondRange = 0x80...0x8F
            default:
                throw error(
                    at: index,
                    "the file is not UTF-8 text: byte 0x\(hexDigits(UInt32(lead), width: 2)) cannot start a character (save the file as UTF-8)")
            }
            for offset in 1..<length {
                let range: ClosedRange<UInt8> = offset == 1 ? secondRange : 0x80...0xBF
                guard index + offset < count, range.contains(bytes[index + offset]) else {
                    let sequence = bytes[index..<min(count, index + offset + 1)].map { "0x" + hexDigits(UInt32($0), width: 2) }.joined(separator: " ")
                    throw error(at: index, "the file is not UTF-8 text: the bytes \(sequence) are not a character (save the file as UTF-8)")
                }
            }
            index += length
        }
    }

    // MARK: Messages

    private func error(at index: Int, _ message: String) -> JSON5SyntaxError {
        let place = lineAndColumn(of: [index])[0]
        return JSON5SyntaxError(line: place.line, column: place.column, message: message)
    }

    private func unclosed(_ what: String, _ closer: String, openedAt open: Int) -> JSON5SyntaxError {
        error(at: bytes.count, "the file ends but the \(what) opened at \(place(open)) is not closed with '\(closer)'")
    }

    /// "line 3, column 5".
    private func place(_ index: Int) -> String {
        let found = lineAndColumn(of: [index])[0]
        return "line \(found.line), column \(found.column)"
    }

    /// 1-based line and column of each byte offset in `offsets` (`bytes.count` is just past the
    /// end), in one pass up to the largest. CR LF, LF and a lone CR each end a line; columns
    /// count Unicode scalars (bytes that are not UTF-8 continuation bytes).
    private func lineAndColumn(of offsets: [Int]) -> [(line: Int, column: Int)] {
        let order = offsets.indices.sorted { offsets[$0] < offsets[$1] }
        var result = [(line: Int, column: Int)](repeating: (1, 1), count: offsets.count)
        var line = 1
        var column = 1
        var index = 0
        for slot in order {
            let target = min(offsets[slot], bytes.count)
            while index < target {
                let byte = bytes[index]
                if byte == Byte.lineFeed || (byte == Byte.carriageReturn && (index + 1 >= bytes.count || bytes[index + 1] != Byte.lineFeed)) {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 && byte != Byte.carriageReturn {
                    column += 1
                }
                index += 1
            }
            result[slot] = (line, column)
        }
        return result
    }

    /// The duplicates with their places, found in one pass over the file.
    private func resolveDuplicates() -> [JSON5Document.DuplicateKey] {
        guard !duplicates.isEmpty else { return [] }
        let places = lineAndColumn(of: duplicates.flatMap { [$0.offset, $0.firstOffset] })
        return duplicates.enumerated().map { number, duplicate in
            let here = places[2 * number]
            let first = places[2 * number + 1]
            return .init(path: duplicate.path, line: here.line, column: here.column, firstLine: first.line, firstColumn: first.column)
        }
    }

    /// What the user sees at `index`, for "found ...": a word or number whole, a string as such.
    private func describeToken(at index: Int) -> String {
        guard index < bytes.count else { return "the end of the file" }
        let (first, firstLength) = scalar(at: index)
        if first == "\"" || first == "'" { return "a string" }
        if isIdentifierPart(first) || first == "+" || first == "-" || first == "." {
            var end = index + firstLength
            while end < bytes.count {
                let (next, length) = scalar(at: end)
                guard isIdentifierPart(next) || next == "." else { break }
                end += length
            }
            return "'" + String(decoding: bytes[index..<end], as: UTF8.self) + "'"
        }
        return "'" + printable(first) + "'"
    }

    /// The scalar itself when it is visible, else U+XXXX.
    private func printable(_ scalar: Unicode.Scalar) -> String {
        if scalar.value < UInt32(Byte.firstNonControl) || scalar.value == 0x7F || scalar == " " || isWhitespace(scalar)
            || (scalar.value >= 0x80 && scalar.properties.generalCategory == .control)
        {
            return "U+" + hexDigits(scalar.value, width: 4)
        }
        return String(scalar)
    }

    private func text(from start: Int) -> String {
        String(decoding: bytes[start..<position], as: UTF8.self)
    }
}

/// The ASCII bytes the grammar names.
private enum Byte {
    static let lineFeed: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let doubleQuote: UInt8 = 0x22
    static let singleQuote: UInt8 = 0x27
    static let star: UInt8 = 0x2A
    static let plus: UInt8 = 0x2B
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let zero: UInt8 = 0x30
    static let nine: UInt8 = 0x39
    static let colon: UInt8 = 0x3A
    static let upperA: UInt8 = 0x41
    static let upperE: UInt8 = 0x45
    static let upperF: UInt8 = 0x46
    static let upperX: UInt8 = 0x58
    static let openBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let closeBracket: UInt8 = 0x5D
    static let lowerA: UInt8 = 0x61
    static let lowerE: UInt8 = 0x65
    static let lowerF: UInt8 = 0x66
    static let lowerU: UInt8 = 0x75
    static let lowerX: UInt8 = 0x78
    static let openBrace: UInt8 = 0x7B
    static let closeBrace: UInt8 = 0x7D
    /// U+0000...U+001F are control characters, which a string must escape.
    static let firstNonControl: UInt8 = 0x20
    static let firstNonASCII: UInt8 = 0x80
}

/// UTF-16 surrogates, as written in \u escapes for characters beyond U+FFFF.
private enum Surrogates {
    static let high: ClosedRange<UInt32> = 0xD800...0xDBFF
    static let low: ClosedRange<UInt32> = 0xDC00...0xDFFF
    static let supplementaryPlanesStart: UInt32 = 0x10000
}
