import HAL
import HALMock
import ResendCore
import Testing

/// A security device fails closed: a try is written before its check starts (a power cut never
/// yields a free try), and code entry closes while the state cannot be written. On virtual time,
/// as a user sees it on a 16x2 display. Keys count 20 ms after they are pressed.
@Suite("Keypad fails closed")
struct EntryFailClosedTests {
    /// Four digits and '#' typed into a fresh flow; the actions of the '#'.
    private func submitted(_ entry: inout CodeEntry) -> [EntryAction] {
        _ = entry.start(now: kt(0))
        _ = entry.codeSent(now: kt(0))
        var at = kt(1)
        for key in [Key.digit4, .digit7, .digit1, .digit1] {
            _ = entry.key(KeyEvent(key, .pressed, at: at), now: at)
            at = at + .milliseconds(200)
        }
        return entry.key(KeyEvent(.pound, .pressed, at: at), now: at)
    }

    private func verifyRequests(_ actions: [EntryAction]) -> [VerifyRequest] {
        actions.compactMap { if case .runVerify(let request) = $0 { request } else { nil } }
    }

    @Test func aSubmissionWritesItsTryAndStartsNoCheckUntilTheWriteIsReported() {
        var entry = CodeEntry(config: EntryConfig())
        let actions = submitted(&entry)
        #expect(actions.contains(.persist(EntrySnapshot(failures: 1, open: true, validUntil: kt(600)))))
        #expect(verifyRequests(actions).isEmpty, "no check before the try is on disk")
        let written = entry.stateWritten(true, now: kt(2))
        #expect(verifyRequests(written).map { digitsText($0.code) } == ["4711"])
        #expect(entry.stateWritten(true, now: kt(2)).isEmpty, "the check starts once")
    }

    @Test func aSubmissionWhoseTryCannotBeWrittenIsNeverChecked() {
        var entry = CodeEntry(config: EntryConfig())
        _ = submitted(&entry)
        let failed = entry.stateWritten(false, now: kt(2))
        #expect(verifyRequests(failed).isEmpty)
        #expect(failed.contains(.log(.closed(at: kt(2), droppedCheck: 1))))
        #expect(entry.snapshot.failures == 0, "the try was not taken: the file still holds the count before it")
        #expect(entry.isClosed)
        #expect(verifyRequests(entry.stateWritten(true, now: kt(3))).isEmpty, "a later write does not start the dropped check")
    }

