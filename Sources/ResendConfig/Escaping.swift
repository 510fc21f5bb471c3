// The one escaping of every message and log line: a value a user wrote never puts a raw new line
// or terminal escape into a line.

/// `text` as a JSON string literal (RFC 8259): quotes, backslashes and control characters escaped;
/// everything else, non-ASCII included, as is (the line is UTF-8).
public func jsonString(_ text: String) -> String {
    "\"" + escaped(text, quote: "\"") + "\""
}

/// `text` in single quotes for a message on the command line (`'GPIO17'`), escaped like
/// `jsonString`: a value a user typed can never put a raw new line or terminal escape into a line.
public func shown(_ text: some StringProtocol) -> String {
    "'" + escaped(text, quote: "'") + "'"
}

/// `text` with backslashes, `quote` and control characters escaped the JSON way (`\n`, `\u001b`):
/// the one escaping of every message and log line.
public func escaped(_ text: some StringProtocol, quote: Unicode.Scalar) -> String {
    var result = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case quote: result += "\\" + String(quote)
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case "\u{08}": result += "\\b"
        case "\u{0C}": result += "\\f"
        default:
            if isControl(scalar) {
                let digits = String(scalar.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
    }
    return result
}

/// C0 controls, DEL and the C1 controls: never raw in a log line.
public func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
}
