import HAL

/// One `Debouncer` per key: raw key events in, debounced key events out, in time order. Every key
/// of every backend goes through it, so a key behaves exactly like the single button (a press
/// needs the line to settle; holding never repeats; a new press needs a debounced release first).
///
/// A pure value like `Debouncer`: it never reads a clock. Feed raw events with `feed`, and call
/// `advance(to:)` once the clock reaches `nextDeadline`.
public struct KeyDebouncer {
    public let window: TimeSpan
    public let mode: DebounceMode
    /// The keys seen so far with their debouncers, in the order first seen.
    private var debouncers: [(key: Key, debouncer: Debouncer)] = []

    public init(window: TimeSpan = .milliseconds(20), mode: DebounceMode = .stable) {
        precondition(window > .zero, "KeyDebouncer: the window must be longer than zero")
        self.window = window
        self.mode = mode
    }

    /// The earliest instant at which a pending change of any key becomes due; nil when none is.
    public var nextDeadline: Instant? {
        var next: Instant?
        for entry in debouncers { next = earliest(next, entry.debouncer.nextDeadline) }
        return next
    }

    /// True when `key`'s debounced level is pressed.
    public func isPressed(_ key: Key) -> Bool {
        debouncers.first { $0.key == key }?.debouncer.isPressed ?? false
    }

    /// Raw edges of all keys that did not make a change (bounces), for the log.
    public var suppressedEdges: Int {
        debouncers.reduce(0) { $0 + $1.debouncer.suppressedEdges }
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

    /// The debounced changes due at `now`, in time order (ties in the order keys were first seen).
    public mutating func advance(to now: Instant) -> [KeyEvent] {
        var out: [KeyEvent] = []
        for index in debouncers.indices {
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
        debouncers.append((key: key, debouncer: Debouncer(window: window, mode: mode)))
        return debouncers.count - 1
    }
}
