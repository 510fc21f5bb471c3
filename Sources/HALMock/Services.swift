import HAL

/// A wall clock for tests and virtual-time runs. It follows a `ManualClock` (virtual time passing
/// moves it the same amount) and can be set or jumped in either direction, as NTP or an operator
/// would set a real one. A class, so the loop and the test see one clock. Not thread-safe.
public final class ManualWallClock: WallClock {
    private let clock: ManualClock?
    private var base: WallTime
    private var baseInstant: Instant

    /// Reads `start` now; with `clock`, moves with it from its current instant on.
    public init(_ start: WallTime, following clock: ManualClock? = nil) {
        self.clock = clock
        base = start
        baseInstant = clock?.now() ?? .origin
    }

    public func now() -> WallTime {
        guard let clock else { return base }
        return base + (clock.now() - baseInstant)
    }

    /// Sets the clock to `time` from here on (forwards or backwards).
    public func set(to time: WallTime) {
        base = time
        baseInstant = clock?.now() ?? .origin
    }

    /// Moves the clock by `span`, which may be negative (a clock set backwards).
    public func jump(by span: TimeSpan) {
        set(to: now() + span)
    }
}

/// A send command on virtual time: each start takes the next scripted step (the last one repeats)
/// and completes `delay` later with the scripted ending and output, through `service(now:)`. A
/// step that cannot start returns its outcome from `start` at once. Records every request.
public struct ScriptedCommandRunner: CommandRunner {
    public struct Step: Hashable, Sendable {
        public var delay: TimeSpan
        public var ending: CommandOutcome.Ending
        public var output: [UInt8]
        public var droppedOutputBytes: Int

        public init(after delay: TimeSpan, _ ending: CommandOutcome.Ending, output: [UInt8] = [], droppedOutputBytes: Int = 0) {
            self.delay = delay
            self.ending = ending
            self.output = output
            self.droppedOutputBytes = droppedOutputBytes
        }

        /// Exits with status 0 after `delay`.
        public static func succeeds(after delay: TimeSpan) -> Step { Step(after: delay, .exited(code: 0)) }
        /// Cannot start (the command is missing): the outcome comes at once, in ProcessRunner's words.
        public static let notFound = Step(after: .zero, .couldNotStart(reason: "send-command: ENOENT (2): no such file or directory", errno: 2))
    }

    public let steps: [Step]
    /// Every request started, with the instant, in order.
    public private(set) var requests: [(request: SendRequest, at: Instant)] = []
    private var running: [(outcome: CommandOutcome, due: Instant)] = []

    /// `steps` must not be empty.
    public init(_ steps: [Step]) {
        precondition(!steps.isEmpty, "ScriptedCommandRunner needs at least one step")
        self.steps = steps
    }

    /// Sends still running.
    public var runningCount: Int { running.count }

    public mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        let step = steps[min(requests.count, steps.count - 1)]
        requests.append((request, now))
        let outcome = CommandOutcome(
            sequence: request.sequence, ending: step.ending, duration: step.delay, output: step.output,
            droppedOutputBytes: step.droppedOutputBytes)
        if case .couldNotStart = step.ending {
            return CommandOutcome(sequence: request.sequence, ending: step.ending, duration: .zero)
        }
        running.append((outcome, now + step.delay))
        running.sort { $0.due < $1.due }
        return nil
    }

    public var nextService: Instant? { running.first?.due }

    public mutating func service(now: Instant) -> [CommandOutcome] {
        let due = running.prefix { $0.due <= now }.map { $0.outcome }
        running.removeFirst(due.count)
        return due
    }
}

/// State storage in memory, shared by copies (a class), with failure injection.
public final class MemoryStateStorage: StateStorage {
    /// What is stored; nil when nothing is.
    public var bytes: [UInt8]?
    /// Every write, in order.
    public private(set) var writes: [[UInt8]] = []
    /// Contents moved aside, in order.
    public private(set) var movedAside: [[UInt8]] = []
    /// When set, writes throw this (and store nothing).
    public var writeError: HALError?

    public init(_ bytes: [UInt8]? = nil) { self.bytes = bytes }

    /// The stored bytes as text.
    public var text: String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    public func read() throws(HALError) -> [UInt8]? { bytes }

    public func write(_ bytes: [UInt8]) throws(HALError) {
        if let writeError { throw writeError }
        self.bytes = bytes
        writes.append(bytes)
    }

    public func moveAside() throws(HALError) -> String {
        guard let bytes else { throw HALError(.notFound, operation: "move the state aside") }
        movedAside.append(bytes)
        self.bytes = nil
        return "memory.corrupt-" + String(movedAside.count)
    }
}
