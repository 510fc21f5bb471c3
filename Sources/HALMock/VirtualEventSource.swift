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
    /// Inputs not yet returned, sorted by time; equal times keep the order they were scheduled in.
    public private(set) var pending: [(time: Instant, input: LoopInput)] = []
    /// The line's level before its first edge.
    public var initiallyPressed = false
    /// Every level change of the line, delivered or dropped, sorted by time.
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
        let index = pending.firstIndex { $0.time > time } ?? pending.endIndex
        pending.insert((time: time, input: input), at: index)
        if case .edge(let edge) = input { moveLine(to: edge.pressed, at: time) }
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
        let pressed = line.last { $0.time <= now }?.pressed ?? initiallyPressed
        return ButtonLevel(pressed: pressed, time: now)
    }

    private mutating func moveLine(to pressed: Bool, at time: Instant) {
        let index = line.firstIndex { $0.time > time } ?? line.endIndex
        line.insert((time: time, pressed: pressed), at: index)
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
        let due = pending[..<dueCount].map(\.input)
        pending.removeFirst(dueCount)
        return due
    }

    private func moveClock(to instant: Instant) {
        if instant > clock.now() {
            clock.set(to: instant)
        }
    }
}
