import HAL

/// How typed digits appear in the code field.
public enum CodeEcho: Hashable, Sendable {
    /// Every digit shows as `EntryTexts.maskCharacter`.
    case masked
    /// Digits show as typed.
    case shown
    /// The last digit typed shows for this long (or until the next key), then is masked.
    case shownBriefly(TimeSpan)
}

/// Every text of the code-entry flow, all configurable. `wrongCode` holds one `{n}` (the attempts
/// left), `lockedLabel` one `{s}` (the seconds left, formatted like the resend countdown).
///
/// On a 2-row display the flow has line 1 (the resend controller keeps line 2, its button label):
/// the field, or a message when one is due. On a 4-row display line 3 is the status (prompt or
/// message) and line 4 the field.
public struct EntryTexts: Hashable, Sendable {
    /// The placeholder for the attempts left in `wrongCode`.
    public static let countPlaceholder = "{n}"

    /// Status while the field is open (4-row displays).
    public var promptTitle = "Enter code"
    /// Printed before the digits in the field line.
    public var fieldPrefix = "Code: "
    /// Shown for a masked digit.
    public var maskCharacter: Character = "*"
    /// Shown for each digit still to type (up to the maximum length).
    public var emptyCharacter: Character = "_"
    /// While the verify command runs.
    public var verifyingTitle = "Checking..."
    /// The success screen (it takes both lines of a 2-row display for its duration).
    public var acceptedTitle = "Code accepted"
    public var acceptedLabel = "Welcome"
    /// A rejected code with an attempt limit: `{n}` is the attempts left before a lockout.
    public var wrongCode = "Wrong, {n} left"
    /// A rejected code without an attempt limit.
    public var wrongCodeUnlimited = "Wrong code"
    /// `#` pressed before the minimum length.
    public var tooShort = "Too short"
    /// A digit typed into a full field (it is not taken): `{n}` is the most digits the field takes.
    /// Shown for `EntryConfig.noticeDuration`, then the field again.
    public var tooLong = "Max {n} digits"
    /// The verify command failed (an exit status other than 0 and 1, a signal, could not start).
    public var verifyFailedTitle = "Check failed"
    /// The verify command ran past its time-out.
    public var verifyTimedOutTitle = "Check timed out"
    /// The verify command exited 75 (EX_TEMPFAIL: a rate limit, no network); no try was counted.
    public var tryLaterTitle = "Try again later"
    /// The lockout after too many wrong codes: status (4-row displays) and countdown line.
    public var lockedTitle = "Too many tries"
    public var lockedLabel = "Try again ({s})"
    /// The code's validity window ended: the user has to press Resend.
    public var expiredTitle = "Code expired"
    public var expiredLabel = "press Resend"
    /// Code entry is closed because the state cannot be written (a full or read-only disk): status
    /// (and the line 1 of a 2-row display) and, on a 4-row display, the line below.
    public var closedTitle = "Entry closed"
    public var closedLabel = "State not saved"

    /// The defaults above.
    public init() {}
}

/// The rules of the code-entry flow. Validate one read from the user with `problems(columns:)`;
/// `CodeEntry` treats an invalid configuration as a bug.
public struct EntryConfig: Hashable, Sendable {
    /// The fewest digits `#` submits.
    public var minLength = 4
    /// The most digits the field takes (1...`maximumLength`).
    public var maxLength = 8
    /// Submit as soon as the field holds `maxLength` digits, without `#`.
    public var submitAtMaxLength = false
    public var echo: CodeEcho = .masked
    /// Holding `*` this long clears the whole field (a press deletes one digit at once).
    public var holdToClear: TimeSpan = .seconds(1)
    /// No key for this long clears a field that holds digits; nil: never.
    public var entryTimeout: TimeSpan? = .seconds(30)
    /// How long after its send a code can be entered; then entry ends with "Code expired, press
    /// Resend". Nil: no window. Whole seconds.
    public var validity: TimeSpan? = .seconds(600)
    /// Wrong codes allowed per round before a lockout; nil: unlimited.
    public var maxAttempts: Int? = 3
    /// The lockout of each round: the first after `maxAttempts` wrong codes, the second after the
    /// next `maxAttempts`, ...; the last repeats. Whole seconds. Reset by an accepted code only
    /// (a resend does not reset it, or resending would bypass the limit).
    public var lockouts: [TimeSpan] = [.seconds(30), .seconds(120), .seconds(600)]
    /// How long the success screen shows.
    public var successDuration: TimeSpan = .seconds(3)
    /// The output line (door strike, relay) is pulsed active this long on an accepted code; nil:
    /// no output line.
    public var pulse: TimeSpan?
    public var texts = EntryTexts()
    /// The program makes the code itself at each send (`DeviceCode`: the kernel's random source,
    /// given to the send command on its standard input) and checks typed codes itself, in
    /// constant time; no verify command runs. False: the verify command checks.
    public var codeMadeOnDevice = false
    /// The length of a code made on the device (`minLength`...`maxLength`).
    public var codeLength = 6
    /// Code entry opens on a key press without a send (a code from an authenticator app: nothing
    /// is sent); the verify command checks. `validity` does not apply; attempts and lockouts do.
    /// Not with `codeMadeOnDevice` (a code nobody was sent cannot be typed).
    public var opensWithoutSend = false
    /// The display's width: a long lockout's seconds are shown in the form that fits it
    /// (`formatLockoutSeconds`).
    public var columns = 40
    /// How long a notice about a key shows over the field on a 2-row display ("Max 8 digits").
    public static let noticeDuration = TimeSpan.milliseconds(1_500)

