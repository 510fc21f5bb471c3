import HAL
import HALMock
import ResendCore
import Testing

/// A verify command on virtual time: answers each check `delay` after it started with the next
/// scripted ending (the last repeats); records the codes it was given (test only).
struct ScriptedVerifier: CodeVerifier {
    var endings: [CommandOutcome.Ending]
    var delay: TimeSpan = .seconds(1)
    var codes: [String] = []
    var started: [Instant] = []
    private var running: [(outcome: CommandOutcome, due: Instant)] = []

    init(_ endings: [CommandOutcome.Ending], delay: TimeSpan = .seconds(1)) {
        self.endings = endings
        self.delay = delay
    }

    mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        let ending = endings[min(codes.count, endings.count - 1)]
        codes.append(digitsText(request.code))
        started.append(now)
        if case .couldNotStart = ending { return CommandOutcome(sequence: request.sequence, ending: ending, duration: .zero) }
        running.append((CommandOutcome(sequence: request.sequence, ending: ending, duration: delay), now + delay))
        return nil
    }
    var nextService: Instant? { running.first?.due }
    mutating func service(now: Instant) -> [CommandOutcome] {
        let due = running.prefix { $0.due <= now }.map { $0.outcome }
        running.removeFirst(due.count)
        return due
    }
}

/// A source that fails on its `failAfter`-th wait (the event source broke).
struct FailingSource: EventSource {
    var inner: VirtualEventSource
    var failAt: Instant
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        if inner.clock.now() >= failAt { throw HALError(.injected, operation: "poll", errno: 0) }
        return try inner.wait(until: earliest(deadline, failAt))
    }
}

typealias EntryEnvironment<Source: EventSource> = LoopEnvironment<
    Source, FrameLog, RecordingLED, ScriptedCommandRunner, ScriptedVerifier, ManualClock, ManualWallClock, EventRecorder, MemoryStateStorage,
    NoRandomSource
>
typealias TestEntryLoop<Source: EventSource> = EventLoop<EntryEnvironment<Source>>

/// The device with a keypad, on virtual time: a button send (the command succeeds after 500 ms),
/// keys from the script, the verify command scripted.
struct KeypadDevice {
    let clock = ManualClock(kt(0))
    var source: VirtualEventSource
    let led: RecordingLED
    let output: RecordingLED
    let storage: MemoryStateStorage
    let wall: ManualWallClock
    var entry = KeypadRig.defaultEntry
    var layout: ScreenLayout = .sixteenByTwo

    init(storage: MemoryStateStorage = MemoryStateStorage(), wallStart: WallTime = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)) {
        source = VirtualEventSource(clock: clock)
        led = RecordingLED(clock: clock)
        output = RecordingLED(clock: clock)
        self.storage = storage
        wall = ManualWallClock(wallStart, following: clock)
    }

    /// A clean press of `key` at `time` (100 ms long).
    mutating func tap(_ key: Key, at time: Instant) {
        source.schedule(.key(KeyEvent(key, .pressed, at: time)), at: time)
        source.schedule(.key(KeyEvent(key, .released, at: time + .milliseconds(100))), at: time + .milliseconds(100))
    }

    /// `keys` ("1234#") from `time`, one every 300 ms.
    mutating func type(_ keys: String, at time: Instant) {
        var at = time
        for byte in keys.utf8 {
            tap(Key(symbol: byte)!, at: at)
            at = at + .milliseconds(300)
        }
    }

    mutating func stop(at time: Instant) { source.schedule(.stop, at: time) }

    func loop(verifier: ScriptedVerifier) -> TestEntryLoop<VirtualEventSource> {
        loop(source: source, verifier: verifier)
    }

    func loop<S: EventSource>(source: S, verifier: ScriptedVerifier) -> TestEntryLoop<S> {
        let pad = DeviceCoordinator(
            controller: ResendController(config: ControllerConfig(duration: .seconds(60), layout: layout, hasSendCommand: true)),
            entry: CodeEntry(config: entry))
        let environment = EntryEnvironment(
            source: source, display: FrameLog(), outputs: Outputs(led: led, strike: output),
            commands: Commands(send: ScriptedCommandRunner([.succeeds(after: .milliseconds(500))]), verify: verifier), clock: clock, wallClock: wall,
            observer: EventRecorder(), store: storage)
        return EventLoop(environment: environment, coordinator: pad)
    }
}

