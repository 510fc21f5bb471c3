import HAL
import HALMock
import ResendConfig
import ResendDevice

/// One step of a headless simulation script.
public enum ScriptItem: Hashable, Sendable {
    /// A clean press held for `ScriptItem.holdTime`, then released.
    case press(at: TimeSpan)
    /// A press whose contact bounces (`bounces` times, edges `bounceSpacing` apart: 9 edges that
    /// settle pressed), held, then released.
    case bounce(at: TimeSpan)
    /// A short pulse (`glitchWidth`) such as electrical noise: never a press.
    case glitch(at: TimeSpan)
    /// Stop the simulation at this time (otherwise it ends once the script is done and nothing is pending).
    case end(at: TimeSpan)
    /// A keypad key tapped: pressed at the time, released `keyHoldTime` later (`key@T:5`).
    case key(at: TimeSpan, Key)
    /// Keys typed one after the other: the n-th pressed `keySpacing` x n after the time, each
    /// held `keyHoldTime` (`keys@T:1234#`).
    case keys(at: TimeSpan, [Key])
    /// A key (or the single button, `Key.button`) goes down and stays down (`down@T:*`, `down@T:button`).
    case down(at: TimeSpan, Key)
    /// A key (or the button) comes up (`up@T:*`, `up@T:button`).
    case up(at: TimeSpan, Key)

    public static let holdTime = TimeSpan.milliseconds(200)
    public static let bounces = 4
    public static let bounceSpacing = TimeSpan.microseconds(500)
    public static let glitchWidth = TimeSpan.milliseconds(5)
    /// How long a scripted key tap is held: a brisk finger on a membrane keypad (longer than the
    /// default 20 ms debounce window, so a `keypad.debounceMs` of 100 or more filters it out, as
    /// it would such a tap on the device).
    public static let keyHoldTime = TimeSpan.milliseconds(100)
    /// From one key's press to the next in `keys@`: about three keys a second, a person typing a
    /// code read off a phone.
    public static let keySpacing = TimeSpan.milliseconds(300)
    /// The most keys one `keys@` item may type.
    public static let maximumKeysPerItem = 64

    public var time: TimeSpan {
        switch self {
        case .press(let t), .bounce(let t), .glitch(let t), .end(let t): return t
        case .key(let t, _), .keys(let t, _), .down(let t, _), .up(let t, _): return t
        }
    }

    /// True for an item that needs the keypad: a keypad key (not the button) tapped, typed, held or released.
    public var needsKeypad: Bool {
        switch self {
        case .press, .bounce, .glitch, .end: return false
        case .key, .keys: return true
        case .down(_, let key), .up(_, let key): return key != .button
        }
    }
}

/// The kinds of script items, for messages.
private let scriptKinds = "press, bounce, glitch, end, key, keys, down, up"
/// What may follow the time of a key item.
private let keyCharacters = "0-9, *, #, A-D"

/// The script's tokens: items separated by spaces, commas, tabs or new lines (LF or CRLF). A `#`
/// at the start of an item, or inside any other than a key item's keys, starts a comment to the
/// end of the line; in the keys of `key@`, `keys@`, `down@` and `up@` (after the `:`) it is the
/// `#` key.
private func scriptTokens(_ text: String) -> [String] {
    var tokens: [String] = []
    // Split on scalars: in a String "\r\n" is one Character, which a split on "\n" would not see.
    for line in text.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" }) {
        var token = String.UnicodeScalarView()
        var inKeys = false
        var sawColon = false
        for scalar in line {
            if scalar == " " || scalar == "," || scalar == "\t" || scalar == "\r" {
                if !token.isEmpty { tokens.append(String(token)) }
                token = String.UnicodeScalarView()
                inKeys = false
                sawColon = false
                continue
            }
            if scalar == "#" && !inKeys {
                break
            }
            token.append(scalar)
            if scalar == ":" && !sawColon {
                // The keys of a key item start after its first colon (checked once per token).
                sawColon = true
                let text = String(token)
                inKeys = ["key@", "keys@", "down@", "up@"].contains { text.hasPrefix($0) }
            }
        }
        if !token.isEmpty { tokens.append(String(token)) }
    }
    return tokens
}

