import HAL
import ResendCore
import Testing

/// An arbitrary start, away from the clock's origin.
private let t0 = Instant(nanoseconds: 1_234_000_000)
private let oneNanosecond = TimeSpan(nanoseconds: 1)

private func seconds(_ s: Int64) -> TimeSpan { .seconds(s) }
private func ms(_ milliseconds: Int64) -> TimeSpan { .milliseconds(milliseconds) }

/// What the user sees: the device after carrying out the controller's actions, as the event loop
/// would. Checks that no call returns more than one `show`.
private struct Device {
    var controller: ResendController
    var screen: [String] = []
    var led: Bool?
    var shows = 0
    var sendCommandsRun = 0
    /// The requests of `runSendCommand` actions: (attempt, sequence, cooldown seconds).
    var sendRequests: [(attempt: Int, sequence: Int, cooldownSeconds: Int)] = []
    /// Every persisted snapshot, in order.
    var persisted: [ControllerSnapshot] = []
    var log: [ControllerEvent] = []
    /// The actions of the last call.
    var last: [ControllerAction] = []

    init(
        duration: Int64 = 60, layout: ScreenLayout = .sixteenByTwo, texts: Texts = Texts(), hasSendCommand: Bool = false,
        policy: ResendPolicy = .off
    ) {
        controller = ResendController(
            config: ControllerConfig(
                duration: .seconds(duration), texts: texts, layout: layout, hasSendCommand: hasSendCommand, policy: policy))
    }

    /// Line 1 without the padding.
    var status: String { trimmed(screen[0]) }
    /// Line 2 without the padding.
    var label: String { trimmed(screen[1]) }

    private func trimmed(_ line: String) -> String {
        var text = Substring(line)
        while text.last == " " { text = text.dropLast() }
        return String(text)
    }

    mutating func start(_ now: Instant) { apply(controller.start(now: now)) }
    mutating func press(_ now: Instant) { apply(controller.press(now: now)) }
    mutating func advance(_ now: Instant) { apply(controller.advance(to: now)) }
    mutating func stop(_ now: Instant) { apply(controller.stop(now: now)) }
    mutating func finish(_ outcome: CommandOutcome, _ now: Instant) { apply(controller.sendFinished(outcome, now: now)) }
    mutating func restore(_ snapshot: ControllerSnapshot?, _ now: Instant) { apply(controller.start(now: now, restoring: snapshot)) }

    /// Runs the loop's deadlines, each at its exact instant, up to and including `end`.
    mutating func runDeadlines(through end: Instant) {
        while let due = controller.nextDeadline, due <= end {
            advance(due)
        }
    }

    mutating func apply(_ actions: [ControllerAction]) {
        last = actions
        var showsNow = 0
        for action in actions {
            switch action {
            case .show(let frame):
                screen = frame.lines
                shows += 1
                showsNow += 1
            case .setLED(let on):
                led = on
            case .runSendCommand(let attempt, let sequence, let cooldownSeconds):
                sendCommandsRun += 1
                sendRequests.append((attempt, sequence, cooldownSeconds))
            case .persist(let snapshot):
                persisted.append(snapshot)
            case .log(let event):
                log.append(event)
            }
        }
        #expect(showsNow <= 1, "one show per call at most")
    }

    var lastShowed: Bool { last.contains { if case .show = $0 { true } else { false } } }
}

@Suite("Resend controller")
struct ResendControllerTests {
    @Test("start shows the title and the send label with the LED on, and waits with no deadline")
    func startScreen() {
        var device = Device()
        device.start(t0)
        #expect(device.screen == ["Verification    ", "Send code       "])
        #expect(device.led == true)
        #expect(device.controller.state == .ready(used: false))
        #expect(device.controller.nextDeadline == nil)
        #expect(device.last.count == 2)
    }

