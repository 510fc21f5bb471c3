import HAL
import ResendCore
import Testing

/// A virtual clock shared by the fakes below (a class so the loop and the test see one time).
private final class TestClock: MonotonicClock {
    var current = Instant.origin
    func now() -> Instant { current }
}

/// Delivers scripted inputs at their instants and moves the clock, recording every deadline the
/// loop asked to be woken at. With nothing left and no deadline it stops the loop.
private struct ScriptedSource: EventSource {
    let clock: TestClock
    var inputs: [(Instant, LoopInput)]
    var requestedDeadlines: [Instant?] = []

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        requestedDeadlines.append(deadline)
        guard let next = inputs.first?.0 else {
            if let deadline { clock.current = max(clock.current, deadline); return [] }
            return [.stop]
        }
        if let deadline, deadline < next {
            clock.current = max(clock.current, deadline)
            return []
        }
        clock.current = max(clock.current, next)
        var due: [LoopInput] = []
        while let first = inputs.first, first.0 == next {
            due.append(first.1)
            inputs.removeFirst()
        }
        return due
    }
}

/// Records every frame with the instant it was shown.
private struct RecordingDisplay: FrameDisplay {
    var shown: [(Instant, [String])] = []
    var serviceAt: Instant?
    var serviced: [Instant] = []
    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        shown.append((now, frame.lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }))
        return []
    }
    var nextService: Instant? { serviceAt }
    mutating func service(now: Instant) -> [DisplayEvent] {
        serviced.append(now)
        serviceAt = nil
        return [.refreshed]
    }
}

private struct FlakyLED: OutputLine {
    var failing = false
    var states: [Bool] = []
    mutating func set(_ active: Bool) throws(HALError) {
        if failing { throw HALError(.io, operation: "set LED") }
        states.append(active)
    }
}

private func press(at t: Instant, bounces: Int = 1) -> [(Instant, LoopInput)] {
    var result: [(Instant, LoopInput)] = []
    for i in 0..<bounces {
        let time = t + .microseconds(Int64(i) * 400)
        result.append((time, .button(ButtonEdge(pressed: i % 2 == 0, time: time))))
    }
    let release = t + .milliseconds(300)
    result.append((release, .button(ButtonEdge(pressed: false, time: release))))
    return result
}

private typealias ButtonEnvironment = LoopEnvironment<
    ScriptedSource, RecordingDisplay, FlakyLED, NoCommandRunner, NoCodeVerifier, TestClock, NoWallClock, EventRecorder, NoStateStorage, NoRandomSource
>

private func makeLoop(inputs: [(Instant, LoopInput)], duration: Int64 = 5, led: FlakyLED = FlakyLED()) -> EventLoop<ButtonEnvironment> {
    let clock = TestClock()
    let environment = ButtonEnvironment(
        source: ScriptedSource(clock: clock, inputs: inputs), display: RecordingDisplay(), outputs: Outputs(led: led), commands: .none, clock: clock,
        wallClock: NoWallClock(), observer: EventRecorder(), store: nil)
    return EventLoop(
        environment: environment,
        coordinator: buttonCoordinator(ControllerConfig(duration: .seconds(duration)), button: Debouncer(window: .milliseconds(20))))
}

@Suite("Event loop")
struct EventLoopTests {
    @Test("a bouncy press starts the countdown at the debounced instant and every label changes on its second")
    func bouncyPressCountdown() throws {
        let t = Instant.origin + .seconds(1)
        var loop = makeLoop(inputs: press(at: t, bounces: 9))
        try loop.run()
        let pressInstant = t + .microseconds(8 * 400) + .milliseconds(20)
        let labels = loop.display.shown.map { ($0.0, $0.1[1]) }
        let expected: [(Instant, String)] = [
            (.origin, "Send code"),
            (pressInstant, "Resend (05)"),
            (pressInstant + .seconds(1), "Resend (04)"),
            (pressInstant + .seconds(2), "Resend (03)"),
            (pressInstant + .seconds(3), "Resend (02)"),
            (pressInstant + .seconds(4), "Resend (01)"),
            (pressInstant + .seconds(5), "Resend"),
        ]
        #expect(labels.count == expected.count + 1)  // + the stopped screen
        for (got, want) in zip(labels, expected) {
            #expect(got.0 == want.0, "\(want.1)")
            #expect(got.1 == want.1)
        }
        #expect(loop.led?.states == [true, false, true, false])  // ready, cooldown, ready, stopped
        // The 8 bounces of the burst are reported once, right after the accepted press.
        let events = loop.observer.events.map(\.1)
        let accepted = try #require(events.firstIndex(of: .controller(.pressAccepted(at: pressInstant))))
        #expect(events[accepted + 1] == .bouncesSuppressed(count: 8))
        #expect(events.filter { if case .bouncesSuppressed = $0 { true } else { false } }.count == 1)
    }

