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

    /// The default cooldown: one minute, the "Resend (59)" of phone apps.
    public static let defaultDuration = TimeSpan.seconds(60)
    /// The longest cooldown accepted, one day: longer is surely a configuration mistake, and it
    /// keeps the seconds count within a 32-bit `Int`.
    public static let maximumDurationSeconds = 86_400

    public init(duration: TimeSpan = ControllerConfig.defaultDuration, texts: Texts = Texts(),
                layout: ScreenLayout = .sixteenByTwo, hasSendCommand: Bool = false) {
        self.duration = duration
        self.texts = texts
        self.layout = layout
        self.hasSendCommand = hasSendCommand
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

    /// The texts' problems on this layout with this duration (`Texts.problems`).
    public var textProblems: [TextProblem] {
        texts.problems(columns: layout.columns, maxSeconds: durationSeconds)
    }
}

/// Where the controller is. A countdown is a deadline on the monotonic clock (`until`), never a
/// counter.
public enum ControllerState: Hashable, Sendable {
    /// A press is accepted. `used` is false before the first press (label `sendLabel`) and true
    /// after a countdown (label `resendLabel`).
    case ready(used: Bool)
    /// The send command runs; the countdown to `until` runs meanwhile. Presses are ignored.
    /// The send outcome (`sendFinished(success:)`, a later issue) leads to `cooldown` or `failed`;
    /// until then, reaching `until` still sending counts as a time-out and leads to `failed`.
    case sending(until: Instant)
    /// The countdown to `until` runs; presses are ignored and counted.
    case cooldown(until: Instant)
    /// The send command failed or timed out. A press is accepted.
    case failed
    /// `stop` was called: the stopped screen is shown and nothing more happens.
    case stopped
}

/// What happened, for the log.
public enum ControllerEvent: Hashable, Sendable {
    /// A press started a countdown.
    case pressAccepted(at: Instant)
    /// A press came during a countdown, with `secondsLeft` on the display.
    case pressIgnored(at: Instant, secondsLeft: Int)
    /// A countdown runs until `until`.
    case countdownStarted(until: Instant)
    /// The countdown reached its deadline `at`; the button is ready again.
    case countdownFinished(at: Instant)
    /// The countdown reached its deadline `at` while the send command was still running.
    case sendTimedOut(at: Instant)
    /// `stop` was called.
    case stopped
}

/// What the loop must do, in the order given.
public enum ControllerAction: Hashable, Sendable {
    /// Show this frame; emitted only when it differs from the last one shown.
    case show(ScreenText)
    /// Turn the LED on (true) or off; emitted only when that changes (always on `start`).
    case setLED(Bool)
    /// Start the configured send command (only when `hasSendCommand`).
    case runSendCommand
    /// Log this event.
    case log(ControllerEvent)
}

/// The behaviour of the device (DESIGN.md section 1) as a value: inputs and the current instant
/// go in, actions come out, plus `nextDeadline`. It never reads a clock.
///
/// With duration N, a press at t shows "Resend (N)" and turns the LED off; the shown number is
/// ceil((t + N - now) / 1 s), so it becomes N-1 at t + 1 s, ..., 01 at t + (N-1) s, and at exactly
/// t + N the button is ready again ("Resend", LED on). `nextDeadline` is the next instant the
/// display changes; a deadline handled late shows the right number for `now` and the following
/// deadlines stay on the same grid. Each call returns at most one `show`.
public struct ResendController {
    public let config: ControllerConfig
    public private(set) var state: ControllerState = .ready(used: false)
    /// Presses ignored during countdowns since start-up.
    public private(set) var ignoredPresses = 0

    private var started = false
    /// The number on the countdown label while sending or in cooldown (at least 1 there).
    private var shownSeconds = 0
    /// What the display and the LED were last told; nil before `start`.
    private var shownFrame: ScreenText?
    private var ledOn: Bool?

    /// - Parameter config: a valid configuration (see `ControllerConfig`).
    public init(config: ControllerConfig) {
        precondition(ControllerConfig.isValidDuration(config.duration),
                     "ResendController: duration must be whole seconds from 1 to a day")
        precondition(config.layout.isValid, "ResendController: invalid screen layout")
        self.config = config
    }