    @Test("a 60 s countdown shows 60 at the press, 59 after a second, 01 at 59 s and Resend at exactly 60 s")
    func sixtySecondCountdown() {
        var device = Device(duration: 60)
        device.start(t0)
        let pressedAt = t0 + ms(2_500)
        device.press(pressedAt)
        #expect(device.screen == ["Verification    ", "Resend (60)     "])
        #expect(device.led == false)
        #expect(device.controller.nextDeadline == pressedAt + seconds(1))

        device.advance(pressedAt + seconds(1) - oneNanosecond)
        #expect(device.label == "Resend (60)")
        device.advance(pressedAt + seconds(1))
        #expect(device.label == "Resend (59)")

        device.runDeadlines(through: pressedAt + seconds(59))
        #expect(device.label == "Resend (01)")
        #expect(device.led == false)

        device.advance(pressedAt + ms(59_999))
        #expect(device.last == [])
        #expect(device.label == "Resend (01)")
        #expect(device.led == false)
        #expect(device.controller.nextDeadline == pressedAt + seconds(60))

        device.advance(pressedAt + seconds(60))
        #expect(device.screen == ["Verification    ", "Resend          "])
        #expect(device.led == true)
        #expect(device.controller.state == .ready(used: true))
        #expect(device.controller.nextDeadline == nil)
        #expect(
            device.log == [
                .pressAccepted(at: pressedAt), .countdownStarted(until: pressedAt + seconds(60), seconds: 60),
                .countdownFinished(at: pressedAt + seconds(60)),
            ])
    }

    @Test(
        "every number of the countdown appears exactly at its instant and not a nanosecond before",
        arguments: [5, 60, 120])
    func everyLabelOnTime(duration: Int64) {
        var device = Device(duration: duration)
        device.start(t0)
        device.press(t0)
        #expect(device.label == "Resend (" + formatSeconds(Int(duration)) + ")")
        for elapsed in 1..<duration {
            let instant = t0 + seconds(elapsed)
            #expect(device.controller.nextDeadline == instant)
            device.advance(instant - oneNanosecond)
            #expect(!device.lastShowed)
            device.advance(instant)
            #expect(device.label == "Resend (" + formatSeconds(Int(duration - elapsed)) + ")")
            #expect(device.led == false)
        }
        device.advance(t0 + seconds(duration) - oneNanosecond)
        #expect(device.label == "Resend (01)")
        device.advance(t0 + seconds(duration))
        #expect(device.label == "Resend")
        #expect(device.led == true)
        // One frame per second plus the press frame and the ready frame, and the start frame.
        #expect(device.shows == Int(duration) + 2)
    }

    @Test("a 5 s countdown reads 05, 04, 03, 02, 01, then Resend")
    func fiveSeconds() {
        var device = Device(duration: 5)
        device.start(t0)
        device.press(t0)
        var labels = [device.label]
        while device.controller.nextDeadline != nil {
            device.runDeadlines(through: device.controller.nextDeadline!)
            labels.append(device.label)
        }
        #expect(labels == ["Resend (05)", "Resend (04)", "Resend (03)", "Resend (02)", "Resend (01)", "Resend"])
    }

    @Test("a 120 s countdown is three digits wide until 100, then two")
    func oneHundredTwentySeconds() {
        var device = Device(duration: 120)
        device.start(t0)
        device.press(t0)
        #expect(device.screen[1] == "Resend (120)    ")
        device.runDeadlines(through: t0 + seconds(1))
        #expect(device.label == "Resend (119)")
        device.runDeadlines(through: t0 + seconds(20))
        #expect(device.label == "Resend (100)")
        device.runDeadlines(through: t0 + seconds(21))
        #expect(device.screen[1] == "Resend (99)     ")
    }

    @Test("a deadline handled 300 ms late shows the right number and the later ones stay on time")
    func lateDeadlineNoDrift() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.advance(t0 + ms(1_300))
        #expect(device.label == "Resend (59)")
        #expect(device.controller.nextDeadline == t0 + seconds(2))
        device.advance(t0 + ms(1_999))
        #expect(device.label == "Resend (59)")
        device.advance(t0 + seconds(2))
        #expect(device.label == "Resend (58)")
        for elapsed in Int64(3)...59 {
            #expect(device.controller.nextDeadline == t0 + seconds(elapsed))
            device.advance(t0 + seconds(elapsed))
            #expect(device.label == "Resend (" + formatSeconds(Int(60 - elapsed)) + ")")
        }
        device.advance(t0 + seconds(60) - oneNanosecond)
        #expect(device.led == false)
        device.advance(t0 + seconds(60))
        #expect(device.label == "Resend")
        #expect(device.led == true)
    }

    @Test("a deadline handled seconds late skips to the right number with one show")
    func veryLateDeadline() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        let showsBefore = device.shows
        device.advance(t0 + ms(5_500))
        #expect(device.label == "Resend (55)")
        #expect(device.shows == showsBefore + 1)
        #expect(device.controller.nextDeadline == t0 + seconds(6))
    }

    @Test("a deadline handled after the end of the countdown goes straight to Resend")
    func lateBeyondEnd() {
        var device = Device(duration: 5)
        device.start(t0)
        device.press(t0)
        device.advance(t0 + seconds(9))
        #expect(device.label == "Resend")
        #expect(device.led == true)
        #expect(device.log.last == .countdownFinished(at: t0 + seconds(5)))
    }

    @Test("presses during the cooldown are ignored and counted with the seconds shown")
    func pressesIgnored() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.runDeadlines(through: t0 + ms(10_500))
        device.press(t0 + ms(10_500))
        #expect(device.last == [.log(.pressIgnored(at: t0 + ms(10_500), secondsLeft: 50))])
        #expect(device.controller.nextDeadline == t0 + seconds(11))
        device.runDeadlines(through: t0 + seconds(59))
        device.press(t0 + seconds(59))
        #expect(device.last == [.log(.pressIgnored(at: t0 + seconds(59), secondsLeft: 1))])
        #expect(device.controller.ignoredPresses == 2)
        #expect(device.label == "Resend (01)")
        #expect(device.led == false)
        #expect(device.controller.state == .cooldown(until: t0 + seconds(60)))
    }

    @Test("an ignored press does not move the countdown's deadlines")
    func ignoredPressKeepsDeadline() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.advance(t0 + seconds(3))
        device.press(t0 + ms(3_700))
        #expect(device.controller.nextDeadline == t0 + seconds(4))
        device.runDeadlines(through: t0 + seconds(60))
        #expect(device.label == "Resend")
        #expect(device.log.last == .countdownFinished(at: t0 + seconds(60)))
    }

    @Test("a press right at the end of the countdown starts a new one")
    func pressAtEndAfterAdvance() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.runDeadlines(through: t0 + seconds(60))
        #expect(device.label == "Resend")
        device.press(t0 + seconds(60))
        #expect(device.label == "Resend (60)")
        #expect(device.led == false)
        #expect(device.controller.ignoredPresses == 0)
        #expect(device.controller.nextDeadline == t0 + seconds(61))
    }

    @Test("a press at the end of the countdown before its deadline was handled is accepted")
    func pressAtEndBeforeAdvance() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.runDeadlines(through: t0 + seconds(59))
        #expect(device.label == "Resend (01)")
        device.press(t0 + seconds(60))
        #expect(device.label == "Resend (60)")
        #expect(device.led == false)
        #expect(device.controller.ignoredPresses == 0)
        #expect(device.controller.state == .cooldown(until: t0 + seconds(120)))
        #expect(device.last.filter { if case .show = $0 { true } else { false } }.count == 1)
        #expect(
            device.log.suffix(3) == [
                .countdownFinished(at: t0 + seconds(60)), .pressAccepted(at: t0 + seconds(60)),
                .countdownStarted(until: t0 + seconds(120), seconds: 60),
            ])
    }

    @Test("a press a nanosecond before the end is still ignored")
    func pressJustBeforeEnd() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.press(t0 + seconds(60) - oneNanosecond)
        #expect(device.controller.ignoredPresses == 1)
        #expect(device.controller.state == .cooldown(until: t0 + seconds(60)))
    }

    @Test("nothing is shown again when nothing changed")
    func noRedundantShows() {
        var device = Device(duration: 60)
        device.start(t0)
        device.advance(t0 + seconds(100))
        #expect(device.last == [])
        device.press(t0 + seconds(200))
        let shows = device.shows
        device.advance(t0 + seconds(200) + ms(400))
        device.advance(t0 + seconds(200) + ms(800))
        #expect(device.shows == shows)
    }

    @Test("the deadline is nil whenever the device is idle")
    func idleHasNoDeadline() {
        var device = Device(duration: 5)
        device.start(t0)
        #expect(device.controller.nextDeadline == nil)
        device.press(t0)
        #expect(device.controller.nextDeadline != nil)
        device.runDeadlines(through: t0 + seconds(5))
        #expect(device.controller.nextDeadline == nil)
        device.press(t0 + seconds(7))
        device.stop(t0 + seconds(8))
        #expect(device.controller.nextDeadline == nil)
    }

    @Test("stop shows the stopped screen with the LED off, then nothing more happens")
    func stopScreen() {
        var device = Device(duration: 60)
        device.start(t0)
        device.press(t0)
        device.stop(t0 + seconds(3))
        #expect(device.screen == ["Stopped         ", "                "])
        #expect(device.led == false)
        #expect(device.log.last == .stopped)
        device.press(t0 + seconds(100))
        #expect(device.last == [])
        device.advance(t0 + seconds(100))
        #expect(device.last == [])
        device.stop(t0 + seconds(101))
        #expect(device.last == [])
    }

    @Test("configured texts and a 20x4 display are used")
    func customTexts() {
        var texts = Texts()
        texts.title = "Login"
        texts.sendLabel = "Get code"
        texts.countdownLabel = "Wait {s}s"
        texts.resendLabel = "Again"
        var device = Device(duration: 3, layout: .twentyByFour, texts: texts)
        let blank = String(repeating: " ", count: 20)
        device.start(t0)
        #expect(device.screen == ["Login               ", "Get code            ", blank, blank])
        device.press(t0)
        #expect(device.screen == ["Login               ", "Wait 03s            ", blank, blank])
        device.runDeadlines(through: t0 + seconds(3))
        #expect(device.screen == ["Login               ", "Again               ", blank, blank])
    }

    @Test("with a send command a press runs it and shows Sending... during the countdown")
    func sendCommand() {
        var device = Device(duration: 5, hasSendCommand: true)
        device.start(t0)
        device.press(t0)
        #expect(device.sendCommandsRun == 1)
        #expect(device.screen == ["Sending...      ", "Resend (05)     "])
        #expect(device.led == false)
        #expect(device.controller.state == .sending(until: t0 + seconds(5)))
        device.press(t0 + seconds(1))
        #expect(device.controller.ignoredPresses == 1)
        #expect(device.sendCommandsRun == 1)
        device.runDeadlines(through: t0 + seconds(4))
        #expect(device.label == "Resend (01)")
    }

    @Test("a send command still running when the countdown ends: ready with Sending... kept, its late outcome sets the status")
    func sendOutlivesCountdown() {
        var device = Device(duration: 5, hasSendCommand: true)
        device.start(t0)
        device.press(t0)
        device.runDeadlines(through: t0 + seconds(5))
        #expect(device.screen == ["Sending...      ", "Resend          "])
        #expect(device.led == true)
        #expect(device.controller.state == .ready(used: true))
        device.finish(CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: seconds(6)), t0 + seconds(6))
        #expect(device.screen == ["Verification    ", "Resend          "])
        #expect(device.led == true)

        var failing = Device(duration: 5, hasSendCommand: true)
        failing.start(t0)
        failing.press(t0)
        failing.runDeadlines(through: t0 + seconds(5))
        failing.finish(CommandOutcome(sequence: 1, ending: .exited(code: 1), duration: seconds(6)), t0 + seconds(6))
        #expect(failing.screen == ["Send failed     ", "Resend          "])
        #expect(failing.controller.state == .failed)
        failing.press(t0 + seconds(7))
        #expect(failing.sendCommandsRun == 2)
        #expect(failing.label == "Resend (05)")
    }
}

@Suite("Controller configuration")
struct ControllerConfigTests {
    @Test(
        "durations must be whole seconds from one second to a day",
        arguments: [
            (TimeSpan.seconds(1), true), (TimeSpan.seconds(60), true), (TimeSpan.seconds(86_400), true),
            (TimeSpan.zero, false), (TimeSpan.seconds(-5), false), (TimeSpan.milliseconds(1_500), false),
            (TimeSpan.milliseconds(999), false), (TimeSpan.seconds(86_401), false),
        ])
    func durations(duration: TimeSpan, valid: Bool) {
        #expect(ControllerConfig.isValidDuration(duration) == valid)
    }

    @Test("the configuration's text problems use its display width and duration")
    func textProblems() {
        var config = ControllerConfig(duration: .seconds(120), layout: ScreenLayout(columns: 11, rows: 2))
        #expect(config.textProblems.map(\.field) == ["title", "countdownLabel"])
        #expect(config.textProblems.last?.width == 12)
        config.duration = .seconds(99)
        #expect(config.textProblems.map(\.field) == ["title"])
    }
}