    @Test("an idle loop waits with no deadline: no periodic wake-ups")
    func idleHasNoDeadline() throws {
        var loop = makeLoop(inputs: [])
        try loop.run()
        #expect(loop.source.requestedDeadlines == [nil])
    }

    @Test("during a countdown the loop wakes only at label changes and the debounce deadline")
    func wakeUpsDuringCountdown() throws {
        let t = Instant.origin + .seconds(1)
        var loop = makeLoop(inputs: press(at: t), duration: 3)
        try loop.run()
        let pressInstant = t + .milliseconds(20)
        let release = t + .milliseconds(300)
        let expected: [Instant?] = [
            nil,  // idle before the press
            t + .milliseconds(20),  // the press's debounce window
            pressInstant + .seconds(1),  // "(02)"; the release edge arrives before it
            release + .milliseconds(20),  // the release's debounce window
            pressInstant + .seconds(1),
            pressInstant + .seconds(2),
            pressInstant + .seconds(3),  // "Resend"
            nil,  // idle again
        ]
        #expect(loop.source.requestedDeadlines == expected)
    }

    @Test("the button reported as a key presses like its edges; other keys and verify outcomes do nothing without a keypad")
    func buttonAsKey() throws {
        let t = Instant.origin + .seconds(1)
        var loop = makeLoop(inputs: [
            (t - .milliseconds(500), .key(KeyEvent(.digit7, .pressed, at: t - .milliseconds(500)))),
            (t - .milliseconds(400), .commandFinished(.verify, CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: .zero))),
            (t, .key(KeyEvent(.button, .pressed, at: t))),
            (t + .milliseconds(300), .key(KeyEvent(.button, .released, at: t + .milliseconds(300)))),
        ])
        try loop.run()
        #expect(loop.observer.events.filter { if case .controller(.pressAccepted) = $0.1 { true } else { false } }.count == 1)
        #expect(loop.display.shown.map { $0.1[1] }.contains("Resend (05)"))
    }

    @Test("a failing LED is logged and the countdown goes on")
    func failingLED() throws {
        var loop = makeLoop(inputs: press(at: .origin + .seconds(1)), led: FlakyLED(failing: true))
        try loop.run()
        #expect(loop.display.shown.map { $0.1[1] }.contains("Resend (01)"))
        #expect(loop.display.shown.last?.1[0] == "Stopped")
        #expect(loop.observer.events.contains { if case .ledFailed = $0.1 { true } else { false } })
    }

    @Test("stop shows the stopped screen and ends the loop, even mid-countdown")
    func stopMidCountdown() throws {
        let t = Instant.origin + .seconds(1)
        var loop = makeLoop(inputs: press(at: t) + [(t + .seconds(2), .stop)], duration: 60)
        try loop.run()
        #expect(loop.display.shown.last?.1 == ["Stopped", ""])
        #expect(loop.display.shown.last?.0 == t + .seconds(2))
        #expect(loop.led?.states.last == false)
    }

    @Test("the display is serviced once the clock reaches the time it asked for, not before")
    func displayService() throws {
        var loop = makeLoop(inputs: press(at: .origin + .seconds(1)))
        loop.display.serviceAt = .origin + .milliseconds(2500)
        try loop.run()
        #expect(loop.display.serviced == [.origin + .milliseconds(2500)])
        #expect(loop.observer.events.contains { $0.0 == .origin + .milliseconds(2500) && $0.1 == .display(.refreshed) })
    }
}