    /// The longest field (digits), far above any SMS code.
    public static let maximumLength = 32
    /// The longest lockout, validity window and pulse: one day, like the cooldown.
    public static let maximumSeconds = 86_400

    public init() {}

    /// The longest lockout in whole seconds (0 without attempt limits).
    public var longestLockoutSeconds: Int {
        guard maxAttempts != nil, let longest = lockouts.max() else { return 0 }
        return Int(longest.nanoseconds / oneSecond.nanoseconds)
    }

    /// What is wrong with these rules on a display `columns` wide, one message per problem naming
    /// the field; empty when all is well.
    public func problems(columns: Int) -> [String] {
        var found: [String] = []
        let day = TimeSpan.seconds(Int64(EntryConfig.maximumSeconds))
        func positive(_ name: String, _ span: TimeSpan?, wholeSeconds: Bool = false) {
            guard let span else { return }
            if span <= .zero || span > day {
                found.append(name + " must be more than 0 and at most a day")
            } else if wholeSeconds && span.nanoseconds % oneSecond.nanoseconds != 0 {
                found.append(name + " must be whole seconds")
            }
        }
        if maxLength < 1 || maxLength > EntryConfig.maximumLength {
            found.append("maxLength must be from 1 to " + decimalString(EntryConfig.maximumLength))
        }
        if minLength < 1 || minLength > maxLength {
            found.append("minLength must be from 1 to maxLength")
        }
        if case .shownBriefly(let span) = echo { positive("echo", span) }
        positive("holdToClear", holdToClear)
        positive("entryTimeout", entryTimeout)
        positive("validity", validity, wholeSeconds: true)
        positive("successDuration", successDuration)
        positive("pulse", pulse)
        if let maxAttempts {
            if maxAttempts < 1 || maxAttempts > 1_000 { found.append("maxAttempts must be from 1 to 1000") }
            if lockouts.isEmpty { found.append("lockouts must name at least one lockout") }
            for lockout in lockouts { positive("lockouts", lockout, wholeSeconds: true) }
        }
        if codeMadeOnDevice && (codeLength < minLength || codeLength > maxLength) {
            found.append("codeLength must be from minLength to maxLength")
        }
        if codeMadeOnDevice && opensWithoutSend {
            found.append("opensWithoutSend cannot go with a code made on the device (it must be sent to be typed)")
        }
        let fieldWidth = texts.fieldPrefix.count + max(0, maxLength)
        if fieldWidth > columns {
            found.append(
                "fieldPrefix and maxLength need " + decimalString(fieldWidth) + " columns; the display has "
                    + decimalString(columns))
        }
        let widestLock = lockedLabel(seconds: longestLockoutSeconds, columns: columns)
        let widestWrong = texts.wrongCode.replacingPlaceholder(EntryTexts.countPlaceholder, with: decimalString(maxAttempts ?? 0))
        let widestLong = texts.tooLong.replacingPlaceholder(EntryTexts.countPlaceholder, with: decimalString(maxLength))
        for (name, text) in [
            ("promptTitle", texts.promptTitle), ("verifyingTitle", texts.verifyingTitle), ("acceptedTitle", texts.acceptedTitle),
            ("acceptedLabel", texts.acceptedLabel), ("wrongCode", widestWrong), ("wrongCodeUnlimited", texts.wrongCodeUnlimited),
            ("tooShort", texts.tooShort), ("tooLong", widestLong), ("verifyFailedTitle", texts.verifyFailedTitle),
            ("verifyTimedOutTitle", texts.verifyTimedOutTitle), ("tryLaterTitle", texts.tryLaterTitle), ("lockedTitle", texts.lockedTitle),
            ("lockedLabel", widestLock),
            ("expiredTitle", texts.expiredTitle), ("expiredLabel", texts.expiredLabel),
            ("closedTitle", texts.closedTitle), ("closedLabel", texts.closedLabel),
        ] where text.count > columns {
            found.append(
                name + " \"" + text + "\" is " + decimalString(text.count) + " characters wide; the display has "
                    + decimalString(columns) + " columns")
        }
        return found
    }

    /// `lockedLabel` with `seconds` left, in the form that fits `columns` (`formatLockoutSeconds`).
    public func lockedLabel(seconds: Int, columns: Int) -> String {
        let fixed = texts.lockedLabel.replacingPlaceholder(Texts.secondsPlaceholder, with: "").count
        return texts.lockedLabel.replacingPlaceholder(Texts.secondsPlaceholder, with: formatLockoutSeconds(seconds, width: max(0, columns - fixed)))
    }

    /// The lockout of round `round` (0 = the first): the last one repeats.
    func lockout(forRound round: Int) -> TimeSpan {
        lockouts[min(max(0, round), lockouts.count - 1)]
    }
}

extension String {
    /// `self` with every `placeholder` replaced by `value` (UTF-8 search, as `Texts.expand`).
    func replacingPlaceholder(_ placeholder: String, with value: String) -> String {
        let needle = Array(placeholder.utf8)
        let bytes = Array(utf8)
        guard !needle.isEmpty else { return self }
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if index + needle.count <= bytes.count && bytes[index..<(index + needle.count)].elementsEqual(needle) {
                out.append(contentsOf: value.utf8)
                index += needle.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
