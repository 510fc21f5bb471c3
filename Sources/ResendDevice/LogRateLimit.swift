import HAL

/// Bounds the log lines an outsider can cause (a flood of MQTT commands, a key held to a button
/// during a countdown), so that journald's own rate limit (10,000 lines per 30 s by default) never
/// drops the device's own lines (`code rejected`, `lockout started`). Per event of `limited`, at
/// most `burst` lines pass in a `window` that starts at the first of them; the rest are counted,
/// and once the window is over one summary line says how many were left out:
/// `log suppressed event="mqtt command" count=199990 seconds=10`. Events outside `limited` always
/// pass. A value on virtual time: `now` comes in, nothing is read from a clock.
public struct LogRateLimit: Sendable {
    /// The events an outsider can cause at will, from the network or at the door.
    public static let outsiderEvents: Set<String> = [
        "mqtt command", "mqtt command refused", "mqtt message dropped", "press ignored", "press locked out",
        "code too short", "entry cleared", "bounces suppressed", "keypad events lost", "dropped edge events",
    ]
    public static let defaultBurst = 10
    public static let defaultWindow = TimeSpan.seconds(10)

    public let limited: Set<String>
    public let burst: Int
    public let window: TimeSpan

    private struct Window: Sendable {
        var start: Instant
        var passed: Int
        var suppressed: Int
    }
    /// The open windows, in the order their events first came (summaries keep that order).
    private var windows: [(event: String, window: Window)] = []

    public init(limited: Set<String> = outsiderEvents, burst: Int = defaultBurst, window: TimeSpan = defaultWindow) {
        precondition(burst > 0 && window > .zero, "a rate limit lets at least one line pass per window")
        self.limited = limited
        self.burst = burst
        self.window = window
    }

    /// True when a line of `event` at `now` is to be written; false when it is counted instead.
    /// Call `summaries(at:)` first, so that a window that ended is closed before a new one opens.
    public mutating func admit(_ event: String, at now: Instant) -> Bool {
        guard limited.contains(event) else { return true }
        if let index = windows.firstIndex(where: { $0.event == event }) {
            if windows[index].window.passed < burst {
                windows[index].window.passed += 1
                return true
            }
            windows[index].window.suppressed += 1
            return false
        }
        windows.append((event, Window(start: now, passed: 1, suppressed: 0)))
        return true
    }

    /// Closes the windows that ended by `now`: one summary line for each that left lines out.
    public mutating func summaries(at now: Instant) -> [LogRecord] {
        var out: [LogRecord] = []
        windows.removeAll { entry in
            guard now - entry.window.start >= window else { return false }
            if entry.window.suppressed > 0 {
                out.append(
                    LogRecord(
                        "log suppressed",
                        [.string("event", entry.event), .int("count", entry.window.suppressed), .int("seconds", wholeSeconds(window))]))
            }
            return true
        }
        return out
    }

    /// When the next summary is due (the end of the earliest window that left lines out); nil
    /// when none is.
    public var nextSummary: Instant? {
        windows.filter { $0.window.suppressed > 0 }.map { $0.window.start + window }.min()
    }
}

private func wholeSeconds(_ span: TimeSpan) -> Int {
    Int(span.nanoseconds / TimeSpan.seconds(1).nanoseconds)
}
