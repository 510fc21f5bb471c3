import HAL

/// Everything the controller is told at start-up. Validate a configuration read from the user with
/// `isValidDuration`, `ScreenLayout.isValid` and `textProblems` before building a controller:
/// the controller treats an invalid one as a bug.
public struct ControllerConfig: Hashable, Sendable {
    /// The cooldown after a press, in whole seconds (`isValidDuration`).
    public var duration: TimeSpan
    public var texts: Texts
    public var layout: ScreenLayout
    /// True when a send command is configured: a press runs it and the status line reads
    /// `sendingTitle` until its outcome is known.
    public var hasSendCommand: Bool
    /// Escalating cooldowns and a cap of sends (`ResendPolicy.off` by default); must have no
    /// `problems`.
    public var policy: ResendPolicy

    /// The default cooldown: one minute, the "Resend (59)" of phone apps.
    public static let defaultDuration = TimeSpan.seconds(60)
    /// The longest cooldown accepted, one day: longer is surely a configuration mistake, and it
    /// keeps the seconds count within a 32-bit `Int`.
    public static let maximumDurationSeconds = 86_400

    public init(
        duration: TimeSpan = ControllerConfig.defaultDuration, texts: Texts = Texts(),
        layout: ScreenLayout = .sixteenByTwo, hasSendCommand: Bool = false, policy: ResendPolicy = .off
    ) {
        self.duration = duration
        self.texts = texts
        self.layout = layout
        self.hasSendCommand = hasSendCommand
        self.policy = policy
    }

    /// True for whole seconds from 1 to `maximumDurationSeconds`.
    public static func isValidDuration(_ duration: TimeSpan) -> Bool {
        duration.nanoseconds % oneSecond.nanoseconds == 0
            && duration >= oneSecond
            && duration <= TimeSpan.seconds(Int64(maximumDurationSeconds))
    }

    /// The duration in whole seconds: the first number the countdown shows.
    public var durationSeconds: Int {
        Int(duration.nanoseconds / oneSecond.nanoseconds)
    }

    /// The longest cooldown a send can get, in whole seconds: the duration, or the longest of the
    /// policy's escalating cooldowns.
    public var longestCooldownSeconds: Int {
        let longest = policy.cooldowns.max() ?? duration
        return Int(longest.nanoseconds / oneSecond.nanoseconds)
    }

    /// The texts' problems on this layout with the longest cooldown and lockout (`Texts.problems`).
    public var textProblems: [TextProblem] {
        texts.problems(
            columns: layout.columns, maxSeconds: longestCooldownSeconds,
            maxLockoutSeconds: policy.cap.map { Int($0.window.nanoseconds / oneSecond.nanoseconds) })
    }
}

/// Where the controller is. A countdown is a deadline on the monotonic clock (`until`), never a
/// counter. What the status line says is tracked apart (`status`).
public enum ControllerState: Hashable, Sendable {
    /// A press is accepted. `used` is false before the first press (label `sendLabel`) and true
    /// after (label `resendLabel`).
    case ready(used: Bool)
    /// The send command runs; the countdown to `until` runs meanwhile (it started at the press).
    /// Presses are ignored. Success leads to `cooldown` (same `until`); failure cancels the
    /// countdown and leads to `failed`.
    case sending(until: Instant)
    /// The countdown to `until` runs; presses are ignored and counted.
    case cooldown(until: Instant)
    /// The send command failed, timed out or could not start. A press is accepted.
    case failed
    /// The policy's cap of sends is reached: the label counts down to `until`, when sending is
    /// allowed again; presses are ignored, counted and logged.
    case lockedOut(until: Instant)
    /// `stop` was called: the stopped screen is shown and nothing more happens.
    case stopped
}

