import HAL

/// How a `Debouncer` turns a bouncing line into clean changes.
public enum DebounceMode: Sendable {
    /// Report a change once the line has stayed at the new level for the whole window (default).
    /// Immune to glitches shorter than the window; every change comes one window late.
    case stable
    /// Report the first edge at once, then ignore the line for the window. Reacts without delay
    /// but takes any glitch (noise) for a press.
    case prompt
}

/// A debounced change of the button: the logical level (`pressed`) and when it took effect.
public struct DebouncedChange: Hashable, Sendable {
    public var pressed: Bool
    public var time: Instant

    public init(pressed: Bool, time: Instant) {
        self.pressed = pressed
        self.time = time
    }
}

/// Turns raw button edges (with kernel timestamps) into debounced changes. Both edges (press and
/// release) are debounced, so holding the button never repeats and a new press needs a debounced
/// release first.
///
/// A pure value: it never reads a clock. The loop feeds it edges, and calls `advance(to:)` once the
/// clock reaches `nextDeadline`. Changes come out in time order; their `time` never goes backwards.
///
/// Imperfect input is handled so:
/// - An edge stamped earlier than an edge or change already handled (out of order, or queued
///   behind an `advance`) is taken to happen at that later time: history is not rewritten.
/// - An edge repeating the line's last level (an opposite edge was lost) counts as a bounce: in
///   stable mode it restarts the window of a pending change, otherwise it changes nothing.
/// - When a feed makes more than one change due (prompt mode, long after an unreported deadline),
///   `feed` returns the first, and `nextDeadline` is then the time of the next, already reached:
///   the loop's next `advance(to:)` reports it.
public struct Debouncer {
    /// How long the line must stay put (stable) or is ignored after a change (prompt).
    public let window: TimeSpan
    public let mode: DebounceMode
    /// The debounced level: the level of the last change reported or queued.
    public private(set) var isPressed: Bool
    /// Edges that did not produce a change (bounces, glitches, repeats), for the log. An edge is
    /// counted once its fate is known: a burst still pending is not counted yet.
    public private(set) var suppressedEdges: Int = 0
    /// The raw level of the line as of the last edge (or the last reconciling read).
    public private(set) var rawPressed: Bool
    /// Reads of the line that found it elsewhere than the edges said (edges were lost).
    public private(set) var reconciledLevels: Int = 0

    /// The latest time handled: the last edge's or the last change's. Edges are not let before it.
    private var horizon: Instant?
    /// Stable mode: when the pending change (raw level != debounced level) becomes due.
    private var stableDeadline: Instant?
    /// Prompt mode: the line is ignored until this instant.
    private var lockoutUntil: Instant?
    /// Edges since the debounced level last matched the raw level; decided at the next change
    /// (all but one were bounces) or when the line returns to the debounced level (all were).
    private var undecidedEdges = 0
    /// Changes already made but not yet returned (prompt mode only; in time order).
    private var unreported: [DebouncedChange] = []

    /// - Parameters:
    ///   - window: the debounce interval, more than zero; 20 ms suits most tactile switches.
    ///   - mode: `.stable` (default) or `.prompt`.
    ///   - initial: the button's logical level at start-up.
    public init(window: TimeSpan = .milliseconds(20), mode: DebounceMode = .stable, pressed initial: Bool = false) {
        precondition(window > .zero, "Debouncer: the window must be longer than zero")
        self.window = window
        self.mode = mode
        self.isPressed = initial
        self.rawPressed = initial
    }

    /// When `advance(to:)` must next be called: the instant a pending change becomes due (stable:
    /// last edge + window; prompt: end of the lock-out when the line moved meanwhile), or the time
    /// of a change already due. Nil when nothing is pending.
    public var nextDeadline: Instant? {
        if let next = unreported.first { return next.time }
        switch mode {
        case .stable:
            return stableDeadline
        case .prompt:
            return rawPressed != isPressed ? lockoutUntil : nil
        }
    }

    /// Feeds a raw edge, timestamped by the kernel on the monotonic clock. Prompt mode may return
    /// the change at once. Also returns a pending change whose deadline is at or before the edge
    /// when `advance(to:)` was not called for it yet.
    public mutating func feed(_ edge: ButtonEdge) -> DebouncedChange? {
        let time = notBeforeHorizon(edge.time)
        switch mode {
        case .stable:
            if let due = stableDeadline, due <= time {
                unreported.append(commit(at: due))
            }
        case .prompt:
            endLockout(upTo: time)
        }
        takeRawLevel(edge.pressed, at: time)
        return unreported.isEmpty ? nil : unreported.removeFirst()
    }

