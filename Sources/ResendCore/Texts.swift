/// Every text the device shows, all configurable. `countdownLabel` and `lockoutLabel` are
/// templates: their one `{s}` (`Texts.secondsPlaceholder`) is replaced by the seconds left,
/// formatted by `formatSeconds` ("Resend ({s})" -> "Resend (07)"). No other text is a template.
public struct Texts: Hashable, Sendable {
    /// The seconds placeholder in `countdownLabel`.
    public static let secondsPlaceholder = "{s}"

    /// Status line when ready, and during the cooldown when no send command is configured.
    public var title = "Verification"
    /// Label before the first press.
    public var sendLabel = "Send code"
    /// Status line while the send command runs.
    public var sendingTitle = "Sending..."
    /// Status line during the cooldown after the send command succeeded.
    public var sentTitle = "Code sent"
    /// Label during the cooldown (and while sending); must contain exactly one `{s}`.
    public var countdownLabel = "Resend ({s})"
    /// Label when ready again after a countdown, or after a failed send.
    public var resendLabel = "Resend"
    /// Label while the resend policy's cap locks the button (`ResendPolicy.cap`), counting down to
    /// when sending is allowed again; must contain exactly one `{s}`.
    public var lockoutLabel = "Wait ({s})"
    /// Status line after the send command failed or timed out.
    public var failedTitle = "Send failed"
    /// Status line after the send command exited 75 (EX_TEMPFAIL: rate-limited or a temporary
    /// fault): nothing was sent and the send did not count.
    public var tryLaterTitle = "Try later"
    /// Status line after the program was asked to stop.
    public var stoppedTitle = "Stopped"
    /// Label after the program was asked to stop.
    public var stoppedLabel = ""

    /// The defaults above.
    public init() {}

    /// `template` with every `{s}` replaced by `formatSeconds(seconds)`.
    public func expand(_ template: String, seconds: Int) -> String {
        let pieces = splitAtPlaceholders(template)
        guard pieces.count > 1 else { return template }
        let number = formatSeconds(seconds)
        var result = pieces[0]
        for piece in pieces.dropFirst() {
            result += number
            result += piece
        }
        return result
    }

    /// The texts that will not display properly on a display `columns` wide when countdowns go up
    /// to `maxSeconds` (the longest cooldown) and lockouts up to `maxLockoutSeconds` (the cap's
    /// window; `maxSeconds` when nil):
    /// - `.placeholderCount`: a template without exactly one `{s}`, or any other text with a
    ///   `{s}` (it would be shown literally);
    /// - `.tooWide`: a text wider than `columns`; a template is measured expanded at its widest
    ///   number.
    ///
    /// Empty when all is well. Fields are reported in declaration order, placeholder problems of a
    /// field before its width problem.
    public func problems(columns: Int, maxSeconds: Int, maxLockoutSeconds: Int? = nil) -> [TextProblem] {
        precondition(maxSeconds >= 0, "Texts.problems: maxSeconds must not be negative")
        precondition((maxLockoutSeconds ?? 0) >= 0, "Texts.problems: maxLockoutSeconds must not be negative")
        var found: [TextProblem] = []
        for (field, value) in fields {
            let isTemplate = Texts.templateFields.contains(field)
            let widest = field == Texts.lockoutField ? (maxLockoutSeconds ?? maxSeconds) : maxSeconds
            let placeholders = splitAtPlaceholders(value).count - 1
            let expectedPlaceholders = isTemplate ? 1 : 0
            let shown = isTemplate ? expand(value, seconds: widest) : value
            // One display cell per Unicode scalar, as the ROM encodes it ("e\u{301}" takes two).
            let width = shown.unicodeScalars.count
            if placeholders != expectedPlaceholders {
                found.append(
                    TextProblem(
                        field: field, value: value, width: width, limit: columns,
                        kind: .placeholderCount(found: placeholders, expected: expectedPlaceholders),
                        seconds: isTemplate ? widest : nil))
            }
            if width > columns {
                found.append(
                    TextProblem(
                        field: field, value: value, width: width, limit: columns, kind: .tooWide,
                        seconds: isTemplate ? widest : nil))
            }
        }
        return found
    }