@Suite("Event loop with a code entry")
struct EventLoopEntryTests {
    @Test("send, type, submit: the code goes to the verify command, accepted shows the success screen and pulses the output for exactly its length")
    func acceptedFlow() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("123456#", at: kt(3))
        device.stop(at: kt(20))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()

        // Sent at 1.02 s (press + 20 ms debounce), the command succeeded 500 ms later: the field opens.
        #expect(loop.display.screen(at: kt(2)) == ["Code: ________", "Resend (60)"])
        // Six digits, masked; '#' at 4.8 s counts at 4.82 s.
        #expect(loop.display.screen(at: kt(4.7)) == ["Code: ******__", "Resend (57)"])
        #expect(loop.verifier.codes == ["123456"])
        #expect(loop.verifier.started == [kt(4.82)])
        #expect(loop.display.screen(at: kt(5)) == ["Checking...", "Resend (57)"])
        // Exit 0 one second later: accepted, both lines.
        #expect(loop.display.screen(at: kt(5.82)) == ["Code accepted", "Welcome"])
        // The output: inactive at start, active at the answer, inactive exactly 2 s later, inactive at stop.
        #expect(device.output.history.map { $0.time } == [kt(0), kt(5.82), kt(7.82)])
        #expect(device.output.levels == [false, true, false])
        // The success screen lasts 3 s; then the resend screen alone.
        #expect(loop.display.screen(at: kt(8.81)) == ["Code accepted", "Welcome"])
        #expect(loop.display.screen(at: kt(8.82)) == ["Code sent", "Resend (53)"])
        let events = loop.observer.events.map { $0.event }
        #expect(events.contains(.entry(.submitted(length: 6, sequence: 1))))
        #expect(events.contains(.verifyEnded(ending: .exited(code: 0), duration: .seconds(1))))
        #expect(events.contains(.output(true)) && events.contains(.output(false)))
    }

    @Test("a stop during the pulse drives the output inactive at once")
    func stopDuringPulse() throws {
        var device = KeypadDevice()
        device.entry.pulse = .seconds(5)
        device.tap(.button, at: kt(1))
        device.type("1234#", at: kt(3))
        device.stop(at: kt(6))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)], delay: .milliseconds(200)))
        try loop.run()
        let active = kt(3) + .milliseconds(1_200 + 20 + 200)
        #expect(device.output.history.map { $0.time } == [kt(0), active, kt(6)])
        #expect(device.output.levels == [false, true, false])
    }

    @Test("waiting that fails mid-pulse drives the output inactive before the error goes up")
    func failureDuringPulse() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1234#", at: kt(3))
        var loop = device.loop(
            source: FailingSource(inner: device.source, failAt: kt(5)), verifier: ScriptedVerifier([.exited(code: 0)], delay: .milliseconds(200)))
        #expect(throws: HALError.self) { try loop.run() }
        #expect(device.output.levels == [false, true, false])
        #expect(device.output.history.last?.time == kt(5))
    }

    @Test(
        "exit 1: Wrong with the attempts left; the third wrong code locks entry with a countdown; other exits and a failure to start are Check failed and count nothing"
    )
    func rejectedAndFailed() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))  // exit 1 -> Wrong, 2 left
        device.type("2222#", at: kt(8))  // exit 4 -> Check failed
        device.type("3333#", at: kt(13))  // exit 1 -> Wrong, 1 left
        device.type("4444#", at: kt(18))  // exit 1 -> lockout
        device.stop(at: kt(30))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 1), .exited(code: 4), .exited(code: 1), .exited(code: 1)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(6)) == ["Wrong, 2 left", "Resend (56)"])
        #expect(loop.display.screen(at: kt(11)) == ["Check failed", "Resend (51)"])
        #expect(loop.display.screen(at: kt(16)) == ["Wrong, 1 left", "Resend (46)"])
        // The last answer at 18 + 1.2 + 0.02 + 1 = 20.22 s.
        #expect(loop.display.screen(at: kt(20.22)) == ["Try again (30)", "Resend (41)"])
        #expect(loop.display.screen(at: kt(29.5)) == ["Try again (21)", "Resend (32)"])
        #expect(loop.verifier.codes == ["1111", "2222", "3333", "4444"])
        #expect(device.output.levels == [false])  // never pulsed
    }

    @Test("no verify command configured: a submission shows Check failed and counts no attempt")
    func noVerifier() throws {
        let clock = ManualClock(kt(0))
        var source = VirtualEventSource(clock: clock)
        for (index, key) in [Key.button, .digit1, .digit2, .digit3, .digit4, .pound].enumerated() {
            let at = kt(1) + .seconds(Int64(index) * 2)
            source.schedule(.key(KeyEvent(key, .pressed, at: at)), at: at)
            source.schedule(.key(KeyEvent(key, .released, at: at + .milliseconds(100))), at: at + .milliseconds(100))
        }
        source.schedule(.stop, at: kt(20))
        let pad = DeviceCoordinator(
            controller: ResendController(config: ControllerConfig(duration: .seconds(60))), entry: CodeEntry(config: EntryConfig()))
        let environment = LoopEnvironment(
            source: source, display: FrameLog(), outputs: .none, commands: .none, clock: clock, wallClock: NoWallClock(), observer: EventRecorder(),
            store: NoStateStorage?.none)
        var loop = EventLoop(environment: environment, coordinator: pad)
        try loop.run()
        #expect(loop.display.screen(at: kt(12)) == ["Check failed", "Resend (50)"])
        #expect(loop.pad.entry?.snapshot.failures == 0)
        #expect(
            loop.observer.events.contains {
                $0.event == .verifyEnded(ending: .couldNotStart(reason: "no verify command is configured", errno: 0), duration: .zero)
            })
        // No output line configured: nothing about one is logged.
        #expect(!loop.observer.events.contains { if case .output = $0.event { true } else { false } })
    }

    @Test("an output line that fails to go inactive at the pulse's end is logged and driven inactive again 100 ms later")
    func outputFailure() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1234#", at: kt(3))
        device.stop(at: kt(10))
        // Active at 3 + 1.2 + 0.02 + 0.2 = 4.42 s; its release at 6.42 s fails once.
        var loop = device.loop(
            source: FailNextOutput(inner: device.source, output: device.output, at: kt(5)),
            verifier: ScriptedVerifier([.exited(code: 0)], delay: .milliseconds(200)))
        try loop.run()
        #expect(loop.observer.events.contains { $0.time == kt(6.42) && { if case .outputFailed = $0 { true } else { false } }($0.event) })
        #expect(device.output.levels == [false, true, false])
        #expect(device.output.history.map { $0.time } == [kt(0), kt(4.42), kt(6.52)])
    }

    @Test("wiping a code zeroes the storage its copies share (the action that carried it), not a fresh copy")
    func wipeSharedStorage() {
        let carried = SecretCode(digits: Array("4711".utf8))
        var runnerCopy = carried
        runnerCopy.wipe()
        #expect(runnerCopy.count == 0)
        #expect(carried.digits == [0, 0, 0, 0])
    }

    @Test("lost button edges: the level read after edgesMayBeLost presses the button (the release was dropped, then a press came)")
    func lostEdges() throws {
        var device = KeypadDevice()
        // A press whose edge the kernel dropped; the backend notices at 1.1 s.
        device.source.drop(ButtonEdge(pressed: true, time: kt(1)))
        device.source.schedule(.edgesMayBeLost, at: kt(1.1))
        device.stop(at: kt(3))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.observer.events.contains { if case .edgesLost = $0.event { true } else { false } })
        #expect(loop.runner.requests.count == 1)
        #expect(loop.display.screen(at: kt(2)).first == "Code: ________")
    }

    @Test("the button reported as a key sends like its edges do; other keys before a send are ignored")
    func buttonAsKey() throws {
        var device = KeypadDevice()
        device.tap(.digit5, at: kt(0.5))
        device.tap(.button, at: kt(1))
        device.stop(at: kt(3))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(0.9)) == ["Verification", "Send code"])
        #expect(loop.display.screen(at: kt(2)) == ["Code: ________", "Resend (60)"])
        #expect(loop.runner.requests.count == 1)
    }

    /// Three wrong codes lock entry at 15.22 s for 30 s; the process stops at 25 s.
    private func lockedOutDevice() throws -> (KeypadDevice, MemoryStateStorage) {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))
        device.type("2222#", at: kt(8))
        device.type("3333#", at: kt(13))
        device.stop(at: kt(25))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 1)], delay: .seconds(1)))
        try loop.run()
        #expect(loop.display.screen(at: kt(24.9)) == ["Try again (21)", "Resend (37)"])
        return (device, device.storage)
    }

    @Test("a restart does not reset a lockout: the next process resumes it with what is left on the wall clock")
    func lockoutAcrossRestart() throws {
        let (first, storage) = try lockedOutDevice()
        let text = try #require(storage.text)
        #expect(text.contains(#""entry": {"failures": 0, "rounds": 1, "lockoutEndsUnixMs": 1718000045220, "lockoutSeconds": 30"#))
        #expect(!text.contains("1111") && !text.contains("3333"))  // never the code
        // A new process 5 s later (monotonic clock restarted elsewhere, wall clock 5 s on).
        var second = KeypadDevice(storage: storage, wallStart: first.wall.now() + .seconds(5))
        second.type("4444#", at: kt(1))  // keys during the lockout are ignored
        second.stop(at: kt(20))
        var loop = second.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        // 45.22 - 30 (= 25 + 5) = 15.22 s left: "Try again (16)", and entry reopens at 15.22 s.
        #expect(loop.display.screen(at: kt(0)).first == "Try again (16)")
        #expect(loop.display.screen(at: kt(15.21)).first == "Try again (01)")
        #expect(loop.display.screen(at: kt(15.22)).first == "Code: ________")
        #expect(loop.verifier.codes.isEmpty)
        #expect(loop.observer.events.contains { $0.event == .entry(.lockoutResumed(until: kt(15.22), secondsLeft: 16)) })
    }

    @Test("a wall clock set back across a restart cannot stretch a lockout beyond its length", arguments: [-3_600, 0, 60])
    func lockoutClamped(jumpSeconds: Int64) throws {
        let (first, storage) = try lockedOutDevice()
        var second = KeypadDevice(storage: storage, wallStart: first.wall.now() + .seconds(jumpSeconds))
        second.stop(at: kt(40))
        var loop = second.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        let line = loop.display.screen(at: kt(0)).first
        switch jumpSeconds {
        case ..<0: #expect(line == "Try again (30)")  // set back: at most the lockout's length
        case 0: #expect(line == "Try again (21)")
        default: #expect(line == "Code: ________")  // set forward past its end: over, the code still valid
        }
        #expect(loop.display.screen(at: kt(30)).first == "Code: ________")
    }
}

/// Makes the output's next `set` fail, from the first wait at or after `at`.
struct FailNextOutput: EventSource {
    var inner: VirtualEventSource
    let output: RecordingLED
    let at: Instant
    var armed = false
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        if !armed && inner.clock.now() >= at {
            armed = true
            output.failNext(1)
        }
        return try inner.wait(until: deadline)
    }
}
