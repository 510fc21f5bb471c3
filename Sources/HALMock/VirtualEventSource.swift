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
    /// Inputs not yet returned, sorted by time; equal times keep the order they were scheduled in.
    public private(set) var pending: [(time: Instant, input: LoopInput)] = []

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
        let index = pending.firstIndex { $0.time > time } ?? pending.endIndex
        pending.insert((time: time, input: input), at: index)
    }

    /// Adds several inputs; they need not be sorted (equal times keep their relative order).
    public mutating func schedule(_ inputs: [(time: Instant, input: LoopInput)]) {
        for item in inputs {
            schedule(item.input, at: item.time)
        }
    }

    /// Adds button edges, each due at its own time.
    public mutating func schedule(edges: [ButtonEdge]) {
        schedule(ButtonScript.inputs(edges))
    }

    public mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        guard let next = pending.first?.time else {
            guard let deadline else { return [.stop] }
            moveClock(to: deadline)
            return []
        }
        let target = deadline.map { min($0, next) } ?? next
        moveClock(to: target)
        let now = clock.now()
        let dueCount = pending.firstIndex { $0.time > now } ?? pending.endIndex
        let due = pending[..<dueCount].map { $0.input }
        pending.removeFirst(dueCount)
        return due
    }

    private func moveClock(to instant: Instant) {
        if instant > clock.now() {
            clock.set(to: instant)
        }
    }
}