    /// The next instant at which `advance(to:)` must be called: the next change of the shown
    /// seconds, or the end of the countdown. Nil when idle: the loop then waits with no time-out.
    public var nextDeadline: Instant? {
        switch state {
        case .sending(let until), .cooldown(let until):
            return until - TimeSpan.seconds(Int64(shownSeconds - 1))
        case .ready, .failed, .stopped:
            return nil
        }
    }

    /// Shows the ready screen (title, `sendLabel`) and turns the LED on. Call once, first.
    public mutating func start(now: Instant) -> [ControllerAction] {
        started = true
        state = .ready(used: false)
        shownFrame = nil
        ledOn = nil
        return output(events: [])
    }

    /// A debounced press at `now`. Accepted when ready or failed: starts the countdown to
    /// now + duration (and the send command when configured). Ignored and counted during a
    /// countdown. A countdown whose end is at or before `now` is finished first, so a press at
    /// exactly the end is accepted even when `advance(to:)` was not called yet.
    public mutating func press(now: Instant) -> [ControllerAction] {
        precondition(started, "ResendController: press before start")
        var events: [ControllerEvent] = []
        settle(now: now, events: &events)
        var runSend = false
        switch state {
        case .ready, .failed:
            let until = now + config.duration
            state = config.hasSendCommand ? .sending(until: until) : .cooldown(until: until)
            shownSeconds = config.durationSeconds
            runSend = config.hasSendCommand
            events.append(.pressAccepted(at: now))
            events.append(.countdownStarted(until: until))
        case .sending, .cooldown:
            ignoredPresses += 1
            events.append(.pressIgnored(at: now, secondsLeft: shownSeconds))
        case .stopped:
            return []
        }
        return output(events: events, runSendCommand: runSend)
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
    /// calls return no actions.
    public mutating func stop(now: Instant) -> [ControllerAction] {
        if case .stopped = state { return [] }
        state = .stopped
        return output(events: [.stopped])
    }

    /// Brings the countdown up to `now`: finishes it at its deadline or updates the shown seconds.
    private mutating func settle(now: Instant, events: inout [ControllerEvent]) {
        switch state {
        case .sending(let until), .cooldown(let until):
            if now >= until {
                if case .sending = state {
                    state = .failed
                    events.append(.sendTimedOut(at: until))
                } else {
                    state = .ready(used: true)
                    events.append(.countdownFinished(at: until))
                }
                shownSeconds = 0
            } else {
                // min(): an instant before the press (a debounced press stamped earlier than the
                // last advance) must not show more than the duration.
                shownSeconds = min(wholeSecondsLeft(until - now), config.durationSeconds)
            }
        case .ready, .failed, .stopped:
            break
        }
    }

    /// The events as log actions, then the frame and the LED when they changed, then the send
    /// command.
    private mutating func output(events: [ControllerEvent], runSendCommand: Bool = false) -> [ControllerAction] {
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
        if runSendCommand {
            actions.append(.runSendCommand)
        }
        return actions
    }

    private func currentFrame() -> ScreenText {
        let texts = config.texts
        let status: String
        let label: String
        switch state {
        case .ready(let used):
            status = texts.title
            label = used ? texts.resendLabel : texts.sendLabel
        case .sending:
            status = texts.sendingTitle
            label = texts.expand(texts.countdownLabel, seconds: shownSeconds)
        case .cooldown:
            status = config.hasSendCommand ? texts.sentTitle : texts.title
            label = texts.expand(texts.countdownLabel, seconds: shownSeconds)
        case .failed:
            status = texts.failedTitle
            label = texts.resendLabel
        case .stopped:
            status = texts.stoppedTitle
            label = texts.stoppedLabel
        }
        return config.layout.frame(status: status, label: label)
    }

    /// The LED lights when a press would be accepted.
    private func currentLED() -> Bool {
        switch state {
        case .ready, .failed: return true
        case .sending, .cooldown, .stopped: return false
        }
    }
}
