import HAL
import ResendCore
import Testing

private let t0 = Instant(nanoseconds: 1_234_000_000)
private func s(_ seconds: Int64) -> TimeSpan { .seconds(seconds) }

/// The controller driven as the loop drives it, recording every frame with its instant.
private struct Driver {
    var controller: ResendController
    var frames: [(Instant, [String])] = []
    var led: Bool?
    var log: [ControllerEvent] = []
    var sends: [(attempt: Int, sequence: Int, cooldownSeconds: Int)] = []
    var persisted: [ControllerSnapshot] = []

    init(duration: Int64 = 5, hasSendCommand: Bool = true, policy: ResendPolicy = .off) {
        controller = ResendController(
            config: ControllerConfig(
                duration: .seconds(duration), hasSendCommand: hasSendCommand, policy: policy))
    }

    var screen: [String] { frames.last?.1 ?? [] }

    mutating func apply(_ actions: [ControllerAction], _ now: Instant) {
        for action in actions {
            switch action {
            case .show(let frame): frames.append((now, frame.lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }))
            case .setLED(let on): led = on
            case .log(let event): log.append(event)
            case .runSendCommand(let attempt, let sequence, let cooldownSeconds): sends.append((attempt, sequence, cooldownSeconds))
            case .persist(let snapshot): persisted.append(snapshot)
            }
        }
    }

    mutating func start(_ now: Instant, restoring: ControllerSnapshot? = nil) { apply(controller.start(now: now, restoring: restoring), now) }
    mutating func press(_ now: Instant) { apply(controller.press(now: now), now) }
    mutating func finish(_ outcome: CommandOutcome, _ now: Instant) { apply(controller.sendFinished(outcome, now: now), now) }
    /// Runs every deadline up to `end`, delivering `outcomes` at their instants in between.
    mutating func run(through end: Instant, outcomes: [(Instant, CommandOutcome)] = []) {
        var pending = outcomes
        while true {
            let next = controller.nextDeadline
            if let (at, outcome) = pending.first, next.map({ at <= $0 }) ?? true, at <= end {
                pending.removeFirst()
                finish(outcome, at)
                continue
            }
            guard let due = next, due <= end else { return }
            apply(controller.advance(to: due), due)
        }
    }
}

@Suite("Send outcomes")
struct SendOutcomeTests {
    /// Each outcome arrives 2.5 s into a 5 s countdown started by a press at t0.
    @Test(
        "each outcome leaves its screen, and no label change is delayed by the send",
        arguments: [
            (CommandOutcome.Ending.exited(code: 0), 0, 0, ["Code sent", "Resend (03)"], false),
            (.exited(code: 3), 15, 0, ["Send failed", "Resend"], true),
            (.timedOut(after: .milliseconds(2_500), killed: true), 0, 0, ["Send failed", "Resend"], true),
            (.couldNotStart(reason: "send-sms: ENOENT (2): no such file or directory", errno: 2), 0, 0, ["Send failed", "Resend"], true),
            (.exited(code: 0), 4096, 1_000_000, ["Code sent", "Resend (03)"], false),  // huge output, bounded by the runner
            (.signalled(signal: 9), 0, 0, ["Send failed", "Resend"], true),
        ])
    func outcomes(ending: CommandOutcome.Ending, outputBytes: Int, dropped: Int, screen: [String], ledOn: Bool) {
        let output = [UInt8](repeating: 0x41, count: outputBytes)
        var driver = Driver()
        driver.start(t0)
        driver.press(t0)
        #expect(driver.screen == ["Sending...", "Resend (05)"])
        #expect(driver.sends.map(\.attempt) == [1])
        let outcome = CommandOutcome(sequence: 1, ending: ending, duration: .milliseconds(2_500), output: output, droppedOutputBytes: dropped)
        driver.run(through: t0 + s(2) + .milliseconds(500), outcomes: [(t0 + .milliseconds(2_500), outcome)])
        #expect(driver.screen == screen)
        #expect(driver.led == ledOn)
        #expect(driver.log.contains(.sendFinished(outcome, at: t0 + .milliseconds(2_500), superseded: false)))
        #expect(driver.log.contains(.countdownCancelled(at: t0 + .milliseconds(2_500))) == ledOn)
        // Every change of the label came exactly on its second after the press: the outcome
        // changed only the status line, or cancelled the countdown at its own instant.
        driver.run(through: t0 + s(10))
        var labelChanges: [(Instant, String)] = []
        for frame in driver.frames where frame.1[1] != labelChanges.last?.1 { labelChanges.append((frame.0, frame.1[1])) }
        let expected: [(Instant, String)] =
            ledOn
            ? [
                (t0, "Send code"), (t0, "Resend (05)"), (t0 + s(1), "Resend (04)"), (t0 + s(2), "Resend (03)"),
                (t0 + .milliseconds(2_500), "Resend"),
            ]
            : [
                (t0, "Send code"), (t0, "Resend (05)"), (t0 + s(1), "Resend (04)"), (t0 + s(2), "Resend (03)"),
                (t0 + s(3), "Resend (02)"), (t0 + s(4), "Resend (01)"), (t0 + s(5), "Resend"),
            ]
        #expect(labelChanges.map(\.0) == expected.map(\.0))
        #expect(labelChanges.map(\.1) == expected.map(\.1))
        #expect(driver.screen == (ledOn ? ["Send failed", "Resend"] : ["Verification", "Resend"]))
    }