/// What happened, for the log.
public enum ControllerEvent: Hashable, Sendable {
    /// A press started a countdown (and the send command, when configured).
    case pressAccepted(at: Instant)
    /// A press came during a countdown, with `secondsLeft` on the display.
    case pressIgnored(at: Instant, secondsLeft: Int)
    /// A press came while the cap locks the button, `secondsLeft` before sending is allowed.
    case pressLockedOut(at: Instant, secondsLeft: Int)
    /// A countdown of `seconds` runs until `until`.
    case countdownStarted(until: Instant, seconds: Int)
    /// A countdown persisted by an earlier process resumes at start-up, `secondsLeft` shown.
    case countdownResumed(until: Instant, secondsLeft: Int)
    /// The countdown reached its deadline `at`.
    case countdownFinished(at: Instant)
    /// The send command failed at `at`: the countdown stops there.
    case countdownCancelled(at: Instant)
    /// The send command was asked for: the `attempt`-th send of the current run.
    case sendStarted(attempt: Int, sequence: Int, cooldownSeconds: Int)
    /// A send command ended. `superseded` is true when a newer send was started meanwhile (its
    /// outcome then only goes to the log).
    case sendFinished(CommandOutcome, at: Instant, superseded: Bool)
    /// The cap of sends is reached: sending is allowed again at `until`.
    case lockoutStarted(until: Instant)
    /// The lockout ended at `at`.
    case lockoutFinished(at: Instant)
    /// `stop` was called.
    case stopped
}

/// What the loop must do, in the order given.
public enum ControllerAction: Hashable, Sendable {
    /// Show this frame; emitted only when it differs from the last one shown.
    case show(ScreenText)
    /// Turn the LED on (true) or off; emitted only when that changes (always on `start`).
    case setLED(Bool)
    /// Write this state durably (the loop converts it to wall-clock time); emitted on every change
    /// that matters for a restart, before the send command it may come with.
    case persist(ControllerSnapshot)
    /// Start the configured send command (only when `hasSendCommand`): the `attempt`-th send of
    /// the current run, `sequence` to match its outcome (`sendFinished`), with a cooldown of
    /// `cooldownSeconds`.
    case runSendCommand(attempt: Int, sequence: Int, cooldownSeconds: Int)
    /// Log this event.
    case log(ControllerEvent)
}

/// The behaviour of the device (docs/architecture.md, "What the core promises") as a value: inputs and the current instant
/// go in, actions come out, plus `nextDeadline`. It never reads a clock.
///
/// With a cooldown of N, a press at t shows "Resend (N)" and turns the LED off; the shown number is
/// ceil((t + N - now) / 1 s), so it becomes N-1 at t + 1 s, ..., 01 at t + (N-1) s, and at exactly
/// t + N the button is ready again ("Resend", LED on). `nextDeadline` is the next instant the
/// display changes; a deadline handled late shows the right number for `now` and the following
/// deadlines stay on the same grid. Each call returns at most one `show`.
///
/// With a send command the status line reads `sendingTitle` from the press until the outcome
/// (`sendFinished`): success shows `sentTitle` while the countdown goes on from the press (it is
/// not restarted); failure, a time-out or a command that cannot start cancels the countdown and
/// shows `failedTitle` with `resendLabel`, LED on, a press accepted. An outcome arriving after the
/// countdown ended (the command outlived the cooldown) still sets the status line: the button is
/// ready from the end of the countdown with `sendingTitle` kept, then success shows `title` (the
/// screen a countdown ends on) and failure `failedTitle`. A press meanwhile starts a new send; the
/// older outcome is then only logged.
///
/// A send command that exits 75 (EX_TEMPFAIL, `SendResult.temporaryFailure`: rate-limited, no
/// network) sent nothing, so the send does not count: the countdown is cancelled as on a failure,
/// and the press is undone for the policy (the run of sends, its escalating cooldown and the cap's
/// window are those the press found; the label is `sendLabel` again if it was the first press). The
/// status line shows `tryLaterTitle`, the LED is on and a press is accepted. Such an outcome
/// arriving after the countdown ended only sets the status line.
///
/// The cooldown of each send and the cap of sends come from `ResendPolicy`.
public struct ResendController {
    public let config: ControllerConfig
    public private(set) var state: ControllerState = .ready(used: false)
    /// What the status line says (except when stopped).
    public private(set) var status: StatusLine = .title
    /// Presses ignored during countdowns and lockouts since start-up.
    public private(set) var ignoredPresses = 0

