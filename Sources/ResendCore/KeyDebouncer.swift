import HAL

/// One `Debouncer` per key: raw key events in, debounced key events out, in time order. Every key
/// of every backend goes through it, the single button (`Key.button`) included, so a key behaves
/// exactly like the button (a press needs the line to settle; holding never repeats; a new press
/// needs a debounced release first), and a lost edge of any key whose level can be read is
/// repaired the same way (`reconcile`).
///
/// A key debounces with `window` and `mode` unless it was given its own `Debouncer` (`use(_:for:)`:
/// the button keeps its own window, mode and start-up level).
///
/// A pure value like `Debouncer`: it never reads a clock. Feed raw events with `feed`, and call
/// `advance(to:)` once the clock reaches `nextDeadline`.
public struct KeyDebouncer {
    /// The window of keys without their own debouncer.
    public let window: TimeSpan
    /// The mode of keys without their own debouncer.
    public let mode: DebounceMode
    /// The keys seen so far with their debouncers, in the order first seen.
    private var debouncers: [(key: Key, debouncer: Debouncer)] = []
    /// Keys given their own debouncer (`use(_:for:)`) that have not been seen yet.
    private var own: [(key: Key, debouncer: Debouncer)] = []

    public init(window: TimeSpan = .milliseconds(20), mode: DebounceMode = .stable) {
        precondition(window > .zero, "KeyDebouncer: the window must be longer than zero")
        self.window = window
        self.mode = mode
    }

    /// `key` debounces through `debouncer` (its window, mode and start-up level). Call before the
    /// key's first event. The key still counts as first seen at its first event (ties between
    /// keys' changes come out in that order).
    public mutating func use(_ debouncer: Debouncer, for key: Key) {
        precondition(!debouncers.contains { $0.key == key }, "KeyDebouncer.use: the key was seen already")
        own.removeAll { $0.key == key }
        own.append((key: key, debouncer: debouncer))
    }

    /// When `key`'s pending change becomes due (`Debouncer.nextDeadline`); nil when none is.
    public func nextDeadline(of key: Key) -> Instant? {
        debouncer(of: key)?.nextDeadline
    }

    /// `key`'s raw level as of its last event or reconciling read (`Debouncer.rawPressed`);
    /// released for a key never seen.
    public func rawPressed(_ key: Key) -> Bool {
        debouncer(of: key)?.rawPressed ?? false
    }

    /// Reads of any key that found it elsewhere than its events said (`Debouncer.reconciledLevels`).
    public var reconciledLevels: Int {
        debouncers.reduce(0) { $0 + $1.debouncer.reconciledLevels }
    }

    /// The earliest instant at which a pending change of any key becomes due; nil when none is.
    public var nextDeadline: Instant? {
        var next: Instant?
        for entry in debouncers { next = earliest(next, entry.debouncer.nextDeadline) }
        return next
    }

    /// True when `key`'s debounced level is pressed.
    public func isPressed(_ key: Key) -> Bool {
        debouncer(of: key)?.isPressed ?? false
    }

    /// `key`'s debouncer: the one it was seen with, or the one it was given; nil for neither.
    private func debouncer(of key: Key) -> Debouncer? {
        (debouncers.first { $0.key == key } ?? own.first { $0.key == key })?.debouncer
    }

    /// `key`'s raw edges that did not make a change (bounces), for the log; 0 for a key never seen.
    public func suppressedEdges(of key: Key) -> Int {
        debouncer(of: key)?.suppressedEdges ?? 0
    }

    /// Every key known: those seen, in the order first seen, then those given their own debouncer
    /// and not seen yet (the button before its first edge). The keys whose level a lost edge may
    /// have left wrong.
    public var keys: [Key] {
        debouncers.map { $0.key } + own.map { $0.key }
    }

    /// The keys whose pending change is due at `now` (their window closes), in the order first seen.
    public func keysDue(at now: Instant) -> [Key] {
        debouncers.compactMap { entry in entry.debouncer.nextDeadline.map { $0 <= now } == true ? entry.key : nil }
    }

    /// Feeds a raw event. Returns the debounced events it makes due: a change of another key that
    /// fell due at or before this event comes first (so the result is in time order), then this
    /// key's own change (prompt mode: at once).
    public mutating func feed(_ event: KeyEvent) -> [KeyEvent] {
        var out = advance(to: event.at)
        let index = indexOf(event.key)
        if let change = debouncers[index].debouncer.feed(ButtonEdge(pressed: event.isPress, time: event.at)) {
            out.append(KeyEvent(event.key, change.pressed ? .pressed : .released, at: change.time))
        }
        return out
    }

    /// Takes a read of `key`'s level into account (`Debouncer.reconcile`): when it differs from the
    /// key's last event, events were lost, and the key is taken to have changed at the read's time
    /// without first making a change still pending on the old level (its window did not hold).
    /// Returns the debounced events it makes due: other keys' changes due by the read's time
    /// first, then this key's (prompt mode: at once).
    public mutating func reconcile(_ key: Key, level: ButtonLevel) -> [KeyEvent] {
        var out = advance(to: level.time, except: key)
        let index = indexOf(key)
        if let change = debouncers[index].debouncer.reconcile(level) {
            out.append(KeyEvent(key, change.pressed ? .pressed : .released, at: change.time))
        }
        return out
    }

    /// The debounced changes due at `now`, in time order (ties in the order keys were first seen).
    public mutating func advance(to now: Instant) -> [KeyEvent] {
        advance(to: now, except: nil)
    }

    private mutating func advance(to now: Instant, except skipped: Key?) -> [KeyEvent] {
        var out: [KeyEvent] = []
        for index in debouncers.indices where debouncers[index].key != skipped {
            while let change = debouncers[index].debouncer.advance(to: now) {
                out.append(KeyEvent(debouncers[index].key, change.pressed ? .pressed : .released, at: change.time))
            }
        }
        // Stable insertion sort by time: a handful of events at most.
        var sorted: [KeyEvent] = []
        for event in out {
            var position = sorted.count
            while position > 0 && sorted[position - 1].at > event.at { position -= 1 }
            sorted.insert(event, at: position)
        }
        return sorted
    }

    private mutating func indexOf(_ key: Key) -> Int {
        if let index = debouncers.firstIndex(where: { $0.key == key }) { return index }
        debouncers.append((key: key, debouncer: own.first { $0.key == key }?.debouncer ?? Debouncer(window: window, mode: mode)))
        own.removeAll { $0.key == key }
        return debouncers.count - 1
    }
}