/// Parses a script: items separated by spaces, commas or new lines (LF or CRLF); `#` starts a
/// comment (except in a key item's keys, where it is the `#` key). Items are `press@T`, `bounce@T`,
/// `glitch@T` and `end@T`, where T is a time after the start: `12`, `12.5` or `12.5s` (seconds)
/// or `500ms`, at most `ScriptItem.maximumTime` (10 years); and the keypad's `key@T:K` (one key),
/// `keys@T:KEYS` (typed `keySpacing` apart), `down@T:K` and `up@T:K` (K a key or `button`).
/// Throws a usage error naming the bad item.
public func parseScript(_ text: String, command: String) throws(ExitError) -> [ScriptItem] {
    var items: [ScriptItem] = []
    for token in scriptTokens(text) {
        let parts = token.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let kind = parts[0]
        let isKeyKind = kind == "key" || kind == "keys" || kind == "down" || kind == "up"
        var timeText = parts.count == 2 ? parts[1] : ""
        var keysText: Substring?
        if isKeyKind, let colon = timeText.firstIndex(of: ":") {
            keysText = timeText[timeText.index(after: colon)...]
            timeText = timeText[..<colon]
        }
        guard parts.count == 2, !timeText.contains("@"), let time = parseTime(String(timeText)) else {
            throw ExitError(
                .usage,
                "\(command): script item \(shown(token)) is not KIND@TIME or KIND@TIME:KEYS (kinds: press, bounce, glitch, end; with keys: key, keys, down, up; time like 12, 12.5s or 500ms)"
            )
        }
        guard time <= ScriptItem.maximumTime else {
            throw ExitError(
                .usage, "\(command): script item \(shown(token)): the time is after \(ScriptItem.maximumTimeText), the latest a script may use")
        }
        switch kind {
        case "press": items.append(.press(at: time))
        case "bounce": items.append(.bounce(at: time))
        case "glitch": items.append(.glitch(at: time))
        case "end": items.append(.end(at: time))
        case "key", "keys", "down", "up":
            let holds = kind == "down" || kind == "up"
            let allowed = holds ? keyCharacters + " or button" : keyCharacters
            guard let keysText, !keysText.isEmpty else {
                throw ExitError(
                    .usage,
                    "\(command): script item \(shown(token)): give the key after the time, like \(kind)@1:\(kind == "keys" ? "1234#" : (holds ? "*" : "5")) (keys: \(allowed))"
                )
            }
            if keysText == "button" {
                guard holds else {
                    throw ExitError(
                        .usage,
                        "\(command): script item \(shown(token)): the button is no keypad key; allowed: \(keyCharacters) (press@T, or down@T:button and up@T:button, for the button)"
                    )
                }
                items.append(kind == "down" ? .down(at: time, .button) : .up(at: time, .button))
                continue
            }
            var keys: [Key] = []
            for scalar in keysText.unicodeScalars {
                guard scalar.isASCII, let key = Key(symbol: UInt8(scalar.value)) else {
                    throw ExitError(.usage, "\(command): script item \(shown(token)): \(shown(String(scalar))) is not a key (allowed: \(allowed))")
                }
                keys.append(key)
                guard keys.count <= ScriptItem.maximumKeysPerItem else { break }
            }
            if kind == "keys" {
                guard keys.count <= ScriptItem.maximumKeysPerItem else {
                    throw ExitError(
                        .usage,
                        "\(command): script item \(shown(token)): more than \(ScriptItem.maximumKeysPerItem) keys; allowed: 1 to \(ScriptItem.maximumKeysPerItem) of \(keyCharacters) (split longer input into several items)"
                    )
                }
                items.append(.keys(at: time, keys))
                continue
            }
            guard keys.count == 1 else {
                throw ExitError(
                    .usage,
                    "\(command): script item \(shown(token)): one key per \(kind)@ item (allowed: \(allowed))\(kind == "key" ? "; for several keys use keys@" : "")"
                )
            }
            switch kind {
            case "key": items.append(.key(at: time, keys[0]))
            case "down": items.append(.down(at: time, keys[0]))
            default: items.append(.up(at: time, keys[0]))
            }
        default:
            throw ExitError(.usage, "\(command): script item \(shown(token)): unknown kind \(shown(kind)) (kinds: \(scriptKinds))")
        }
    }
    return items
}

