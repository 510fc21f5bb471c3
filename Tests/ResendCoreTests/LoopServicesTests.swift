import HAL
import ResendCore
import Testing

private final class Clock: MonotonicClock {
    var current = Instant.origin
    func now() -> Instant { current }
}

private final class Wall: WallClock {
    var current = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
    func now() -> WallTime { current }
}

/// A press at 1 s, then nothing: records every deadline asked for and moves the clock there.
private struct Source: EventSource {
    let clock: Clock
    var inputs: [(Instant, LoopInput)]
    var deadlines: [Instant?] = []

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        deadlines.append(deadline)
        if let (time, input) = inputs.first, deadline.map({ time <= $0 }) ?? true {
            inputs.removeFirst()
            clock.current = max(clock.current, time)
            return [input]
        }
        guard let deadline else { return [.stop] }
        clock.current = max(clock.current, deadline)
        return []
    }
}

/// Each frame as (time, status line, label line), trimmed.
extension FrameLog {
    fileprivate var labels: [(Instant, String, String)] { frames.map { ($0.time, $0.lines[0], $0.lines[1]) } }
}

/// A runner that wants service at `serviceAt` (a SIGTERM due) and reports its outcome through
/// `service` then; records the requests and service calls.
private struct Runner: CommandRunner {
    var serviceAt: Instant?
    var delay: TimeSpan
    var requests: [SendRequest] = []
    var serviced: [Instant] = []

    mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        requests.append(request)
        serviceAt = now + delay
        return nil
    }
    var nextService: Instant? { serviceAt }
    mutating func service(now: Instant) -> [CommandOutcome] {
        serviced.append(now)
        serviceAt = nil
        return [CommandOutcome(sequence: requests.last!.sequence, ending: .timedOut(after: delay, killed: false), duration: delay)]
    }
}

private struct Storage: StateStorage {
    var stored: [UInt8]?
    var readError: HALError?
    var writeError: HALError?
    var writes = 0
    func read() throws(HALError) -> [UInt8]? {
        if let readError { throw readError }
        return stored
    }
    mutating func write(_ bytes: [UInt8]) throws(HALError) {
        if let writeError { throw writeError }
        stored = bytes
        writes += 1
    }
    mutating func moveAside() throws(HALError) -> String { stored = nil; return "aside" }
}

private func pressAt(_ seconds: Int64) -> [(Instant, LoopInput)] {
    let t = Instant.origin + .seconds(seconds)
    return [
        (t, .button(ButtonEdge(pressed: true, time: t))), (t + .milliseconds(100), .button(ButtonEdge(pressed: false, time: t + .milliseconds(100)))),
    ]
}

private typealias ServicesEnvironment = LoopEnvironment<
    Source, FrameLog, NoLine, Runner, NoCodeVerifier, Clock, Wall, EventRecorder, Storage, NoRandomSource
>

private func makeLoop(runner: Runner, storage: Storage, clock: Clock = Clock(), wall: Wall = Wall()) -> EventLoop<ServicesEnvironment> {
    let environment = ServicesEnvironment(
        source: Source(clock: clock, inputs: pressAt(1)), display: FrameLog(), outputs: .none, commands: .send(runner), clock: clock, wallClock: wall,
        observer: EventRecorder(), store: storage)
    return EventLoop(
        environment: environment,
        coordinator: buttonCoordinator(
            ControllerConfig(duration: .seconds(10), hasSendCommand: true), button: Debouncer(window: .milliseconds(1))))
}

@Suite("Event loop services")
struct LoopServicesTests {
    @Test("the loop wakes at the runner's service time (to kill a command past its time-out) and feeds its outcome")
    func runnerDeadline() throws {
        var loop = makeLoop(runner: Runner(delay: .milliseconds(2_500)), storage: Storage())
        try loop.run()
        let press = Instant.origin + .milliseconds(1_001)  // 1 s + the 1 ms debounce window
        let due = press + .milliseconds(2_500)
        #expect(loop.source.deadlines.contains(due))
        #expect(loop.runner.serviced == [due])
        #expect(loop.display.labels.contains { $0 == (due, "Send failed", "Resend") })
        // The countdown labels before it were on their seconds: the runner did not delay them.
        #expect(
            loop.display.labels.filter { $0.1 == "Sending..." }.map(\.0)
                == [0, 1, 2].map { press + .seconds($0) })
    }

    @Test("the send command gets the attempt, the cooldown and the press time on the wall clock")
    func request() throws {
        let wall = Wall()
        var loop = makeLoop(runner: Runner(delay: .seconds(1)), storage: Storage(), wall: wall)
        try loop.run()
        #expect(loop.runner.requests == [SendRequest(sequence: 1, attempt: 1, cooldownSeconds: 10, pressTime: wall.current)])
    }

    @Test("a failing write is logged and the device goes on")
    func writeFails() throws {
        let failure = HALError(.io, operation: "fsync state.json.tmp", errno: 5)
        var loop = makeLoop(runner: Runner(delay: .seconds(1)), storage: Storage(writeError: failure))
        try loop.run()
        #expect(loop.observer.events.map(\.event).contains(.state(.writeFailed(failure))))
        #expect(loop.display.labels.last?.2 == "")  // stopped after the script, having shown everything
        #expect(loop.display.labels.contains { $0.1 == "Send failed" })
    }

    @Test("an unreadable store starts fresh with an event and leaves the file alone; a missing one says fresh start")
    func readFails() throws {
        let failure = HALError(.permission, operation: "open state.json", errno: 13)
        var loop = makeLoop(runner: Runner(delay: .seconds(1)), storage: Storage(stored: [1, 2, 3], readError: failure))
        try loop.run()
        #expect(loop.observer.events.map(\.event).first == .state(.readFailed(failure)))
        var fresh = makeLoop(runner: Runner(delay: .seconds(1)), storage: Storage())
        try fresh.run()
        #expect(fresh.observer.events.map(\.event).first == .state(.freshStart))
        #expect(fresh.store?.writes == 2)  // the press, the failure; nothing at stop
    }

    @Test("garbage in the store is moved aside with its reason")
    func garbage() throws {
        var loop = makeLoop(runner: Runner(delay: .seconds(1)), storage: Storage(stored: Array("{\"version\": 1}".utf8)))
        try loop.run()
        #expect(loop.observer.events.map(\.event).first == .state(.unreadable(reason: "missing key \"status\"", movedTo: "aside")))
        #expect(loop.display.labels.first?.2 == "Send code")
    }
}
