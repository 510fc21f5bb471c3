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

/// Parses a script: items separated by spaces, commas or new lines; `#` starts a comment.
/// Items are `press@T`, `bounce@T`, `glitch@T` and `end@T`, where T is a time after the start:
/// `12`, `12.5` or `12.5s` (seconds) or `500ms`. Throws a usage error naming the bad item.
public func parseScript(_ text: String, command: String) throws(ExitError) -> [ScriptItem] {
    var items: [ScriptItem] = []
    for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        for token in line.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\r" }) {
            let parts = token.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let time = parseTime(String(parts[1])) else {
                throw ExitError(.usage, "\(command): script item '\(token)' is not KIND@TIME (kinds: press, bounce, glitch, end; time like 12, 12.5s or 500ms)")
            }
            switch parts[0] {
            case "press": items.append(.press(at: time))
            case "bounce": items.append(.bounce(at: time))
            case "glitch": items.append(.glitch(at: time))
            case "end": items.append(.end(at: time))
            default:
                throw ExitError(.usage, "\(command): script item '\(token)': unknown kind '\(parts[0])' (kinds: press, bounce, glitch, end)")
            }
        }
    }
    return items
}

/// `12` / `12.5` / `12.5s` seconds or `500ms`, not negative, at most 3 decimals for seconds.
public func parseTime(_ text: String) -> TimeSpan? {
    if text.hasSuffix("ms") {
        guard let ms = Int64(text.dropLast(2)), ms >= 0 else { return nil }
        return .milliseconds(ms)
    }
    let number = text.hasSuffix("s") ? String(text.dropLast()) : text
    let parts = number.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, let whole = Int64(parts[0]), whole >= 0, !parts[0].hasPrefix("+") else { return nil }
    var millis: Int64 = 0
    if parts.count == 2 {
        let fraction = parts[1]
        guard (1...3).contains(fraction.count), fraction.allSatisfy({ $0.isASCII }), let digits = Int64(fraction) else { return nil }
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