    @Test("success does not restart the countdown: it still ends 5 s after the press")
    func successKeepsDeadline() {
        var driver = Driver()
        driver.start(t0)
        driver.press(t0)
        driver.finish(CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: s(4)), t0 + s(4))
        #expect(driver.controller.state == .cooldown(until: t0 + s(5)))
        #expect(driver.screen == ["Code sent", "Resend (01)"])
        driver.run(through: t0 + s(5))
        #expect(driver.frames.last?.0 == t0 + s(5))
        #expect(driver.screen == ["Verification", "Resend"])
    }

    @Test("after a failure a press sends again at once")
    func retryAfterFailure() {
        var driver = Driver()
        driver.start(t0)
        driver.press(t0)
        driver.finish(CommandOutcome(sequence: 1, ending: .exited(code: 1), duration: s(1)), t0 + s(1))
        driver.press(t0 + s(2))
        #expect(driver.sends.map(\.sequence) == [1, 2])
        #expect(driver.sends.map(\.attempt) == [1, 2])
        #expect(driver.screen == ["Sending...", "Resend (05)"])
    }

    @Test("the outcome of a superseded send is only logged")
    func supersededOutcome() {
        var driver = Driver()
        driver.start(t0)
        driver.press(t0)
        driver.run(through: t0 + s(5))  // the first send outlives its countdown
        driver.press(t0 + s(6))
        let stale = CommandOutcome(sequence: 1, ending: .exited(code: 1), duration: s(7))
        driver.finish(stale, t0 + s(7))
        #expect(driver.log.last == .sendFinished(stale, at: t0 + s(7), superseded: true))
        #expect(driver.screen == ["Sending...", "Resend (04)"])
        #expect(driver.controller.state == .sending(until: t0 + s(11)))
    }

    @Test("the state is persisted at the press before the send command starts, and at each outcome")
    func persistOrder() {
        var driver = Driver()
        driver.start(t0)
        let actions = driver.controller.press(now: t0)
        let persistIndex = actions.firstIndex { if case .persist = $0 { true } else { false } }
        let sendIndex = actions.firstIndex { if case .runSendCommand = $0 { true } else { false } }
        #expect(persistIndex != nil && sendIndex != nil && persistIndex! < sendIndex!)
        driver.apply(actions, t0)
        #expect(
            driver.persisted.last
                == ControllerSnapshot(
                    status: .sending, used: true, countdownEnd: t0 + s(5), countdownSeconds: 5, run: 1,
                    runEnds: t0 + s(5) + ResendPolicy.defaultRunResetAfter))
        driver.finish(CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: s(1)), t0 + s(1))
        #expect(driver.persisted.last?.status == .sent)
        driver.run(through: t0 + s(5))
        #expect(driver.persisted.last?.countdownEnd == nil)
        #expect(driver.persisted.count == 3)
    }
}

@Suite("Resend policy")
struct ResendPolicyTests {
    private let escalating = ResendPolicy(cooldowns: [s(2), s(4), s(6)], runResetAfter: s(30))

    @Test("the n-th send in a row gets the n-th cooldown, the last repeats")
    func escalation() {
        var driver = Driver(hasSendCommand: false, policy: escalating)
        driver.start(t0)
        var now = t0
        var labels: [String] = []
        for _ in 0..<5 {
            driver.press(now)
            labels.append(driver.screen[1])
            driver.run(through: now + s(10))
            guard case .ready = driver.controller.state else { Issue.record("not ready"); return }
            now = now + s(7)  // pressed again 7 s after the previous press: within the run
        }
        #expect(labels == ["Resend (02)", "Resend (04)", "Resend (06)", "Resend (06)", "Resend (06)"])
    }

    @Test("a run ends after the idle time: not yet at 1 ns before, and at exactly the reset time")
    func runReset() {
        var early = Driver(hasSendCommand: false, policy: escalating)
        early.start(t0)
        early.press(t0)
        early.run(through: t0 + s(2))
        early.press(t0 + s(2) + s(30) - TimeSpan(nanoseconds: 1))
        #expect(early.screen[1] == "Resend (04)")

        var late = Driver(hasSendCommand: false, policy: escalating)
        late.start(t0)
        late.press(t0)
        late.run(through: t0 + s(2))
        late.press(t0 + s(2) + s(30))
        #expect(late.screen[1] == "Resend (02)")
    }