    @Test func inTheLoopTheTryIsWrittenBeforeTheVerifyCommandStarts() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        let verify = rig.entryActions.firstIndex { if case .runVerify = $0 { true } else { false } }
        let record = rig.entryActions.firstIndex { if case .persist(let snapshot) = $0 { snapshot.failures == 1 } else { false } }
        #expect(record != nil && verify != nil && record! < verify!)
        #expect(rig.line1 == "Checking...")
    }

    @Test func aWrongCodeCountsOnceAndAStopDuringACheckKeepsTheTry() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1111#", at: kt(2))
        rig.answer(.rejected, at: kt(4))
        #expect(rig.line1 == "Wrong, 2 left")
        rig.type("2222#", at: kt(5))
        rig.stop(at: kt(7))
        #expect(rig.entryPersisted.last?.failures == 2, "the try of the check cut short stays counted")
        #expect(rig.verifies.count == 2)
        #expect(!rig.entryLog.contains(.verified(.rejected, sequence: 2)))
    }

    @Test func aRestartAfterTheLastTryWasWrittenButNeverAnsweredStartsTheLockout() {
        let wall = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
        // The file of a process killed during the check of the third wrong code.
        let stored = PersistedEntryState(failures: 3, rounds: 0, open: true, validUntil: wall + .seconds(500))
        var rig = KeypadRig()
        rig.start(entry: stored.resumed(monotonicNow: kt(0), wallNow: wall, config: rig.pad.entry!.config))
        #expect(rig.lines == ["Try again (30)", "Send code"])
        #expect(rig.entryLog.contains(.lockoutStarted(until: kt(30), seconds: 30, round: 1)))
        #expect(
            rig.entryPersisted.last
                == EntrySnapshot(
                    failures: 0, rounds: 1, lockoutEnd: kt(30), lockoutSeconds: 30,
                    open: true, validUntil: kt(500)))
        rig.run(until: kt(30))
        #expect(rig.line1 == "Code: ________")
    }

    @Test func aFailedWriteClosesCodeEntryWhileTheCountdownGoesOn() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        rig.stateWritable = false
        rig.type("34#", at: kt(3))  // '#' counts at 3.62 s
        #expect(rig.verifies.isEmpty)
        #expect(rig.lines == ["Entry closed", "Resend (57)"])
        #expect(rig.entryLog.contains(.closed(at: kt(3.62), droppedCheck: 1)))
        rig.type("1234#", at: kt(5))
        #expect(rig.verifies.isEmpty, "keys are ignored while closed")
        rig.run(until: kt(30))
        #expect(rig.lines == ["Entry closed", "Resend (31)"])
        rig.run(until: kt(61))
        #expect(rig.lines == ["Entry closed", "Resend"], "the countdown ends on time")
    }

    @Test func theStateIsWrittenAgainAfterOneSecondDoublingToAMinuteAndEntryReopensWhenThatWorks() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.stateWritable = false
        rig.type("1234#", at: kt(2))  // '#' counts at 3.22 s: the write fails
        rig.run(until: kt(186))
        let retries = rig.entryPersistTimes.filter { $0 > kt(3.22) }
        // 1, 2, 4, 8, 16, 32, then 60 s apart (the countdown's end at 60.02 s failed to write too:
        // it does not push the retry back).
        #expect(retries == [4.22, 6.22, 10.22, 18.22, 34.22, 66.22, 126.22].map(kt))
        #expect(rig.line1 == "Entry closed")
        rig.stateWritable = true
        rig.run(until: kt(186.22))
        #expect(rig.line1 == "Code: ________")
        #expect(rig.entryLog.contains(.reopened(at: kt(186.22))))
        rig.type("1234#", at: kt(187))
        #expect(rig.verifies.count == 1)
        #expect(rig.line1 == "Checking...")
    }

    @Test func twentyByFourSaysWhyEntryIsClosed() {
        var rig = KeypadRig(layout: .twentyByFour)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.stateWritable = false
        rig.type("1234#", at: kt(2))
        #expect(rig.lines == ["Code sent", "Resend (57)", "Entry closed", "State not saved"])
    }
}

/// A verify command on virtual time that notes, as it starts, the wrong codes the state storage
/// holds at that moment (what a power cut then would leave).
struct StorageWitnessVerifier: CodeVerifier {
    var inner: ScriptedVerifier
    let storage: MemoryStateStorage
    var failuresOnDiskAtStart: [Int?] = []

    mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        let stored = storage.bytes.flatMap { try? PersistedState(decoding: $0) }
        failuresOnDiskAtStart.append(stored?.entry?.failures)
        return inner.start(request, now: now)
    }
    var nextService: Instant? { inner.nextService }
    mutating func service(now: Instant) -> [CommandOutcome] { inner.service(now: now) }
}

@Suite("Event loop with a code entry fails closed")
struct EventLoopFailClosedTests {
    private typealias WitnessEnvironment<Source: EventSource> = LoopEnvironment<
        Source, FrameLog, RecordingLED, ScriptedCommandRunner, StorageWitnessVerifier, ManualClock, ManualWallClock, EventRecorder,
        MemoryStateStorage, NoRandomSource
    >

