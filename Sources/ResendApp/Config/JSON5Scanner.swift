/// What the scanner learnt about a well-formed file: the order of each object's keys and the
/// keys given twice (the decoder silently keeps one of them).
struct JSON5Outline: Sendable {
    /// The keys of the object at each path, in file order, each once.
    var keyOrder: [[JSONPathComponent]: [String]] = [:]
    /// Keys that appear a second (third, ...) time in the same object.
    var duplicates: [DuplicateKey] = []

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

/// The first place where a file is not JSON5: 1-based line and column (in Unicode scalars; a tab
/// counts as one), and what is wrong there.
struct JSON5SyntaxError: Error, Hashable, Sendable {
    var line: Int
    var column: Int
    var message: String
}

/// A recogniser for the JSON5 that FoundationEssentials' `JSONDecoder` accepts, written to say
/// *where* a file goes wrong (the decoder only says that it does) and to record key order.
///
/// It follows the decoder where the decoder and the JSON5 specification differ (found by trial
/// with Swift 6.3): `\v` and `\0` escapes and raw control characters in strings are rejected; the
/// whitespace is space, tab, LF, CR, VT and FF, not U+00A0 or U+2028; a byte order mark only at
/// the very start; `0x23.`, `0x23.00` and `1e-` are numbers; `\uHHHH` and `\xHH` may appear in
/// bare keys (kept as written).
/// It stops at the first error: there is no sensible way to go on after, say, a missing quote.
struct JSON5Scanner {
    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var outline = JSON5Outline()
    /// For each open object: where each of its keys so far was given, to find duplicates.
    private var seenKeys: [[String: (line: Int, column: Int)]] = []

    /// The index of the first scalar of each line.
    private let lineStarts: [Int]

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
        // CR LF, LF and a lone CR each end a line.
        var starts = [0]
        for (index, scalar) in scalars.enumerated() {
            if scalar == "\n" || (scalar == "\r" && (index + 1 >= scalars.count || scalars[index + 1] != "\n")) {
                starts.append(index + 1)
            }
        }
        lineStarts = starts
    }

