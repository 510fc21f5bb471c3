import HALMock
import HAL

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

    public static let holdTime = TimeSpan.milliseconds(200)
    public static let bounces = 4
    public static let bounceSpacing = TimeSpan.microseconds(500)
    public static let glitchWidth = TimeSpan.milliseconds(5)

    public var time: TimeSpan {
        switch self {
        case .press(let t), .bounce(let t), .glitch(let t), .end(let t): return t
        }
    }
}

/// Parses a script: items separated by spaces, commas or new lines (LF or CRLF); `#` starts a
/// comment. Items are `press@T`, `bounce@T`, `glitch@T` and `end@T`, where T is a time after the
/// start: `12`, `12.5` or `12.5s` (seconds) or `500ms`, at most `ScriptItem.maximumTime` (10 years).
/// Throws a usage error naming the bad item.
public func parseScript(_ text: String, command: String) throws(ExitError) -> [ScriptItem] {
    var items: [ScriptItem] = []
    // Split on scalars: in a String "\r\n" is one Character, which a split on "\n" would not see.
    for rawLine in text.unicodeScalars.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" }) {
        let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? rawLine[...]
        for scalars in line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\r" }) {
            let token = String(String.UnicodeScalarView(scalars))
            let parts = token.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let time = parseTime(String(parts[1])) else {
                throw ExitError(.usage, "\(command): script item \(shown(token)) is not KIND@TIME (kinds: press, bounce, glitch, end; time like 12, 12.5s or 500ms)")
            }
            guard time <= ScriptItem.maximumTime else {
                throw ExitError(.usage, "\(command): script item \(shown(token)): the time is after \(ScriptItem.maximumTimeText), the latest a script may use")
            }
            switch parts[0] {
            case "press": items.append(.press(at: time))
            case "bounce": items.append(.bounce(at: time))
            case "glitch": items.append(.glitch(at: time))
            case "end": items.append(.end(at: time))
            default:
                throw ExitError(.usage, "\(command): script item \(shown(token)): unknown kind \(shown(parts[0])) (kinds: press, bounce, glitch, end)")
            }
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

/// `3.050`: seconds with exactly three decimals, for the headless output (never "3.5" for 3.050).
public func formatSeconds3(_ span: TimeSpan) -> String {
    let totalMillis = span.nanoseconds / 1_000_000
    let sign = totalMillis < 0 ? "-" : ""
    let magnitude = totalMillis < 0 ? -totalMillis : totalMillis
    let fraction = String(magnitude % 1000)
    return sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
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
    case .end:
        return []
    }
}