    private var started = false
    private var used = false
    /// The number on the label while counting down (at least 1 there).
    private var shownSeconds = 0
    /// The length in whole seconds of the running countdown or lockout: the most it shows.
    private var countdownSeconds = 0
    /// Sends in the current run, and when the run ends (nil while a countdown runs or no run goes).
    private var run = 0
    private var runEnds: Instant?
    /// Sends that still count against the cap, oldest first.
    private var sends: [Instant] = []
    /// The last send sequence issued, and the one whose outcome is awaited.
    private var sequence = 0
    private var awaited: Int?
    /// What the awaited send's press changed, to undo it when the send did not count.
    private var beforePress: (used: Bool, run: Int, runEnds: Instant?, at: Instant)?
    /// Something a restart needs changed since the last `persist`.
    private var changed = false
    /// What the display and the LED were last told; nil before `start`.
    private var shownFrame: ScreenText?
    private var ledOn: Bool?

    /// - Parameter config: a valid configuration (see `ControllerConfig`).
    public init(config: ControllerConfig) {
        precondition(
            ControllerConfig.isValidDuration(config.duration),
            "ResendController: duration must be whole seconds from 1 to a day")
        precondition(config.layout.isValid, "ResendController: invalid screen layout")
        precondition(config.policy.problems.isEmpty, "ResendController: invalid resend policy")
        self.config = config
    }

    /// The next instant at which `advance(to:)` must be called: the next change of the shown
    /// seconds, or the end of the countdown or lockout. Nil when idle: the loop then waits with no
    /// time-out.
    public var nextDeadline: Instant? {
        switch state {
        case .sending(let until), .cooldown(let until), .lockedOut(let until):
            return until - TimeSpan.seconds(Int64(shownSeconds - 1))
        case .ready, .failed, .stopped:
            return nil
        }
    }

    /// Sends still allowed by the cap's window at `now` (nil without a cap).
    public func sendsLeft(at now: Instant) -> Int? {
        guard let cap = config.policy.cap else { return nil }
        return max(0, cap.maxSends - sends.filter { $0 + cap.window > now }.count)
    }

    /// The state a restart needs, on this process's monotonic clock.
    public var snapshot: ControllerSnapshot {
        var snapshot = ControllerSnapshot(status: status, used: used, run: run, runEnds: runEnds, sends: sends)
        switch state {
        case .sending(let until), .cooldown(let until):
            snapshot.countdownEnd = until
            snapshot.countdownSeconds = countdownSeconds
            snapshot.runEnds = until + config.policy.runResetAfter
        case .ready, .failed, .lockedOut, .stopped:
            break
        }
        return snapshot
    }

    /// Shows the ready screen (title, `sendLabel`) and turns the LED on. Call once, first.
    public mutating func start(now: Instant) -> [ControllerAction] {
        start(now: now, restoring: nil)
    }

    /// Starts from `restored` (`PersistedState.resumed`, already clamped), or fresh when nil: a
    /// countdown still running resumes with its seconds and a lockout still due is shown; then the
    /// re-anchored state is persisted. Call once, first.
    public mutating func start(now: Instant, restoring restored: ControllerSnapshot?) -> [ControllerAction] {
        started = true
        shownFrame = nil
        ledOn = nil
        guard let restored else {
            state = .ready(used: false)
            status = .title
            return output(events: [])
        }
        var events: [ControllerEvent] = []
        used = restored.used
        status = restored.status == .sending ? .title : restored.status
        run = restored.run
        runEnds = restored.runEnds
        sends = restored.sends.filter { $0 <= now }
        if let end = restored.countdownEnd, end > now {
            countdownSeconds = max(restored.countdownSeconds, 1)
            shownSeconds = min(wholeSecondsLeft(end - now), countdownSeconds)
            state = .cooldown(until: end)
            runEnds = nil
            events.append(.countdownResumed(until: end, secondsLeft: shownSeconds))
        } else {
            if status == .sent { status = .title }
            enterReadyOrLockout(at: now, now: now, events: &events)
        }
        changed = true
        return output(events: events)
    }

