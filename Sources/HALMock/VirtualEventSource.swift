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
/// The button line: every edge scheduled (at the time it is due) and every edge `drop`ped (a
/// kernel event buffer that overflowed) moves the line; `readButtonLevel` reads it at the clock's
/// time, as a GPIO backend reads the line's value. A source that was never given an edge has no
/// line to read (nil).
public struct VirtualEventSource: EventSource {
    public let clock: ManualClock
    /// Inputs scheduled, sorted by time (equal times in the order scheduled); those before `head`
    /// were returned already. Returning inputs moves `head` instead of shifting the array, and a
    /// batch is sorted once, so a script of n inputs costs O(n log n), not O(n²).
    private var queue: [(time: Instant, input: LoopInput)] = []
    private var head = 0

    /// Inputs not yet returned, sorted by time; equal times keep the order they were scheduled in.
    public var pending: ArraySlice<(time: Instant, input: LoopInput)> { queue[head...] }
    /// The line's level before its first edge.
    public var initiallyPressed = false
    /// Every level change of the line, delivered or dropped, sorted by time (equal times in the
    /// order given); read by binary search.
    private var line: [(time: Instant, pressed: Bool)] = []

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
        if let edge = input.buttonEdge { moveLine(to: edge.pressed, at: time) }
    }

    /// The line changes at `edge.time` but no edge is delivered: the kernel dropped it (its event
    /// buffer was full). Schedule `.edgesMayBeLost` where the backend would notice.
    public mutating func drop(_ edge: ButtonEdge) {
        moveLine(to: edge.pressed, at: edge.time)
    }

    /// The line's level at the clock's time.
    public mutating func readButtonLevel() throws(HALError) -> ButtonLevel? {
        guard !line.isEmpty else { return nil }
        let now = clock.now()
        let after = upperBound(0, line.endIndex, now) { line[$0].time }
        let pressed = after > 0 ? line[after - 1].pressed : initiallyPressed
        return ButtonLevel(pressed: pressed, time: now)
    }

    private mutating func moveLine(to pressed: Bool, at time: Instant) {
        let index = upperBound(0, line.endIndex, time) { line[$0].time }
        line.insert((time: time, pressed: pressed), at: index)
    }

    /// Adds several inputs; they need not be sorted (equal times keep their relative order).
    /// O((p + n) log(p + n)) for p pending and n new inputs.
    public mutating func schedule(_ inputs: [(time: Instant, input: LoopInput)]) {
        guard !inputs.isEmpty else { return }
        queue = stablySorted(Array(queue[head...]) + inputs) { $0.time }
        head = 0
        var edges: [(time: Instant, pressed: Bool)] = []
        for item in inputs {
            if let edge = item.input.buttonEdge { edges.append((item.time, edge.pressed)) }
        }
        if !edges.isEmpty { line = stablySorted(line + edges) { $0.time } }
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