    /// The outline of `text`, or the first syntax error in it.
    static func scan(_ text: String) -> Result<JSON5Outline, JSON5SyntaxError> {
        var scanner = JSON5Scanner(text)
        do throws(JSON5SyntaxError) {
            try scanner.scanDocument()
            return .success(scanner.outline)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Grammar

    private mutating func scanDocument() throws(JSON5SyntaxError) {
        // A byte order mark is allowed as the very first character only.
        if position < scalars.count, scalars[position] == JSON5Scanner.byteOrderMark { position += 1 }
        try skipTrivia()
        guard position < scalars.count else {
            throw error(at: position, "the file has no value; a configuration file is one object: { ... }")
        }
        try scanValue(path: [])
        try skipTrivia()
        if position < scalars.count {
            throw error(at: position, "unexpected \(describeToken(at: position)) after the end of the top-level value (a configuration file is one object: { ... })")
        }
    }

    private mutating func scanValue(path: [JSONPathComponent]) throws(JSON5SyntaxError) {
        let scalar = scalars[position]
        switch scalar {
        case "{": try scanObject(path: path)
        case "[": try scanArray(path: path)
        case "\"", "'": _ = try scanString()
        case "+", "-", ".", "0"..."9": try scanNumber()
        default:
            if isIdentifierStart(scalar) {
                try scanWord()
            } else {
                throw error(at: position, "expected a value, found \(describeToken(at: position)); \(valueHint)")
            }
        }
    }

    private let valueHint = "a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"

    private mutating func scanObject(path: [JSONPathComponent]) throws(JSON5SyntaxError) {
        let open = position
        position += 1
        outline.keyOrder[path] = []
        seenKeys.append([:])
        defer { seenKeys.removeLast() }
        while true {
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("object", "}", openedAt: open) }
            if scalars[position] == "}" {
                position += 1
                return
            }
            let keyStart = position
            let key: String
            if scalars[position] == "\"" || scalars[position] == "'" {
                key = try scanString()
            } else if isIdentifierStart(scalars[position]) || escapeLength(at: position) != nil {
                key = scanIdentifier()
            } else {
                throw error(at: position, "expected a key (a name or a string in quotes) or '}', found \(describeToken(at: position))")
            }
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("object", "}", openedAt: open) }
            guard scalars[position] == ":" else {
                throw error(at: position, "expected ':' after the key \(quoted(key)), found \(describeToken(at: position))")
            }
            position += 1
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("object", "}", openedAt: open) }
            record(key: key, at: keyStart, path: path)
            try scanValue(path: path + [.key(key)])
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("object", "}", openedAt: open) }
            switch scalars[position] {
            case ",": position += 1
            case "}": position += 1; return
            default:
                throw error(at: position, "expected ',' or '}' after the value of \(quoted(key)) (in the object opened at \(place(open))), found \(describeToken(at: position))")
            }
        }
    }

    private mutating func scanArray(path: [JSONPathComponent]) throws(JSON5SyntaxError) {
        let open = position
        position += 1
        var index = 0
        while true {
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("list", "]", openedAt: open) }
            if scalars[position] == "]" {
                position += 1
                return
            }
            try scanValue(path: path + [.index(index)])
            index += 1
            try skipTrivia()
            guard position < scalars.count else { throw unclosed("list", "]", openedAt: open) }
            switch scalars[position] {
            case ",": position += 1
            case "]": position += 1; return
            default:
                throw error(at: position, "expected ',' or ']' after item \(index) of the list opened at \(place(open)), found \(describeToken(at: position))")
            }
        }
    }

    private mutating func record(key: String, at start: Int, path: [JSONPathComponent]) {
        let (line, column) = lineAndColumn(of: start)
        if let first = seenKeys[seenKeys.count - 1][key] {
            outline.duplicates.append(.init(path: path + [.key(key)], line: line, column: column, firstLine: first.line, firstColumn: first.column))
        } else {
            seenKeys[seenKeys.count - 1][key] = (line, column)
            outline.keyOrder[path, default: []].append(key)
        }
    }

    /// A string in `"` or `'`; returns its value (escapes resolved as the decoder does).
    private mutating func scanString() throws(JSON5SyntaxError) -> String {
        let open = position
        let quote = scalars[position]
        position += 1
        var value = String.UnicodeScalarView()
        while true {
            guard position < scalars.count else {
                throw error(at: open, "unterminated string: the file ends before its closing \(quote)")
            }
            let scalar = scalars[position]
            if scalar == quote {
                position += 1
                return String(value)
            }
            if scalar == "\n" || scalar == "\r" {
                throw error(at: open, "unterminated string: no closing \(quote) before the end of the line (to go on on the next line, end the line with \\)")
            }
            if scalar.value < JSON5Scanner.firstNonControl {
                throw error(at: position, "control character U+\(hexDigits(scalar.value, width: 4)) inside a string; write it as an escape (\\t, \\n, \\u0009)")
            }
            if scalar == "\\" {
                try scanEscape(into: &value)
            } else {
                value.append(scalar)
                position += 1
            }
        }
    }

    /// One escape sequence after a backslash at `position`.
    private mutating func scanEscape(into value: inout String.UnicodeScalarView) throws(JSON5SyntaxError) {
        let start = position
        position += 1
        guard position < scalars.count else { throw error(at: start, "unterminated string: the file ends inside an escape") }
        let scalar = scalars[position]
        position += 1
        switch scalar {
        case "\"", "'", "\\", "/": value.append(scalar)
        case "b": value.append("\u{8}")
        case "f": value.append("\u{C}")
        case "n": value.append("\n")
        case "r": value.append("\r")
        case "t": value.append("\t")
        case "\n": value.append("\n")
        case "\r":
            value.append("\r")
            if position < scalars.count && scalars[position] == "\n" {
                value.append("\n")
                position += 1
            }
        case "x":
            value.append(try hexScalar(digits: 2, escapeStart: start))
        case "u":
            let unit = try hexValue(digits: 4, escapeStart: start)
            if JSON5Scanner.highSurrogates.contains(unit), position + 1 < scalars.count, scalars[position] == "\\", scalars[position + 1] == "u" {
                position += 2
                let low = try hexValue(digits: 4, escapeStart: start)
                guard JSON5Scanner.lowSurrogates.contains(low) else {
                    throw error(at: start, "\\u escape: a high surrogate must be followed by a low one")
                }
                let surrogateBits: UInt32 = 10
                let combinedValue = JSON5Scanner.supplementaryPlanesStart
                    + ((unit - JSON5Scanner.highSurrogates.lowerBound) << surrogateBits) + (low - JSON5Scanner.lowSurrogates.lowerBound)
                guard let combined = Unicode.Scalar(combinedValue) else {
                    preconditionFailure("a surrogate pair always combines to a scalar")
                }
                value.append(combined)
                return
            }
            guard let decoded = Unicode.Scalar(unit) else {
                throw error(at: start, "\\u escape: U+\(hexDigits(unit, width: 4)) is half a surrogate pair")
            }
            value.append(decoded)
        default:
            throw error(at: start, "invalid escape \\\(printable(scalar)); allowed: \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\xHH \\uHHHH")
        }
    }

    private mutating func hexValue(digits: Int, escapeStart: Int) throws(JSON5SyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard position < scalars.count, let digit = hexDigitValue(scalars[position]) else {
                throw error(at: escapeStart, "escape needs \(digits) hex digits")
            }
            value = value * 16 + digit
            position += 1
        }
        return value
    }

    private mutating func hexScalar(digits: Int, escapeStart: Int) throws(JSON5SyntaxError) -> Unicode.Scalar {
        let value = try hexValue(digits: digits, escapeStart: escapeStart)
        guard let scalar = Unicode.Scalar(value) else { preconditionFailure("two hex digits are always a scalar") }
        return scalar
    }

    /// A JSON5 number: an optional sign, then Infinity, NaN, 0x hex digits, or decimal digits with
    /// an optional fraction and exponent (`5.`, `.5`, `1e3`).
    private mutating func scanNumber() throws(JSON5SyntaxError) {
        let start = position
        if scalars[position] == "+" || scalars[position] == "-" { position += 1 }
        guard position < scalars.count else { throw error(at: start, "a sign must be followed by a number") }
        if isIdentifierStart(scalars[position]) {
            let word = scanIdentifier()
            guard word == "Infinity" || word == "NaN" else {
                throw error(at: start, "bad number \(quoted(text(from: start))); after a sign comes a number, Infinity or NaN")
            }
            try expectNumberEnd(start: start)
            return
        }
        if scalars[position] == "0", position + 1 < scalars.count, scalars[position + 1] == "x" || scalars[position + 1] == "X" {
            position += 2
            let digitsStart = position
            while position < scalars.count, hexDigitValue(scalars[position]) != nil { position += 1 }
            guard position > digitsStart else { throw error(at: start, "bad number \(quoted(text(from: start))): 0x needs hex digits") }
            // The decoder refuses hex beyond Int.
            let fitsInt = Int(text(from: digitsStart), radix: 16) != nil
            // The decoder lets a "." and zeros end a hex number (0x23. and 0x23.00 are 35), so
            // the scanner does too; any other fraction is refused.
            if position < scalars.count, scalars[position] == "." {
                position += 1
                while position < scalars.count, scalars[position] == "0" { position += 1 }
            }
            try expectNumberEnd(start: start)
            guard fitsInt else { throw tooLarge(start) }
            return
        }
        let integerStart = position
        let integerDigits = skipDigits()
        if integerDigits > 1 && scalars[integerStart] == "0" {
            throw error(at: start, "bad number \(quoted(text(from: start))): a number must not start with 0 (write 0x... for hex)")
        }
        var fractionDigits = 0
        if position < scalars.count, scalars[position] == "." {
            position += 1
            fractionDigits = skipDigits()
        }
        guard integerDigits + fractionDigits > 0 else {
            throw error(at: start, "expected a value, found \(describeToken(at: start)); \(valueHint)")
        }
        if position < scalars.count, scalars[position] == "e" || scalars[position] == "E" {
            position += 1
            var signed = false
            if position < scalars.count, scalars[position] == "+" || scalars[position] == "-" {
                position += 1
                signed = true
            }
            // The decoder takes a signed exponent without digits (1e- is 1); so does the scanner.
            guard skipDigits() > 0 || signed else {
                throw error(at: start, "bad number \(quoted(text(from: start))): the exponent needs digits")
            }
        }
        try expectNumberEnd(start: start)
        // The decoder refuses decimals beyond Double (1e400), though not Infinity written as such.
        var written = text(from: start)
        if let last = written.unicodeScalars.last, last == "+" || last == "-" { written += "0" }
        guard let number = Double(written), number.isFinite else { throw tooLarge(start) }
    }

    private func tooLarge(_ start: Int) -> JSON5SyntaxError {
        error(at: start, "number \(quoted(text(from: start))) is too large")
    }

    /// A number must not run straight into a name or digit (`1_000`, `12px`).
    private mutating func expectNumberEnd(start: Int) throws(JSON5SyntaxError) {
        if position < scalars.count, isIdentifierPart(scalars[position]) || scalars[position] == "." {
            while position < scalars.count, isIdentifierPart(scalars[position]) || scalars[position] == "." { position += 1 }
            throw error(at: start, "bad number \(quoted(text(from: start)))")
        }
    }

    private mutating func skipDigits() -> Int {
        var count = 0
        while position < scalars.count, ("0"..."9").contains(scalars[position]) {
            position += 1
            count += 1
        }
        return count
    }

    /// A bare word as a value: true, false, null, Infinity or NaN.
    private mutating func scanWord() throws(JSON5SyntaxError) {
        let start = position
        let word = scanIdentifier()
        guard ["true", "false", "null", "Infinity", "NaN"].contains(word) else {
            var message = "unknown word \(quoted(word))"
            if let near = closestName(to: word, among: ["true", "false", "null"]) { message += " (did you mean \(near)?)" }
            throw error(at: start, message + "; " + valueHint)
        }
    }

    /// A bare name. The decoder takes a `\uHHHH` or `\xHH` inside one when it stands for a
    /// character a name may have, and keeps it as written (it does not decode it); so does the
    /// scanner. Any other backslash ends the name.
    private mutating func scanIdentifier() -> String {
        var name = String.UnicodeScalarView()
        while position < scalars.count {
            if isIdentifierPart(scalars[position]) {
                name.append(scalars[position])
                position += 1
            } else if let length = escapeLength(at: position) {
                name.append(contentsOf: scalars[position..<(position + length)])
                position += length
            } else {
                break
            }
        }
        return String(name)
    }

    /// The length of a `\uHHHH` (6) or `\xHH` (4) escape at `index` that stands for a character
    /// a name may have, or nil. Like the decoder, it allows a digit even at the start.
    private func escapeLength(at index: Int) -> Int? {
        guard index + 1 < scalars.count, scalars[index] == "\\" else { return nil }
        let digits: Int
        switch scalars[index + 1] {
        case "u": digits = 4
        case "x": digits = 2
        default: return nil
        }
        let end = index + 2 + digits
        guard end <= scalars.count else { return nil }
        var value: UInt32 = 0
        for scalar in scalars[(index + 2)..<end] {
            guard let digit = hexDigitValue(scalar) else { return nil }
            value = value * 16 + digit
        }
        guard let character = Unicode.Scalar(value), isIdentifierPart(character) else { return nil }
        return end - index
    }

    /// Whitespace and comments.
    private mutating func skipTrivia() throws(JSON5SyntaxError) {
        while position < scalars.count {
            let scalar = scalars[position]
            if JSON5Scanner.whitespace.contains(scalar) {
                position += 1
            } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "/" {
                while position < scalars.count, scalars[position] != "\n", scalars[position] != "\r" { position += 1 }
            } else if scalar == "/", position + 1 < scalars.count, scalars[position + 1] == "*" {
                let open = position
                position += 2
                while true {
                    guard position + 1 < scalars.count else {
                        throw error(at: open, "unterminated comment: this /* is never closed with */")
                    }
                    if scalars[position] == "*" && scalars[position + 1] == "/" {
                        position += 2
                        break
                    }
                    position += 1
                }
            } else {
                return
            }
        }
    }

    /// U+0000...U+001F are control characters, which a string must escape.
    static let firstNonControl: UInt32 = 0x20
    static let asciiDelete: UInt32 = 0x7F
    static let lastASCII: UInt32 = 0x7F
    /// UTF-16 surrogates, as written in \u escapes for characters beyond U+FFFF.
    static let highSurrogates: ClosedRange<UInt32> = 0xD800...0xDBFF
    static let lowSurrogates: ClosedRange<UInt32> = 0xDC00...0xDFFF
    static let supplementaryPlanesStart: UInt32 = 0x10000

    /// Space, tab, LF, VT, FF and CR.
    private static let whitespace: Set<Unicode.Scalar> = [" ", "\t", "\n", "\u{B}", "\u{C}", "\r"]
    private static let byteOrderMark: Unicode.Scalar = "\u{FEFF}"

    // MARK: Characters

    private func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_" || scalar == "$"
            || (scalar.value > JSON5Scanner.lastASCII && !JSON5Scanner.whitespace.contains(scalar) && scalar.properties.isAlphabetic)
    }

    private func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || ("0"..."9").contains(scalar)
            || (scalar.value > JSON5Scanner.lastASCII && scalar.properties.generalCategory == .nonspacingMark)
    }

    private func hexDigitValue(_ scalar: Unicode.Scalar) -> UInt32? {
        switch scalar {
        case "0"..."9": return scalar.value - ("0" as Unicode.Scalar).value
        case "a"..."f": return scalar.value - ("a" as Unicode.Scalar).value + 10
        case "A"..."F": return scalar.value - ("A" as Unicode.Scalar).value + 10
        default: return nil
        }
    }

    // MARK: Messages

    private func error(at index: Int, _ message: String) -> JSON5SyntaxError {
        let (line, column) = lineAndColumn(of: index)
        return JSON5SyntaxError(line: line, column: column, message: message)
    }

    private func unclosed(_ what: String, _ closer: String, openedAt open: Int) -> JSON5SyntaxError {
        error(at: scalars.count, "the file ends but the \(what) opened at \(place(open)) is not closed with '\(closer)'")
    }

    /// "line 3, column 5".
    private func place(_ index: Int) -> String {
        let (line, column) = lineAndColumn(of: index)
        return "line \(line), column \(column)"
    }

    /// 1-based line and column of the scalar at `index` (`scalars.count` is just past the end).
    func lineAndColumn(of index: Int) -> (line: Int, column: Int) {
        // The last line start at or before `index`, by binary search.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return (low + 1, index - lineStarts[low] + 1)
    }

    /// What the user sees at `index`, for "found ...": a word or number whole, a string as such.
    private func describeToken(at index: Int) -> String {
        guard index < scalars.count else { return "the end of the file" }
        let scalar = scalars[index]
        if scalar == "\"" || scalar == "'" { return "a string" }
        if isIdentifierPart(scalar) || scalar == "+" || scalar == "-" || scalar == "." {
            var end = index + 1
            while end < scalars.count, isIdentifierPart(scalars[end]) || scalars[end] == "." { end += 1 }
            return "'" + String(String.UnicodeScalarView(scalars[index..<end])) + "'"
        }
        return "'" + printable(scalar) + "'"
    }

    /// The scalar itself when it is visible, else U+XXXX.
    private func printable(_ scalar: Unicode.Scalar) -> String {
        if scalar.value < JSON5Scanner.firstNonControl || JSON5Scanner.whitespace.contains(scalar) || scalar.value == JSON5Scanner.asciiDelete || scalar.properties.generalCategory == .spaceSeparator {
            return "U+" + hexDigits(scalar.value, width: 4)
        }
        return String(scalar)
    }

    private func text(from start: Int) -> String {
        String(String.UnicodeScalarView(scalars[start..<position]))
    }
}