    /// A debounced press at `now`. Accepted when ready or failed: starts the countdown to
    /// now + the cooldown (and the send command when configured). Ignored and counted during a
    /// countdown or a lockout. A countdown whose end is at or before `now` is finished first, so a
    /// press at exactly the end is accepted even when `advance(to:)` was not called yet.
    public mutating func press(now: Instant) -> [ControllerAction] {
        precondition(started, "ResendController: press before start")
        var events: [ControllerEvent] = []
        settle(now: now, events: &events)
        var send: ControllerAction?
        switch state {
        case .ready, .failed:
            beforePress = (used, run, runEnds, now)
            if let ends = runEnds, now >= ends { run = 0 }
            run += 1
            runEnds = nil
            let cooldown = config.policy.cooldown(forAttempt: run, fallback: config.duration)
            let until = now + cooldown
            countdownSeconds = Int(cooldown.nanoseconds / oneSecond.nanoseconds)
            shownSeconds = countdownSeconds
            used = true
            if config.policy.cap != nil { sends.append(now) }
            events.append(.pressAccepted(at: now))
            events.append(.countdownStarted(until: until, seconds: countdownSeconds))
            if config.hasSendCommand {
                sequence += 1
                awaited = sequence
                state = .sending(until: until)
                status = .sending
                events.append(.sendStarted(attempt: run, sequence: sequence, cooldownSeconds: countdownSeconds))
                send = .runSendCommand(attempt: run, sequence: sequence, cooldownSeconds: countdownSeconds)
            } else {
                state = .cooldown(until: until)
                status = .title
            }
            changed = true
        case .sending, .cooldown:
            ignoredPresses += 1
            events.append(.pressIgnored(at: now, secondsLeft: shownSeconds))
        case .lockedOut:
            ignoredPresses += 1
            events.append(.pressLockedOut(at: now, secondsLeft: shownSeconds))
        case .stopped:
            return []
        }
        return output(events: events, send: send)
    }

    /// The send command with `outcome.sequence` ended at `now` (see the type's documentation).
    /// An outcome of a superseded or unknown send is only logged.
    public mutating func sendFinished(_ outcome: CommandOutcome, now: Instant) -> [ControllerAction] {
        precondition(started, "ResendController: sendFinished before start")
        if case .stopped = state { return [] }
        var events: [ControllerEvent] = []
        settle(now: now, events: &events)
        guard outcome.sequence == awaited else {
            events.append(.sendFinished(outcome, at: now, superseded: true))
            return output(events: events)
        }
        awaited = nil
        events.append(.sendFinished(outcome, at: now, superseded: false))
        let result = SendResult(outcome.ending)
        switch state {
        case .sending(let until):
            if result == .sent {
                state = .cooldown(until: until)
                status = .sent
            } else if result == .temporaryFailure, let before = beforePress {
                // Nothing was sent: the press is undone for the policy.
                events.append(.countdownCancelled(at: now))
                used = before.used
                run = before.run
                runEnds = before.runEnds
                if let index = sends.lastIndex(of: before.at) { sends.remove(at: index) }
                status = .tryLater
                enterReadyOrLockout(at: now, now: now, events: &events)
            } else {
                events.append(.countdownCancelled(at: now))
                status = .failed
                runEnds = now + config.policy.runResetAfter
                enterReadyOrLockout(at: now, now: now, events: &events)
            }
        case .ready, .failed, .lockedOut:
            // The countdown ended before the outcome came: only the status line changes.
            switch result {
            case .sent: status = .title
            case .temporaryFailure: status = .tryLater
            case .failed: status = .failed
            }
            if case .ready = state, result == .failed { state = .failed }
        case .cooldown, .stopped:
            break
        }
        changed = true
        return output(events: events)
    }

    /// The clock reached `nextDeadline` (possibly late, possibly several deadlines at once):
    /// updates the countdown for `now`. Calling early or when idle returns no actions.
    public mutating func advance(to now: Instant) -> [ControllerAction] {
        precondition(started, "ResendController: advance before start")
        var events: [ControllerEvent] = []
        settle(now: now, events: &events)
        return output(events: events)
    }