extension ScriptItem {
    /// The latest time a script item (or a `--mock-send` delay) may have: 10 years of 365 days,
    /// 315,360,000 s. Far beyond any useful script, and far inside what the clocks hold: the
    /// virtual clock (±292 years of nanoseconds) plus a cooldown or cap window (at most a day),
    /// and the wall clock (now, about 56 years after 1970, plus 10 years) stay in range, so no
    /// arithmetic on a script time can overflow.
    public static let maximumSeconds: Int64 = 315_360_000
    public static let maximumTime = TimeSpan.seconds(maximumSeconds)
    static let maximumTimeText = "315360000 s (10 years)"
}

/// `12` / `12.5` / `12.5s` seconds or `500ms`, not negative, at most 3 decimals for seconds.
/// Never traps: a huge number saturates (compare with `ScriptItem.maximumTime`).
public func parseTime(_ text: String) -> TimeSpan? {
    func isDigits(_ text: Substring) -> Bool { !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) } }
    if text.hasSuffix("ms") {
        let digits = text.dropLast(2)
        guard isDigits(digits) else { return nil }
        return .milliseconds(Int64(digits) ?? .max)
    }
    let number = text.hasSuffix("s") ? text.dropLast() : Substring(text)
    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, isDigits(parts[0]) else { return nil }
    let whole = Int64(parts[0]) ?? .max
    var millis: Int64 = 0
    if parts.count == 2 {
        let fraction = parts[1]
        guard (1...3).contains(fraction.count), isDigits(fraction), let digits = Int64(fraction) else { return nil }
        millis = digits * [100, 10, 1][fraction.count - 1]
    }
    return .seconds(whole) + .milliseconds(millis)
}

/// The raw edges a script item produces, relative to the simulation's start.
public func edges(for item: ScriptItem, start: Instant) -> [ButtonEdge] {
    let t = start + item.time
    switch item {
    case .press:
        return ButtonScript.press(at: t, holdFor: ScriptItem.holdTime)
    case .bounce:
        return ButtonScript.bouncyPress(at: t, bounces: ScriptItem.bounces, spacing: ScriptItem.bounceSpacing, holdFor: ScriptItem.holdTime)
    case .glitch:
        return ButtonScript.glitch(at: t, width: ScriptItem.glitchWidth)
    case .end, .key, .keys:
        return []
    case .down(_, let key):
        return key == .button ? [ButtonEdge(pressed: true, time: t)] : []
    case .up(_, let key):
        return key == .button ? [ButtonEdge(pressed: false, time: t)] : []
    }
}

/// The raw keypad key events a script item produces, relative to the simulation's start (none for
/// the button's items, which are edges: `edges(for:start:)`).
public func keyEvents(for item: ScriptItem, start: Instant) -> [KeyEvent] {
    let t = start + item.time
    switch item {
    case .press, .bounce, .glitch, .end:
        return []
    case .key(_, let key):
        return [KeyEvent(key, .pressed, at: t), KeyEvent(key, .released, at: t + ScriptItem.keyHoldTime)]
    case .keys(_, let keys):
        var events: [KeyEvent] = []
        var at = t
        for key in keys {
            events.append(KeyEvent(key, .pressed, at: at))
            events.append(KeyEvent(key, .released, at: at + ScriptItem.keyHoldTime))
            at = at + ScriptItem.keySpacing
        }
        return events
    case .down(_, let key):
        return key == .button ? [] : [KeyEvent(key, .pressed, at: t)]
    case .up(_, let key):
        return key == .button ? [] : [KeyEvent(key, .released, at: t)]
    }
}