    @Test("after the cap the label counts down the lockout, presses are ignored and logged, then sending is allowed")
    func lockout() {
        let policy = ResendPolicy(cap: .init(maxSends: 2, window: s(20)))
        var driver = Driver(duration: 3, hasSendCommand: false, policy: policy)
        driver.start(t0)
        driver.press(t0)
        driver.run(through: t0 + s(3))
        #expect(driver.screen == ["Verification", "Resend"])
        driver.press(t0 + s(4))
        driver.run(through: t0 + s(7))
        // The second send's countdown ended at 7 s; sending is allowed again at 0 + 20 s.
        #expect(driver.controller.state == .lockedOut(until: t0 + s(20)))
        #expect(driver.screen == ["Verification", "Wait (13)"])
        #expect(driver.led == false)
        #expect(driver.log.contains(.lockoutStarted(until: t0 + s(20))))
        driver.press(t0 + s(10))
        #expect(driver.log.last == .pressLockedOut(at: t0 + s(10), secondsLeft: 10))
        #expect(driver.controller.ignoredPresses == 1)
        driver.run(through: t0 + s(20) - TimeSpan(nanoseconds: 1))
        #expect(driver.screen == ["Verification", "Wait (01)"])
        driver.run(through: t0 + s(20))
        #expect(driver.frames.last?.0 == t0 + s(20))
        #expect(driver.screen == ["Verification", "Resend"])
        #expect(driver.led == true)
        driver.press(t0 + s(21))
        #expect(driver.screen == ["Verification", "Resend (03)"])
    }

    @Test("a failed send counts against the cap: the failure screen shows the lockout")
    func lockoutAfterFailure() {
        var driver = Driver(duration: 3, policy: ResendPolicy(cap: .init(maxSends: 1, window: s(60))))
        driver.start(t0)
        driver.press(t0)
        driver.finish(CommandOutcome(sequence: 1, ending: .exited(code: 1), duration: s(1)), t0 + s(1))
        #expect(driver.screen == ["Send failed", "Wait (59)"])
        driver.run(through: t0 + s(60))
        #expect(driver.screen == ["Send failed", "Resend"])
        #expect(driver.controller.state == .failed)
    }

    @Test("a restart resumes the lockout and the escalation from the persisted state")
    func acrossRestart() {
        let policy = ResendPolicy(cooldowns: [s(2), s(4)], runResetAfter: s(30), cap: .init(maxSends: 2, window: s(20)))
        var first = Driver(hasSendCommand: false, policy: policy)
        first.start(t0)
        first.press(t0)
        first.run(through: t0 + s(3))
        first.press(t0 + s(3))  // second send: 4 s cooldown, then locked out until 20 s
        first.run(through: t0 + s(5))
        let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
        // Persisted at 5 s (wall0 + 5 s), restarted 3 s later on a new monotonic clock.
        let saved = PersistedState(first.persisted.last!, monotonicNow: t0 + s(5), wallNow: wall0 + s(5))
        let restart = Instant(nanoseconds: 42)
        let resumed = saved.resumed(monotonicNow: restart, wallNow: wall0 + s(8), config: first.controller.config)
        var second = Driver(hasSendCommand: false, policy: policy)
        second.start(restart, restoring: resumed)
        #expect(second.screen == ["Verification", "Wait (12)"])
        #expect(second.controller.state == .lockedOut(until: restart + s(12)))
        second.run(through: restart + s(12))
        #expect(second.screen == ["Verification", "Resend"])
        second.press(restart + s(13))
        #expect(second.screen == ["Verification", "Resend (04)"])  // the third send in the run
    }

    @Test(
        "invalid policies are reported",
        arguments: [
            (ResendPolicy(cooldowns: [.milliseconds(1_500)]), 1),
            (ResendPolicy(cap: .init(maxSends: 0, window: .seconds(60))), 1),
            (ResendPolicy(cap: .init(maxSends: 1, window: .zero)), 1),
            (ResendPolicy(runResetAfter: .seconds(-1)), 1),
            (ResendPolicy(cooldowns: [.seconds(60), .seconds(120)], cap: .init(maxSends: 3, window: .seconds(3_600))), 0),
        ])
    func problems(policy: ResendPolicy, count: Int) {
        #expect(policy.problems.count == count)
    }

    @Test("the lockout label is checked at the window's seconds")
    func lockoutLabelWidth() {
        var config = ControllerConfig(duration: .seconds(60), layout: ScreenLayout(columns: 10, rows: 2))
        config.texts.title = "Verify"
        config.texts.failedTitle = "Failed"
        config.texts.countdownLabel = "Again {s}"
        #expect(config.textProblems == [])
        config.policy.cap = .init(maxSends: 3, window: .seconds(3_600))
        #expect(
            config.textProblems == [
                TextProblem(
                    field: "lockoutLabel", value: "Wait ({s})", width: 11, limit: 10, kind: .tooWide, seconds: 3_600)
            ])
    }
}
