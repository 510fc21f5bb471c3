import HAL
import HALMock
import ResendCore
import Testing

/// The single-button device and the device with a code entry run the same loop; these behaviours
/// once differed between them, and are pinned here for both.
@Suite("Event loop: the single button and the code entry behave alike")
struct EventLoopPathsTests {
    private static let wallStart = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)

    /// The loop on virtual time from 0 s: the button debounced by `button`, with or without a
    /// code entry, a send command that succeeds after 500 ms, the state in memory.
    private static func loop(
        _ source: VirtualEventSource, clock: ManualClock, entry: Bool, button: Debouncer = Debouncer(window: .milliseconds(20)),
        keypadWindow: TimeSpan = .milliseconds(20)
    ) -> TestEntryLoop<VirtualEventSource> {
        var keys = KeyDebouncer(window: keypadWindow)
        keys.use(button, for: .button)
        let controller = ResendController(config: ControllerConfig(duration: .seconds(60), hasSendCommand: true))
        let coordinator =
            entry
            ? DeviceCoordinator(controller: controller, entry: CodeEntry(config: EntryConfig()), keys: keys)
            : DeviceCoordinator(controller: controller, keys: keys)
        let environment = EntryEnvironment(
            source: source, display: FrameLog(), outputs: Outputs(led: RecordingLED(clock: clock), strike: RecordingLED(clock: clock)),
            commands: Commands(send: ScriptedCommandRunner([.succeeds(after: .milliseconds(500))]), verify: ScriptedVerifier([.exited(code: 0)])),
            clock: clock, wallClock: ManualWallClock(wallStart, following: clock), observer: EventRecorder(), store: MemoryStateStorage())
        return EventLoop(environment: environment, coordinator: coordinator)
    }

    private static func presses(_ loop: TestEntryLoop<VirtualEventSource>) -> Int {
        loop.observer.events.filter { if case .controller(.pressAccepted) = $0.event { true } else { false } }.count
    }

    @Test(
        "a press edge at 1 s whose release edge was lost (the line is released at 1.005 s): the read when the window closes finds it released, and there is no press",
        arguments: [false, true])
    func lostReleaseIsNoPress(entry: Bool) throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        let t0 = Instant.origin + .seconds(1)
        source.schedule(.button(ButtonEdge(pressed: true, time: t0)), at: t0)
        source.drop(ButtonEdge(pressed: false, time: t0 + .milliseconds(5)))
        source.schedule(.stop, at: t0 + .seconds(2))
        var loop = Self.loop(source, clock: clock, entry: entry)
        try loop.run()
        #expect(Self.presses(loop) == 0)
        #expect(loop.runner.requests.isEmpty)
        #expect(loop.display.screen(at: t0 + .seconds(1)) == ["Verification", "Send code"])
        #expect(
            loop.observer.events.contains {
                $0.time == t0 + .milliseconds(20) && $0.event == .edgesLost(ButtonLevel(pressed: false, time: t0 + .milliseconds(20)))
            })
    }

    @Test(
        "after edgesMayBeLost a read that finds the button pressed (its press edge was lost) presses it one window later",
        arguments: [false, true])
    func lostPressCounts(entry: Bool) throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        let t0 = Instant.origin + .seconds(1)
        source.drop(ButtonEdge(pressed: true, time: t0))
        source.schedule(.edgesMayBeLost, at: t0 + .milliseconds(100))
        source.schedule(.stop, at: t0 + .seconds(2))
        var loop = Self.loop(source, clock: clock, entry: entry)
        try loop.run()
        #expect(Self.presses(loop) == 1)
        #expect(loop.display.screen(at: t0 + .milliseconds(119)) == ["Verification", "Send code"])
        #expect(loop.display.screen(at: t0 + .milliseconds(120)) == ["Sending...", "Resend (60)"])
    }

    @Test(
        "the send command's press time is the press's own instant on the wall clock, also when the edge reached the loop late",
        arguments: [false, true])
    func pressTimeWorkedBack(entry: Bool) throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        let t0 = Instant.origin + .seconds(1)
        // The kernel stamped the edge at 1 s; the loop got it 100 ms later (it was busy).
        source.schedule(.button(ButtonEdge(pressed: true, time: t0)), at: t0 + .milliseconds(100))
        source.schedule(.button(ButtonEdge(pressed: false, time: t0 + .milliseconds(200))), at: t0 + .milliseconds(200))
        source.schedule(.stop, at: t0 + .seconds(2))
        var loop = Self.loop(source, clock: clock, entry: entry)
        try loop.run()
        let request = try #require(loop.runner.requests.first)
        #expect(request.at == t0 + .milliseconds(100))
        #expect(request.request.pressTime == Self.wallStart + .milliseconds(1_020))  // the edge + the 20 ms window
    }

    @Test(
        "the button keeps its own debounce settings (window and mode) beside a keypad debounced with its own",
        arguments: [false, true])
    func buttonKeepsItsSettings(entry: Bool) throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        let t0 = Instant.origin + .seconds(1)
        // A 30 ms glitch: longer than the keypad's 20 ms window, shorter than the button's 50 ms.
        source.schedule(ButtonScript.inputs(ButtonScript.glitch(at: t0, width: .milliseconds(30))))
        source.schedule(ButtonScript.inputs(ButtonScript.press(at: t0 + .seconds(1), holdFor: .milliseconds(200))))
        source.schedule(.stop, at: t0 + .seconds(3))
        var loop = Self.loop(source, clock: clock, entry: entry, button: Debouncer(window: .milliseconds(50)))
        try loop.run()
        #expect(Self.presses(loop) == 1)
        #expect(loop.display.screen(at: t0 + .milliseconds(1_049)) == ["Verification", "Send code"])
        #expect(loop.display.screen(at: t0 + .milliseconds(1_050)) == ["Sending...", "Resend (60)"])
    }

    @Test(
        "a button held at start-up is pressed already: its release is no press and no bounce, the next press is",
        arguments: [false, true])
    func heldAtStartUp(entry: Bool) throws {
        let clock = ManualClock()
        var source = VirtualEventSource(clock: clock)
        let t0 = Instant.origin + .seconds(1)
        source.schedule(.button(ButtonEdge(pressed: false, time: t0)), at: t0)
        source.schedule(ButtonScript.inputs(ButtonScript.press(at: t0 + .seconds(1), holdFor: .milliseconds(200))))
        source.schedule(.stop, at: t0 + .seconds(3))
        var loop = Self.loop(source, clock: clock, entry: entry, button: Debouncer(window: .milliseconds(20), pressed: true))
        try loop.run()
        #expect(Self.presses(loop) == 1)
        #expect(loop.display.screen(at: t0 + .milliseconds(1_020)) == ["Sending...", "Resend (60)"])
        #expect(!loop.observer.events.contains { if case .bouncesSuppressed = $0.event { true } else { false } })
    }
}