    /// The name of the countdown template field, as `TextProblem.field` spells it.
    static let templateField = "countdownLabel"
    /// The name of the lockout template field.
    static let lockoutField = "lockoutLabel"
    /// The fields that show the seconds.
    static let templateFields = [templateField, lockoutField]

    /// Every field with its name, in declaration order.
    public var fields: [(String, String)] {
        [
            ("title", title),
            ("sendLabel", sendLabel),
            ("sendingTitle", sendingTitle),
            ("sentTitle", sentTitle),
            (Texts.templateField, countdownLabel),
            ("resendLabel", resendLabel),
            (Texts.lockoutField, lockoutLabel),
            ("failedTitle", failedTitle),
            ("tryLaterTitle", tryLaterTitle),
            ("stoppedTitle", stoppedTitle),
            ("stoppedLabel", stoppedLabel),
        ]
    }
}

/// `text` split at each `{s}`: one piece more than there are placeholders.
/// Searches the UTF-8 bytes; the placeholder is ASCII, and UTF-8 never hides an ASCII byte inside
/// a multi-byte sequence, so a match is always a real `{s}`.
func splitAtPlaceholders(_ text: String) -> [String] {
    let needle = Array(Texts.secondsPlaceholder.utf8)
    let bytes = Array(text.utf8)
    var pieces: [String] = []
    var pieceStart = 0
    var index = 0
    while index + needle.count <= bytes.count {
        if bytes[index..<(index + needle.count)].elementsEqual(needle) {
            pieces.append(String(decoding: bytes[pieceStart..<index], as: UTF8.self))
            index += needle.count
            pieceStart = index
        } else {
            index += 1
        }
    }
    pieces.append(String(decoding: bytes[pieceStart...], as: UTF8.self))
    return pieces
}

/// A configured text that will not display properly. Made for a clear message to the user
/// (`message`) and for tests (the fields).
public struct TextProblem: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// The text is wider than the display.
        case tooWide
        /// The text has `found` seconds placeholders where `expected` are needed.
        case placeholderCount(found: Int, expected: Int)
    }

    /// The field's name as in `Texts`, e.g. "countdownLabel".
    public var field: String
    /// The configured text, unexpanded.
    public var value: String
    /// Its width in characters as shown (a template expanded at `seconds`).
    public var width: Int
    /// The display's width in characters.
    public var limit: Int
    public var kind: Kind
    /// The seconds a template was expanded with to measure it; nil for plain texts.
    public var seconds: Int?

    public init(field: String, value: String, width: Int, limit: Int, kind: Kind, seconds: Int? = nil) {
        self.field = field
        self.value = value
        self.width = width
        self.limit = limit
        self.kind = kind
        self.seconds = seconds
    }

    /// One line for a human, e.g.
    /// `countdownLabel "Try again ({s})" is 15 characters wide at 120 s; the display has 12 columns`.
    public var message: String {
        let quoted = field + " \"" + value + "\""
        switch kind {
        case .tooWide:
            var text = quoted + " is " + decimalString(width) + " characters wide"
            if let seconds {
                text += " at " + decimalString(seconds) + " s"
            }
            return text + "; the display has " + decimalString(limit) + " columns"
        case .placeholderCount(let found, let expected):
            let placeholder = Texts.secondsPlaceholder
            if expected == 0 {
                return quoted + " must not contain " + placeholder + " (only "
                    + Texts.templateField + " and " + Texts.lockoutField + " show the seconds)"
            }
            return quoted + " needs exactly " + decimalString(expected) + " " + placeholder
                + " for the seconds, found " + decimalString(found)
        }
    }
}
