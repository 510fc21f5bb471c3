import HAL

/// An `EventSource` on virtual time: a script of inputs, each due at a time, and a `ManualClock`
/// it moves forward to what it returns. Nothing blocks.
///
/// `wait(until:)` goes to the earlier of the next input's time and `deadline`, sets the clock
/// there (never backwards: an input or deadline in the past is served at the current time), and
/// returns every input due by then in script order (empty when the deadline came first). When the
/// script is exhausted and `deadline` is nil, it returns `[.stop]` without moving the clock, so a
/// headless run ends instead of waiting forever; it keeps doing so on later calls.
///
/// Every key is a line: each of its events scheduled (at the time it is due) and each `drop`ped
/// (a kernel event buffer that overflowed) moves that key's line; `readLevel(of:)` reads it at the
/// clock's time, as a GPIO backend reads the button's line or scans a matrix. A key that was never
/// given an event has no line to read (nil).
public struct VirtualEventSource: EventSource {
    public let clock: ManualClock
    /// Inputs scheduled, sorted by time (equal times in the order scheduled); those before `head`
    /// were returned already. Returning inputs moves `head` instead of shifting the array, and a
    /// batch is sorted once, so a script of n inputs costs O(n log n), not O(n²).
    private var queue: [(time: Instant, input: LoopInput)] = []
    private var head = 0

    /// Inputs not yet returned, sorted by time; equal times keep the order they were scheduled in.
    public var pending: ArraySlice<(time: Instant, input: LoopInput)> { queue[head...] }
    /// The button line's level before its first edge (every other key starts released).
    public var initiallyPressed = false
    /// Every level change of each key's line, delivered or dropped, sorted by time (equal times in
    /// the order given); read by binary search.
    private var lines: [Key: [(time: Instant, pressed: Bool)]] = [:]

    public init(clock: ManualClock, inputs: [(time: Instant, input: LoopInput)] = []) {
        self.clock = clock
        schedule(inputs)
    }

    /// Convenience: the edges of a `ButtonScript`, each due at its own time.
    public init(clock: ManualClock, edges: [ButtonEdge]) {
        self.init(clock: clock, inputs: ButtonScript.inputs(edges))
    }

    /// Adds `input` due at `time` (after any input already scheduled at that same time).
    public mutating func schedule(_ input: LoopInput, at time: Instant) {
        compact()
        let index = upperBound(head, queue.endIndex, time) { queue[$0].time }
        queue.insert((time: time, input: input), at: index)
        if case .key(let event) = input { moveLine(of: event.key, to: event.isPress, at: time) }
    }

    /// The button line changes at `edge.time` but no edge is delivered: the kernel dropped it (its
    /// event buffer was full). Schedule `.edgesMayBeLost` where the backend would notice.
    public mutating func drop(_ edge: ButtonEdge) {
        moveLine(of: .button, to: edge.pressed, at: edge.time)
    }

    /// A key's line changes at `event.at` but no event is delivered (lost).
    public mutating func drop(_ event: KeyEvent) {
        moveLine(of: event.key, to: event.isPress, at: event.at)
    }

    /// `key`'s level at the clock's time; nil for a key never given an event.
    public mutating func readLevel(of key: Key) throws(HALError) -> ButtonLevel? {
        guard let line = lines[key], !line.isEmpty else { return nil }
        let now = clock.now()
        let after = upperBound(0, line.endIndex, now) { line[$0].time }
        let pressed = after > 0 ? line[after - 1].pressed : key == .button && initiallyPressed
        return ButtonLevel(pressed: pressed, time: now)
    }

    private mutating func moveLine(of key: Key, to pressed: Bool, at time: Instant) {
        var line = lines.removeValue(forKey: key) ?? []
        let index = upperBound(0, line.endIndex, time) { line[$0].time }
        line.insert((time: time, pressed: pressed), at: index)
        lines[key] = line
    }

    /// Adds several inputs; they need not be sorted (equal times keep their relative order).
    /// O((p + n) log(p + n)) for p pending and n new inputs.
    public mutating func schedule(_ inputs: [(time: Instant, input: LoopInput)]) {
        guard !inputs.isEmpty else { return }
        queue = stablySorted(Array(queue[head...]) + inputs) { $0.time }
        head = 0
        var edges: [Key: [(time: Instant, pressed: Bool)]] = [:]
        for item in inputs {
            if case .key(let event) = item.input { edges[event.key, default: []].append((item.time, event.isPress)) }
        }
        for (key, changes) in edges { lines[key] = stablySorted((lines[key] ?? []) + changes) { $0.time } }
    }

    /// Adds button edges, each due at its own time.
    public mutating func schedule(edges: [ButtonEdge]) {
        schedule(ButtonScript.inputs(edges))
    }

    public mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        guard head < queue.endIndex else {
            guard let deadline else { return [.stop] }
            moveClock(to: deadline)
            return []
        }
        let next = queue[head].time
        let target = deadline.map { min($0, next) } ?? next
        moveClock(to: target)
        let now = clock.now()
        var end = head
        while end < queue.endIndex, queue[end].time <= now { end += 1 }
        let due = queue[head..<end].map { $0.input }
        head = end
        return due
    }

    /// Drops the inputs already returned once they are at least half of the array (amortised O(1)).
    private mutating func compact() {
        if head > 0, head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }

    private func moveClock(to instant: Instant) {
        if instant > clock.now() {
            clock.set(to: instant)
        }
    }
}

/// The first index in `start..<end` whose time (`timeAt`) is later than `time`, the times being
/// sorted there (binary search): where an item due at `time` goes after the equal ones.
private func upperBound(_ start: Int, _ end: Int, _ time: Instant, timeAt: (Int) -> Instant) -> Int {
    var low = start
    var high = end
    while low < high {
        let middle = low + (high - low) / 2
        if timeAt(middle) > time { high = middle } else { low = middle + 1 }
    }
    return low
}

/// `items` sorted by `time`, equal times keeping their order (a stable sort).
private func stablySorted<Item>(_ items: [Item], by time: (Item) -> Instant) -> [Item] {
    items.enumerated().sorted { a, b in
        let (ta, tb) = (time(a.element), time(b.element))
        return ta != tb ? ta < tb : a.offset < b.offset
    }.map { $0.element }
}