    private func loop<Source: EventSource>(_ device: KeypadDevice, source: Source, verifier: ScriptedVerifier)
        -> EventLoop<WitnessEnvironment<Source>>
    {
        let pad = DeviceCoordinator(
            controller: ResendController(config: ControllerConfig(duration: .seconds(60), layout: device.layout, hasSendCommand: true)),
            entry: CodeEntry(config: device.entry))
        let environment = WitnessEnvironment(
            source: source, display: FrameLog(), outputs: Outputs(led: device.led, strike: device.output),
            commands: Commands(
                send: ScriptedCommandRunner([.succeeds(after: .milliseconds(500))]),
                verify: StorageWitnessVerifier(inner: verifier, storage: device.storage)), clock: device.clock, wallClock: device.wall,
            observer: EventRecorder(), store: device.storage)
        return EventLoop(environment: environment, coordinator: pad)
    }

    @Test("when the verify command starts, the state file already counts its try; a wrong code is not counted twice, a failed check gives it back")
    func tryOnDiskBeforeTheCheck() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))  // exit 1
        device.type("2222#", at: kt(8))  // exit 4: the try is given back
        device.type("3333#", at: kt(13))  // exit 1
        device.stop(at: kt(20))
        var loop = loop(device, source: device.source, verifier: ScriptedVerifier([.exited(code: 1), .exited(code: 4), .exited(code: 1)]))
        try loop.run()
        #expect(loop.verifier.failuresOnDiskAtStart == [1, 2, 2])
        #expect(loop.display.screen(at: kt(16)) == ["Wrong, 1 left", "Resend (46)"])
        let stored = try PersistedState(decoding: try #require(device.storage.bytes))
        #expect(stored.entry?.failures == 2)
    }

    @Test(
        "with a state file that cannot be written, no verify command runs: the panel says Entry closed, logs it once, and opens again once a write succeeds"
    )
    func unwritableState() throws {
        var device = KeypadDevice()
        device.storage.writeError = HALError(.io, operation: "create /var/lib/resend-button/state.json.tmp", errno: 21)
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))
        device.type("2222#", at: kt(8))
        device.stop(at: kt(40))
        // The press's write fails at 1.02 s: closed. Retries at 2.02, 4.02, 8.02, 16.02 fail; the
        // disk is repaired at 20 s; the retry at 32.02 s writes.
        var source = device.source
        source.schedule(.inputDevice(.online(path: "repair", name: nil)), at: kt(20))
        var loop = loop(
            device, source: RepairingSource(inner: source, storage: device.storage, at: kt(20)),
            verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.verifier.failuresOnDiskAtStart.isEmpty, "no check ran")
        #expect(loop.display.screen(at: kt(2)) == ["Entry closed", "Resend (60)"])
        #expect(loop.display.screen(at: kt(32)) == ["Entry closed", "Resend (30)"])
        #expect(loop.display.screen(at: kt(32.02)) == ["Code: ________", "Resend (29)"])
        let events = loop.observer.events.map { $0.event }
        #expect(events.filter { if case .entry(.closed) = $0 { true } else { false } }.count == 1)
        #expect(events.contains(.entry(.reopened(at: kt(32.02)))))
        let stored = try PersistedState(decoding: try #require(device.storage.bytes))
        #expect(stored.entry?.failures == 0 && stored.entry?.open == true)
    }

    @Test(
        "on a state medium that forgets at a power cut (stateForgets), code entry is closed from the first frame and stays closed though every write succeeds; no code is checked; the countdown is still written"
    )
    func forgetfulStateKeepsEntryClosed() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))
        device.stop(at: kt(40))
        var loop = loop(device, source: device.source, verifier: ScriptedVerifier([.exited(code: 0)]))
        loop.stateForgets = true
        try loop.run()
        #expect(loop.display.screen(at: kt(0.5)) == ["Entry closed", "Send code"])
        #expect(loop.display.screen(at: kt(2)) == ["Entry closed", "Resend (60)"])
        #expect(loop.display.screen(at: kt(39)) == ["Entry closed", "Resend (23)"])
        #expect(loop.verifier.failuresOnDiskAtStart.isEmpty, "no check ran")
        let stored = try PersistedState(decoding: try #require(device.storage.bytes))
        #expect(stored.entry?.failures == 0)
        #expect(stored.controller.countdownEnd != nil, "the countdown is written: a restart resumes it")
    }

    @Test("the same device on a durable medium opens code entry and checks the code")
    func durableStateOpensEntry() throws {
        var device = KeypadDevice()
        device.tap(.button, at: kt(1))
        device.type("1111#", at: kt(3))
        device.stop(at: kt(40))
        var loop = loop(device, source: device.source, verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(2)) == ["Code: ________", "Resend (60)"])
        #expect(loop.verifier.failuresOnDiskAtStart.count == 1)
    }
}

