import HAL
import HALLinux
import HALMock
import ResendCore

/// The send command: none, scripted (the simulator on virtual time), or a real process.
public enum SendRunner: CommandRunner {
    case none
    case scripted(ScriptedCommandRunner)
    case process(ProcessRunner)

    public mutating func start(_ request: SendRequest, now: Instant) -> SendOutcome? {
        switch self {
        case .none:
            var runner = NoCommandRunner()
            return runner.start(request, now: now)
        case .scripted(var runner):
            let outcome = runner.start(request, now: now)
            self = .scripted(runner)
            return outcome
        case .process(let runner):
            return runner.start(request, now: now)
        }
    }

    public var nextService: Instant? {
        switch self {
        case .none: return nil
        case .scripted(let runner): return runner.nextService
        case .process(let runner): return runner.nextService
        }
    }

    public mutating func service(now: Instant) -> [SendOutcome] {
        switch self {
        case .none:
            return []
        case .scripted(var runner):
            let outcomes = runner.service(now: now)
            self = .scripted(runner)
            return outcomes
        case .process(let runner):
            return runner.service(now: now)
        }
    }
}

/// The verify command: none (every check fails, "Check failed"), scripted (the simulator on
/// virtual time; the code is wiped at once and only its length is kept), or a real process (the
/// code on its standard input, `ProcessRunner.start(sequence:input:now:)`, with
/// `Purpose.verify`, so its outcomes arrive as `.verifyFinished`).
public enum VerifyRunner: CodeVerifier {
    case none
    case scripted(ScriptedCommandRunner)
    case process(ProcessRunner)

    public mutating func start(_ request: VerifyRequest, now: Instant) -> SendOutcome? {
        var code = request.code
        switch self {
        case .none:
            code.wipe()
            var verifier = NoCodeVerifier()
            return verifier.start(request, now: now)
        case .scripted(var runner):
            code.wipe()
            // The scripted runner takes a send request; only the sequence matters here.
            let outcome = runner.start(
                SendRequest(sequence: request.sequence, attempt: 0, cooldownSeconds: 0, pressTime: WallTime(nanosecondsSinceEpoch: 0)),
                now: now)
            self = .scripted(runner)
            return outcome
        case .process(let runner):
            // The digits and a new line, as one line of standard input (`read code` in a shell).
            var input = code.digits + [UInt8(ascii: "\n")]
            code.wipe()
            return runner.start(sequence: request.sequence, input: &input, now: now)
        }
    }

    public var nextService: Instant? {
        switch self {
        case .none: return nil
        case .scripted(let runner): return runner.nextService
        case .process(let runner): return runner.nextService
        }
    }

    public mutating func service(now: Instant) -> [SendOutcome] {
        switch self {
        case .none:
            return []
        case .scripted(var runner):
            let outcomes = runner.service(now: now)
            self = .scripted(runner)
            return outcomes
        case .process(let runner):
            return runner.service(now: now)
        }
    }
}

/// Runs `source` through the event loop with the services: the send command's runner, and the
/// state file when one is given (on `wall`). The one place that builds the loop, for `run` and for
/// the simulators; returns when the loop stops, after a send command still running (and whatever
/// it started) got SIGTERM and, after the grace period, SIGKILL. SIGINT/SIGTERM stay with the
/// loop's source meanwhile, so that wait is not cut short.
func runEventLoop<Source: EventSource, Display: FrameDisplay, LED: OutputLine, Clock: MonotonicClock, Observer: LoopObserver, Wall: WallClock>(
    source: Source, display: Display, led: LED, clock: Clock, wall: Wall, observer: Observer,
    config: ControllerConfig, debouncer: Debouncer, runner: SendRunner, stateFile: String?
) throws(HALError) {
    let controller = ResendController(config: config)
    defer {
        // The source (and its signalfd) lives until here: `source` is this function's argument.
        withExtendedLifetime(source) {
            if case .process(let process) = runner { process.terminateAll() }
        }
    }
    if let stateFile {
        var loop = EventLoop(
            source: source, display: display, led: led, clock: clock, observer: observer,
            controller: controller, debouncer: debouncer, runner: runner, store: StateFile(path: stateFile), wallClock: wall)
        try loop.run()
    } else {
        var loop = EventLoop(
            source: source, display: display, led: led, clock: clock, observer: observer,
            controller: controller, debouncer: debouncer, runner: runner, wallClock: wall)
        try loop.run()
    }
}

/// Runs `source` on the mock `device` (see `runEventLoop`).
func runSimulationLoop<Source: EventSource, Clock: MonotonicClock, Wait: Delay, Observer: LoopObserver, Wall: WallClock>(
    source: Source, device: MockDevice<Clock, Wait>, clock: Clock, wall: Wall, observer: Observer,
    config: ControllerConfig, debouncer: Debouncer, runner: SendRunner, stateFile: String?
) throws(HALError) {
    try runEventLoop(
        source: source, display: device.display, led: device.led, clock: clock, wall: wall, observer: observer,
        config: config, debouncer: debouncer, runner: runner, stateFile: stateFile)
}