    /// Takes a read of the line's level into account. When it agrees with the last edge, nothing
    /// changes. When it does not, edges were lost (a kernel event buffer overflowed): the line is
    /// taken to have changed at `level.time`, like an edge then, except that a change pending on
    /// the last edge's level is not made first (its window did not hold). Returns a change due at
    /// once (prompt mode), like `feed`.
    public mutating func reconcile(_ level: ButtonLevel) -> DebouncedChange? {
        guard level.pressed != rawPressed else { return nil }
        reconciledLevels += 1
        takeRawLevel(level.pressed, at: notBeforeHorizon(level.time))
        return unreported.isEmpty ? nil : unreported.removeFirst()
    }

    /// `time`, or the latest time already seen when it is earlier: time never runs backwards.
    private func notBeforeHorizon(_ time: Instant) -> Instant {
        if let horizon, time < horizon { return horizon }
        return time
    }

    /// The line went to raw level `pressed` at `time` (not before the horizon), after any change
    /// due before `time` was made. Stable mode: a level other than the debounced one (re)starts the
    /// window; the debounced level settles the undecided edges as bounces. Prompt mode: inside a
    /// lock-out the level waits for its end; outside one, another level is a change at `time` and
    /// starts a lock-out, the debounced level settles the edges as bounces and ends the lock-out.
    private mutating func takeRawLevel(_ pressed: Bool, at time: Instant) {
        undecidedEdges += 1
        rawPressed = pressed
        switch mode {
        case .stable:
            if rawPressed != isPressed {
                // Any edge, repeated level included, shows the line was not stable: restart.
                stableDeadline = time + window
            } else {
                stableDeadline = nil
                settleAsBounces()
            }
        case .prompt:
            if let until = lockoutUntil, time < until {
                // Ignored for now; looked at again when the lock-out ends.
                if rawPressed == isPressed { settleAsBounces() }
            } else if rawPressed != isPressed {
                unreported.append(commit(at: time))
                lockoutUntil = time + window
            } else {
                lockoutUntil = nil
                settleAsBounces()
            }
        }
        horizon = max(horizon ?? time, time)
    }

    /// Reports a change that is due at `now` (the loop calls this when the clock reaches
    /// `nextDeadline`, or later): stable mode, the line stayed at a new level for the window
    /// (`time` = last edge + window); prompt mode, the lock-out ended with the line at the other
    /// level (`time` = end of the lock-out). Nil when nothing is due; calling early is harmless.
    public mutating func advance(to now: Instant) -> DebouncedChange? {
        switch mode {
        case .stable:
            if let due = stableDeadline, due <= now {
                unreported.append(commit(at: due))
            }
        case .prompt:
            endLockout(upTo: now)
        }
        guard let next = unreported.first, next.time <= now else { return nil }
        return unreported.removeFirst()
    }

    /// Prompt mode: when the lock-out ended at or before `time`, takes the line's level then as a
    /// change (starting a new lock-out), or just ends the lock-out when the line is back.
    private mutating func endLockout(upTo time: Instant) {
        guard let until = lockoutUntil, until <= time else { return }
        if rawPressed != isPressed {
            unreported.append(commit(at: until))
            lockoutUntil = until + window
        } else {
            lockoutUntil = nil
        }
    }

    /// Makes the raw level the debounced level at `time`; the last undecided edge made the change.
    private mutating func commit(at time: Instant) -> DebouncedChange {
        precondition(rawPressed != isPressed, "Debouncer: commit without a level change")
        precondition(undecidedEdges >= 1, "Debouncer: a change needs an edge")
        isPressed = rawPressed
        suppressedEdges += undecidedEdges - 1
        undecidedEdges = 0
        stableDeadline = nil
        horizon = max(horizon ?? time, time)
        return DebouncedChange(pressed: isPressed, time: time)
    }

    /// The line is back at the debounced level: every undecided edge was a bounce.
    private mutating func settleAsBounces() {
        suppressedEdges += undecidedEdges
        undecidedEdges = 0
    }
}