/// Clears the storage's write error at `at` (the disk was repaired).
struct RepairingSource: EventSource {
    var inner: VirtualEventSource
    let storage: MemoryStateStorage
    let at: Instant
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        let inputs = try inner.wait(until: deadline)
        if inner.clock.now() >= at { storage.writeError = nil }
        return inputs
    }
}

/// Limits a user meets on the panel: a code longer than the field, a lockout of a day.
@Suite("Keypad limits")
struct EntryLimitsTests {
    @Test func aDigitBeyondTheFieldIsNotTakenAndTheScreenSaysSoBriefly() {
        var config = KeypadRig.defaultEntry
        config.maxLength = 4
        config.minLength = 4
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234", at: kt(2))
        #expect(rig.line1 == "Code: ****")
        rig.tap(.digit5, at: kt(4))  // counts at 4.02 s
        #expect(rig.line1 == "Max 4 digits")
        rig.run(until: kt(5.519))
        #expect(rig.line1 == "Max 4 digits")
        rig.run(until: kt(5.52))
        #expect(rig.line1 == "Code: ****", "the field again, its four digits kept")
        #expect(rig.verifies.isEmpty, "nothing was submitted")
        rig.tap(.star, at: kt(6))
        #expect(rig.line1 == "Code: ***_")
    }

    @Test func twentyByFourShowsTheNoticeAboveTheFullField() {
        var config = KeypadRig.defaultEntry
        config.maxLength = 4
        config.minLength = 4
        var rig = KeypadRig(layout: .twentyByFour, entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12345", at: kt(2))
        #expect(rig.lines[2...] == ["Max 4 digits", "Code: ****"])
    }

    @Test(
        "a lockout's seconds take the form that fits the display",
        arguments: [
            (30, 20, "30"), (600, 20, "600"), (999, 3, "999"), (1_000, 20, "16:40"), (1_000, 3, "17m"), (3_599, 4, "60m"),
            (3_600, 20, "1:00:00"), (3_600, 5, "60m"), (3_601, 5, "2h"), (86_400, 20, "24:00:00"), (86_400, 5, "24h"), (59, 1, "59"),
        ])
    func lockoutForms(seconds: Int, width: Int, shown: String) {
        #expect(formatLockoutSeconds(seconds, width: width) == shown)
    }

    @Test func aDayLongLockoutFitsSixteenColumnsAndTwentyShowTheClock() {
        var config = KeypadRig.defaultEntry
        config.lockouts = [.seconds(86_400)]
        config.columns = 16
        #expect(config.problems(columns: 16).isEmpty)
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        for index in 0..<3 {
            rig.type("1111#", at: kt(2 + Double(index) * 3))
            rig.answer(.rejected, at: kt(4 + Double(index) * 3))
        }
        #expect(rig.line1 == "Try again (24h)")
        rig.run(until: kt(10 + 3_601))
        #expect(rig.line1 == "Try again (23h)")
        var wide = KeypadRig.defaultEntry
        wide.lockouts = [.seconds(86_400)]
        wide.columns = 20
        var rig20 = KeypadRig(layout: .twentyByFour, entry: wide)
        rig20.start()
        rig20.sendCode(at: kt(0))
        for index in 0..<3 {
            rig20.type("1111#", at: kt(2 + Double(index) * 3))
            rig20.answer(.rejected, at: kt(4 + Double(index) * 3))
        }
        #expect(rig20.lines[3] == "Try again (24:00:00)")
    }
}
