import HAL

/// An `EventSource` on virtual time: a script of inputs, each due at a time, and a `ManualClock`
/// it moves forward to what it returns. Nothing blocks.
///
/// `wait(until:)` goes to the earlier of the next input's time and `deadline`, sets the clock
/// there (never backwards: an input or deadline in the past is served at the current time), and
/// returns every input due by then in script order (empty when the deadline came first). When the
/// script is exhausted and `deadline` is nil, it returns `[.stop]` without moving the clock, so a
/// headless run ends instead of waiting forever; it keeps doing so on later calls.
public struct VirtualEventSource: EventSource {
    public let clock: ManualClock
    /// Inputs scheduled, sorted by time (equal times in the order scheduled); those before `head`
    /// were returned already. Returning inputs moves `head` instead of shifting the array, and a
    /// batch is sorted once, so a script of n inputs costs O(n log n), not O(n²).
    private var queue: [(time: Instant, input: LoopInput)] = []
    private var head = 0

    /// Inputs not yet returned, sorted by time; equal times keep the order they were scheduled in.
    public var pending: ArraySlice<(time: Instant, input: LoopInput)> { queue[head...] }

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
        // The first pending input due later (binary search): insert before it.
        var low = head, high = queue.endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if queue[middle].time > time { high = middle } else { low = middle + 1 }
        }
        queue.insert((time: time, input: input), at: low)
    }

    /// Adds several inputs; they need not be sorted (equal times keep their relative order).
    /// O((p + n) log(p + n)) for p pending and n new inputs.
    public mutating func schedule(_ inputs: [(time: Instant, input: LoopInput)]) {
        guard !inputs.isEmpty else { return }
        // A stable sort by time: the position breaks ties (pending inputs come first).
        let all = (queue[head...] + inputs).enumerated().sorted { a, b in
            a.element.time != b.element.time ? a.element.time < b.element.time : a.offset < b.offset
        }
        queue = all.map(\.element)
        head = 0
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
        let due = queue[head..<end].map(\.input)
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