    /// Shows the stopped screen (`stoppedTitle`, `stoppedLabel`) and turns the LED off. Later
    /// calls return no actions. Persists nothing: the last persisted state stays valid.
    public mutating func stop(now: Instant) -> [ControllerAction] {
        if case .stopped = state { return [] }
        state = .stopped
        changed = false
        return output(events: [.stopped])
    }

    /// Brings the countdown or lockout up to `now`: finishes it at its deadline or updates the
    /// shown seconds.
    private mutating func settle(now: Instant, events: inout [ControllerEvent]) {
        switch state {
        case .sending(let until), .cooldown(let until):
            if now >= until {
                events.append(.countdownFinished(at: until))
                runEnds = until + config.policy.runResetAfter
                // Still sending: the outcome is unknown and keeps `sendingTitle` until it comes.
                if status == .sent { status = .title }
                changed = true
                enterReadyOrLockout(at: until, now: now, events: &events)
            } else {
                // min(): an instant before the press (a debounced press stamped earlier than the
                // last advance) must not show more than the countdown's length.
                shownSeconds = min(wholeSecondsLeft(until - now), countdownSeconds)
            }
        case .lockedOut(let until):
            if now >= until {
                events.append(.lockoutFinished(at: until))
                state = status == .failed ? .failed : .ready(used: used)
                changed = true
            } else {
                shownSeconds = min(wholeSecondsLeft(until - now), countdownSeconds)
            }
        case .ready, .failed, .stopped:
            break
        }
    }

    /// At `instant` (a countdown's end or a failure, not after `now`) the button would be ready
    /// again: it is, unless the cap of sends locks it until later.
    private mutating func enterReadyOrLockout(at instant: Instant, now: Instant, events: inout [ControllerEvent]) {
        let readyState: ControllerState = status == .failed ? .failed : .ready(used: used)
        guard let cap = config.policy.cap else {
            state = readyState
            return
        }
        sends.removeAll { $0 + cap.window <= instant }
        guard sends.count >= cap.maxSends else {
            state = readyState
            return
        }
        let allowed = sends[sends.count - cap.maxSends] + cap.window
        events.append(.lockoutStarted(until: allowed))
        state = .lockedOut(until: allowed)
        countdownSeconds = Int(cap.window.nanoseconds / oneSecond.nanoseconds)
        shownSeconds = countdownSeconds
        settle(now: now, events: &events)
    }

    /// The events as log actions, then the frame and the LED when they changed, then the state
    /// to persist, then the send command.
    private mutating func output(events: [ControllerEvent], send: ControllerAction? = nil) -> [ControllerAction] {
        var actions = events.map { ControllerAction.log($0) }
        let frame = currentFrame()
        if frame != shownFrame {
            shownFrame = frame
            actions.append(.show(frame))
        }
        let led = currentLED()
        if led != ledOn {
            ledOn = led
            actions.append(.setLED(led))
        }
        if changed {
            changed = false
            actions.append(.persist(snapshot))
        }
        if let send {
            actions.append(send)
        }
        return actions
    }

    private func currentFrame() -> ScreenText {
        let texts = config.texts
        let label: String
        switch state {
        case .ready(let used):
            label = used ? texts.resendLabel : texts.sendLabel
        case .sending, .cooldown:
            label = texts.expand(texts.countdownLabel, seconds: shownSeconds)
        case .failed:
            label = texts.resendLabel
        case .lockedOut:
            label = texts.expand(texts.lockoutLabel, seconds: shownSeconds)
        case .stopped:
            return config.layout.frame(status: texts.stoppedTitle, label: texts.stoppedLabel)
        }
        let line: String
        switch status {
        case .title: line = texts.title
        case .sending: line = texts.sendingTitle
        case .sent: line = texts.sentTitle
        case .failed: line = texts.failedTitle
        case .tryLater: line = texts.tryLaterTitle
        }
        return config.layout.frame(status: line, label: label)
    }

    /// The LED lights when a press would be accepted.
    private func currentLED() -> Bool {
        switch state {
        case .ready, .failed: return true
        case .sending, .cooldown, .lockedOut, .stopped: return false
        }
    }
}
