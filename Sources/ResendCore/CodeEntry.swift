import HAL

/// The part of the flow's state that must survive a restart, with its instants on the clock
/// `Time`: `EntrySnapshot` on the monotonic clock of the running process (`CodeEntry.snapshot`),
/// `PersistedEntryState` on the wall clock for the state file, with the clamp applied at start-up.
/// Never holds the code.
public struct EntryRecord<Time: Hashable & Sendable>: Hashable, Sendable {
    /// Wrong codes in the current round, counting a code being checked (a try is recorded before
    /// its check, and given back when the check fails without an answer).
    public var failures: Int
    /// Lockouts started since the last accepted code: the next lockout is `lockouts[rounds]`.
    public var rounds: Int
    /// The end of the running lockout; nil when none runs.
    public var lockoutEnd: Time?
    /// The lockout's full length in whole seconds (0 when none runs): a restart never resumes it
    /// with more.
    public var lockoutSeconds: Int
    /// True while a code was sent and not yet accepted or expired (the field is open, or opens
    /// after the lockout).
    public var open: Bool
    /// When the sent code stops being valid; nil without a validity window or when not open.
    public var validUntil: Time?

    public init(
        failures: Int = 0, rounds: Int = 0, lockoutEnd: Time? = nil, lockoutSeconds: Int = 0,
        open: Bool = false, validUntil: Time? = nil
    ) {
        self.failures = failures
        self.rounds = rounds
        self.lockoutEnd = lockoutEnd
        self.lockoutSeconds = lockoutSeconds
        self.open = open
        self.validUntil = validUntil
    }

    /// The same record with each instant converted by `convert` (from one clock to the other).
    public func convertingTimes<Other>(_ convert: (Time) -> Other) -> EntryRecord<Other> {
        EntryRecord<Other>(
            failures: failures, rounds: rounds, lockoutEnd: lockoutEnd.map(convert), lockoutSeconds: lockoutSeconds, open: open,
            validUntil: validUntil.map(convert))
    }
}

/// The flow's record on the monotonic clock of the running process (`CodeEntry.snapshot`).
public typealias EntrySnapshot = EntryRecord<Instant>

/// Where the flow is.
public enum EntryState: Hashable, Sendable {
    /// No code to enter: before the first send, and after an accepted code.
    case idle
    /// The field is open.
    case entering
    /// The verify command runs for the submission `sequence`; keys are ignored.
    case verifying(sequence: Int)
    /// The success screen shows until `until`.
    case accepted(until: Instant)
    /// Too many wrong codes: keys are ignored until `until`.
    case lockedOut(until: Instant)
    /// The code's validity window ended: keys are ignored until the next send.
    case expired
    case stopped
}

/// Why the field was emptied without a submission.
public enum ClearReason: Hashable, Sendable {
    /// `*` was held for `holdToClear`.
    case held
    /// No key for `entryTimeout`.
    case timeout
}

/// What the flow did, for the log. Never a digit: only lengths and outcomes.
public enum EntryEvent: Hashable, Sendable {
    /// A code was sent: the field opened (or opens after a lockout), valid until `validUntil`.
    case opened(validUntil: Instant?)
    case digitEntered(length: Int)
    /// A digit was typed into a full field and dropped.
    case fieldFull(length: Int)
    case deleted(length: Int)
    case cleared(ClearReason, length: Int)
    /// `#` with fewer than `minLength` digits.
    case tooShort(length: Int)
    /// A code of `length` digits went to the verify command.
    case submitted(length: Int, sequence: Int)
    /// The verify command answered.
    case verified(VerifyResult, sequence: Int)
    /// An answer for a submission that is not awaited (after `stop`, or unknown).
    case staleVerify(sequence: Int)
    /// A wrong code; `attemptsLeft` before a lockout (nil without a limit).
    case rejected(attemptsLeft: Int?)
    case lockoutStarted(until: Instant, seconds: Int, round: Int)
    case lockoutResumed(until: Instant, secondsLeft: Int)
    case lockoutFinished(at: Instant)
    case expired(at: Instant)
    /// The state could not be written: code entry is closed until a write succeeds. `droppedCheck`
    /// is a submission whose try could not be recorded, so its verify command never ran.
    case closed(at: Instant, droppedCheck: Int?)
    /// A write succeeded again: code entry is open again.
    case reopened(at: Instant)
    /// The output line went active until `until`.
    case outputPulsed(until: Instant)
    case outputReleased(at: Instant)
    /// The success screen ended; the flow is idle again.
    case finished(at: Instant)
    /// A key press the flow does not take in its state (which key is not said: it may be a digit).
    case keyIgnored(at: Instant)
    case stopped
}

/// What the loop must do, in the order given.
public enum EntryAction: Hashable, Sendable {
    /// Start the verify command with this request (the code on its standard input). Only ever
    /// emitted by `stateWritten(true, ...)`: the try it counts is on disk first.
    case runVerify(VerifyRequest)
    /// Set the output line (door strike, relay) active or inactive. Emitted inactive at `start`
    /// and `stop` when an output is configured, and at the end of every pulse.
    case setOutput(Bool)
    /// Write this state durably (wall clock conversion in the loop), then report whether that
    /// worked with `stateWritten(_:now:)`.
    case persist(EntrySnapshot)
    case log(EntryEvent)
}

/// What the flow shows. `status` and `field` are lines 3 and 4 of a 4-row display; `compact` is
/// line 1 of a 2-row display (line 2 stays the resend controller's label) unless `fullScreen`, when
/// `status` and `field` take both lines of a 2-row display (the success screen).
public struct EntryView: Hashable, Sendable {
    public var status: String
    public var field: String
    public var compact: String
    public var fullScreen: Bool
    /// The cell of `field` (counted in Unicode scalars from 0) that shows the last key typed, or
    /// the first cell after the prefix while the field is empty: where a key's echo lands. Nil
    /// when the field takes no keys (verifying, accepted, locked out, expired).
    public var cursor: Int?

    public init(status: String, field: String, compact: String, fullScreen: Bool = false, cursor: Int? = nil) {
        self.status = status
        self.field = field
        self.compact = compact
        self.fullScreen = fullScreen
        self.cursor = cursor
    }
}

/// The code-entry flow as a value, beside `ResendController` and built the same way:
/// inputs and `now` go in, actions come out, plus `nextDeadline`; it never reads a clock. What it
/// shows is `view` (nil when it shows nothing and the resend controller has the whole screen).
///
/// - `codeSent` opens the field (a send succeeded). Digits append, `*` deletes the last (held for
///   `holdToClear`, clears the field), `#` submits at `minLength` or more; `submitAtMaxLength`
///   submits on the last digit. No key for `entryTimeout` clears the field.
/// - A submission counts as a wrong code at once and is written (`persist`); only when the loop
///   reports the write done (`stateWritten(true, ...)`) does it become `runVerify`, so cutting the
///   power during a check never yields a free try (the rule of every trusted PIN counter). The
///   field is overwritten at once. An accepted code resets the count, a failed or timed-out check
///   gives the try back (written too); a stop during a check keeps it. The answer
///   (`verifyFinished`): accepted shows the success screen for `successDuration` and pulses the
///   output for `pulse` (each bounded by its own deadline), then the flow is idle; rejected shows
///   `wrongCode` with the attempts left; after `maxAttempts` wrong codes a lockout of the round's
///   length counts down, and the next round's lockout is longer. A failed or timed-out check is
///   shown as such and counts no attempt.
/// - The code is valid for `validity` after its send: then entry ends with "Code expired, press
///   Resend" (a check already running is answered first).
/// - A code made on the device (`config.codeMadeOnDevice`): each send draws a new code
///   (`issueCode`; the last one stops working), a submission is compared with it in constant time
///   once its try is written (no `runVerify`), an accepted code is used up, and a restart forgets
///   it: entry shows "Code expired, press Resend" until the next send.
/// - Opens without a send (`config.opensWithoutSend`): a digit, `*` or `#` opens the field while
///   idle (a digit is taken as typed); no validity window, attempts and lockouts as always.
/// - Keys are taken only as debounced presses and releases (`KeyDebouncer`).
/// - Fails closed: when a write of the state fails (`stateWritten(false, ...)`), code entry closes
///   (`closedTitle`/`closedLabel`, keys ignored, a submission waiting for its write is dropped
///   unchecked) and the state is written again after 1 s, doubling to 60 s, until a write
///   succeeds; then the field opens again, empty. Lockouts and windows keep running meanwhile.
public struct CodeEntry {
    public let config: EntryConfig
    public private(set) var state: EntryState = .idle

    /// The digits typed, in one buffer of `maxLength` bytes that is overwritten on every clear.
    private var buffer: [UInt8]
    private var length = 0
    private var started = false
    private var open = false
    private var validUntil: Instant?
    private var failures = 0
    private var rounds = 0
    private var lockoutSeconds = 0
    private var shownSeconds = 0
    private var sequence = 0
    /// The length of the code being checked, for the field shown meanwhile.
    private var submittedLength = 0
    private var notice: Notice?
    private var lastKey: Instant?
    private var holdClearAt: Instant?
    private var revealUntil: Instant?
    private var outputUntil: Instant?
    private var changed = false
    /// The output pulse ended: `setOutput(false)` goes first in the next actions.
    private var releaseOutput = false
    /// A submission whose try is being written: it goes to the verify command once the write is
    /// reported done, and is wiped if it failed.
    private var awaitingRecord: VerifyRequest?
    /// The last write of the state failed: code entry is closed.
    private var storageFault = false
    /// When to write the state again while closed, and the wait after that one.
    private var retryAt: Instant?
    private var retryDelay = CodeEntry.firstStateRetry

    /// The first retry of a failed state write; each further one waits twice as long, at most
    /// `longestStateRetry`.
    public static let firstStateRetry = TimeSpan.seconds(1)
    public static let longestStateRetry = TimeSpan.seconds(60)

    /// A notice about a key shows over the field (2-row display) until then.
    private var noticeUntil: Instant?

    private enum Notice: Hashable {
        case wrong(attemptsLeft: Int?)
        case tooShort
        case tooLong
        case failed
        case timedOut
        case tryLater
    }

    /// The code made on the device for the last send (`config.codeMadeOnDevice`); none otherwise.
    private var deviceCode: DeviceCode

    public init(config: EntryConfig) {
        precondition(config.problems(columns: Int.max).isEmpty, "CodeEntry: invalid entry configuration")
        self.config = config
        self.buffer = Array(repeating: 0, count: config.maxLength)
        self.deviceCode = DeviceCode(capacity: config.maxLength)
    }

    /// A send starts (`config.codeMadeOnDevice`): a new code of `config.codeLength` digits is drawn
    /// from `random` and replaces the last one, which stops working at once. Returns it for the
    /// send command's standard input (the runner wipes it). Throws when `random` fails; then no
    /// code is held and the send must not run.
    public mutating func issueCode<Random: RandomSource>(from random: inout Random) throws(HALError) -> SecretCode {
        precondition(config.codeMadeOnDevice, "CodeEntry: issueCode without a code made on the device")
        return try deviceCode.draw(length: config.codeLength, from: &random)
    }

    /// True while a code made on the device is held (for tests; never its digits).
    public var holdsDeviceCode: Bool { deviceCode.isSet }

    /// The digits in the field now (for tests and the display; never log it).
    public var fieldLength: Int { length }

    /// True while code entry is closed because the state could not be written.
    public var isClosed: Bool { storageFault }

    /// Wrong codes still allowed before a lockout (nil without a limit).
    public var attemptsLeft: Int? { config.maxAttempts.map { max(0, $0 - failures) } }

    /// The state a restart needs (never the code).
    public var snapshot: EntrySnapshot {
        var snapshot = EntrySnapshot(failures: failures, rounds: rounds, open: open, validUntil: open ? validUntil : nil)
        if case .lockedOut(let until) = state {
            snapshot.lockoutEnd = until
            snapshot.lockoutSeconds = lockoutSeconds
        }
        return snapshot
    }

    /// The next instant `advance(to:)` must be called at; nil when nothing is timed.
    public var nextDeadline: Instant? {
        var next = outputUntil
        switch state {
        case .entering:
            next = earliest(next, validUntil)
            next = earliest(next, holdClearAt)
            next = earliest(next, revealUntil)
            next = earliest(next, noticeUntil)
            if length > 0, let lastKey, let timeout = config.entryTimeout { next = earliest(next, lastKey + timeout) }
        case .accepted(let until):
            next = earliest(next, until)
        case .lockedOut(let until):
            next = earliest(next, until - TimeSpan.seconds(Int64(shownSeconds - 1)))
        case .idle, .verifying, .expired, .stopped:
            break
        }
        if storageFault && state != .stopped { next = earliest(next, retryAt) }
        return next
    }

    /// Starts the flow, fresh or from `restored` (`PersistedEntryState.resumed`, already clamped):
    /// a lockout still due resumes its countdown; an open field with time left opens again, empty.
    /// The output line is driven inactive first. Call once, first.
    public mutating func start(now: Instant, restoring restored: EntrySnapshot? = nil) -> [EntryAction] {
        precondition(!started, "CodeEntry: start called twice")
        started = true
        var actions: [EntryAction] = config.pulse == nil ? [] : [.setOutput(false)]
        var events: [EntryEvent] = []
        if let restored {
            failures = max(0, restored.failures)
            rounds = max(0, restored.rounds)
            open = restored.open
            validUntil = restored.validUntil
            // A code made on the device died with the old process: the field cannot open again.
            let codeForgotten = config.codeMadeOnDevice && restored.open
            if codeForgotten {
                open = false
                validUntil = nil
            }
            if let end = restored.lockoutEnd, end > now {
                lockoutSeconds = max(1, restored.lockoutSeconds)
                shownSeconds = min(wholeSecondsLeft(end - now), lockoutSeconds)
                state = .lockedOut(until: end)
                events.append(.lockoutResumed(until: end, secondsLeft: shownSeconds))
            } else if let max = config.maxAttempts, failures >= max {
                // The last try of a round was recorded before its check, whose answer died with
                // the old process: it counts, and its lockout starts now.
                startLockout(now: now, events: &events)
            } else if open {
                state = .entering
                settle(now: now, events: &events)
            } else if codeForgotten {
                state = .expired
                events.append(.expired(at: now))
            }
            changed = true
        }
        actions += output(events)
        return actions
    }

    /// A code was sent at `now`: the field opens, empty, valid until now + `validity`. During a
    /// lockout it opens when the lockout ends; during a check the answer comes first; while code
    /// entry is closed, when it opens again.
    public mutating func codeSent(now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: codeSent before start")
        if state == .stopped { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        open = true
        validUntil = config.opensWithoutSend ? nil : config.validity.map { now + $0 }
        // While closed the glass says so and keys are ignored: the field opens for real only
        // when a write succeeds again (`reopened`), so the log says nothing of it before.
        if !storageFault { events.append(.opened(validUntil: validUntil)) }
        switch state {
        case .idle, .entering, .expired, .accepted:
            wipe()
            notice = nil
            holdClearAt = nil
            state = .entering
        case .verifying, .lockedOut, .stopped:
            break
        }
        changed = true
        return output(events)
    }

    /// A send was started at `now` (its outcome is not known yet): a "Code expired" notice gives
    /// way to the resend controller's screen; an open field stays open.
    public mutating func sendStarted(now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: sendStarted before start")
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        if state == .expired { state = .idle }
        return output(events)
    }

    /// A debounced key change at `now` (`KeyDebouncer`). Presses of digits, `*` and `#` act while
    /// the field is open; a release of `*` ends its hold; other presses are logged as ignored.
    public mutating func key(_ event: KeyEvent, now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: key before start")
        if state == .stopped { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        if event.edge == .released {
            if event.key == .star { holdClearAt = nil }
            return output(events)
        }
        if config.opensWithoutSend && state == .idle && !storageFault
            && (event.key.digitValue != nil || event.key == .star || event.key == .pound)
        {
            // Nothing is sent in this mode: a key opens the field (and counts as typed).
            open = true
            validUntil = nil
            wipe()
            notice = nil
            holdClearAt = nil
            state = .entering
            changed = true
            events.append(.opened(validUntil: nil))
        }
        guard state == .entering && !storageFault else {
            events.append(.keyIgnored(at: now))
            return output(events)
        }
        if let digit = event.key.digitValue {
            if length < config.maxLength {
                buffer[length] = UInt8(ascii: "0") + digit
                length += 1
                notice = nil
                noticeUntil = nil
                lastKey = now
                if case .shownBriefly(let span) = config.echo { revealUntil = now + span }
                events.append(.digitEntered(length: length))
                if length == config.maxLength && config.submitAtMaxLength {
                    submit(events: &events)
                }
            } else {
                // Not taken, and said so: a code longer than the field is never cut short unseen.
                notice = .tooLong
                noticeUntil = now + EntryConfig.noticeDuration
                lastKey = now
                events.append(.fieldFull(length: length))
            }
        } else if event.key == .star {
            notice = nil
            noticeUntil = nil
            lastKey = now
            revealUntil = nil
            holdClearAt = now + config.holdToClear
            if length > 0 {
                length -= 1
                buffer[length] = 0
                events.append(.deleted(length: length))
            }
        } else if event.key == .pound {
            if length >= config.minLength {
                submit(events: &events)
            } else {
                notice = .tooShort
                events.append(.tooShort(length: length))
            }
        } else {
            events.append(.keyIgnored(at: now))
        }
        return output(events)
    }

    /// The loop wrote the state (`written`), or failed to, after the `persist` actions it was
    /// given at `now` (one report for all of them: true only when every write succeeded). A
    /// submission whose try was written goes to the verify command (`runVerify`). A failure closes
    /// code entry (see the type) and drops such a submission unchecked, its try not taken (the
    /// file still holds the count before it); a success while closed opens it again.
    public mutating func stateWritten(_ written: Bool, now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: stateWritten before start")
        if state == .stopped { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        var request: VerifyRequest?
        if written {
            if storageFault {
                storageFault = false
                retryAt = nil
                retryDelay = CodeEntry.firstStateRetry
                events.append(.reopened(at: now))
            }
            request = awaitingRecord
            awaitingRecord = nil
        } else {
            var dropped: Int?
            if var pending = awaitingRecord {
                awaitingRecord = nil
                pending.code.wipe()
                dropped = pending.sequence
                failures = max(0, failures - 1)
                state = .entering
                lastKey = nil
            }
            if !storageFault || dropped != nil {
                storageFault = true
                wipe()
                notice = nil
                holdClearAt = nil
                events.append(.closed(at: now, droppedCheck: dropped))
            }
            // The next retry, unless one is already due (a write of another change failed
            // meanwhile: it does not push the retry back).
            if retryAt == nil {
                retryAt = now + retryDelay
                retryDelay = min(retryDelay + retryDelay, CodeEntry.longestStateRetry)
            }
            settle(now: now, events: &events)
        }
        var actions = output(events)
        if var request {
            if config.codeMadeOnDevice {
                // Checked here, in constant time; no verify command runs.
                let result: VerifyResult = deviceCode.matches(request.code.digits, length: request.code.count) ? .accepted : .rejected
                request.code.wipe()
                actions += verifyFinished(VerifyOutcome(sequence: request.sequence, result: result), now: now)
            } else {
                actions.append(.runVerify(request))
            }
        }
        return actions
    }

    /// The verify command for `outcome.sequence` answered at `now` (see the type's documentation).
    public mutating func verifyFinished(_ outcome: VerifyOutcome, now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: verifyFinished before start")
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        guard state == .verifying(sequence: outcome.sequence) else {
            events.append(.staleVerify(sequence: outcome.sequence))
            return state == .stopped ? [.log(.staleVerify(sequence: outcome.sequence))] : output(events)
        }
        events.append(.verified(outcome.result, sequence: outcome.sequence))
        var pulse: [EntryAction] = []
        switch outcome.result {
        case .accepted:
            failures = 0
            rounds = 0
            open = false
            deviceCode.wipe()  // used once
            validUntil = nil
            changed = true
            state = .accepted(until: now + config.successDuration)
            if let span = config.pulse {
                outputUntil = now + span
                events.append(.outputPulsed(until: now + span))
                pulse = [.setOutput(true)]
            }
        case .rejected:
            // The try was counted (and written) at the submission.
            if let max = config.maxAttempts, failures >= max {
                events.append(.rejected(attemptsLeft: 0))
                startLockout(now: now, events: &events)
            } else {
                let left = config.maxAttempts.map { $0 - failures }
                events.append(.rejected(attemptsLeft: left))
                notice = .wrong(attemptsLeft: left)
                reopen(now: now, events: &events)
            }
        case .expired:
            // The service no longer knows the code: it was not judged, so the try is given back,
            // and entry waits for the next send.
            failures = max(0, failures - 1)
            expire(at: now, events: &events)
        case .failed, .timedOut, .temporaryFailure:
            // No answer about the code: the try counted at the submission is given back (written:
            // if that write fails, entry closes as on any failed write).
            failures = max(0, failures - 1)
            changed = true
            switch outcome.result {
            case .timedOut: notice = .timedOut
            case .temporaryFailure: notice = .tryLater
            default: notice = .failed
            }
            reopen(now: now, events: &events)
        }
        return output(events) + pulse
    }

    /// The clock reached `nextDeadline` (possibly late): ends pulses, screens, lockouts, reveals,
    /// holds, time-outs and validity windows that are due.
    public mutating func advance(to now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: advance before start")
        if state == .stopped { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        if storageFault, let at = retryAt, now >= at {
            // Closed: try writing the state again (`stateWritten` reports how it went).
            retryAt = nil
            changed = true
        }
        return output(events)
    }

    /// A remote `open` (the configuration allows it): the output line pulses for `config.pulse`
    /// as after an accepted code; the flow's state, its wrong codes and any lockout stay as they
    /// are. Nothing without an output line or once stopped.
    public mutating func openRemotely(now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: openRemotely before start")
        guard state != .stopped, let span = config.pulse else { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        outputUntil = now + span
        events.append(.outputPulsed(until: now + span))
        return output(events) + [.setOutput(true)]
    }

    /// A remote `reset_lockout` (the configuration allows it): the wrong codes and lockout
    /// rounds are forgotten and a running lockout ends now (the field again when a code is open).
    /// Written like every change. Nothing once stopped.
    public mutating func resetLockout(now: Instant) -> [EntryAction] {
        precondition(started, "CodeEntry: resetLockout before start")
        guard state != .stopped else { return [] }
        var events: [EntryEvent] = []
        settle(now: now, events: &events)
        failures = 0
        rounds = 0
        changed = true
        if case .lockedOut = state { endLockout(at: now, now: now, events: &events) }
        return output(events)
    }

    /// Stops: the field is overwritten, the output driven inactive; later calls do nothing.
    public mutating func stop(now: Instant) -> [EntryAction] {
        if state == .stopped { return [] }
        wipe()
        deviceCode.wipe()
        if var pending = awaitingRecord {
            pending.code.wipe()
            awaitingRecord = nil
        }
        state = .stopped
        outputUntil = nil
        changed = false
        var actions: [EntryAction] = config.pulse == nil ? [] : [.setOutput(false)]
        actions.append(.log(.stopped))
        return actions
    }

    /// What to show; nil when idle or stopped.
    public var view: EntryView? {
        let texts = config.texts
        if storageFault {
            switch state {
            case .stopped, .accepted: break
            default: return EntryView(status: texts.closedTitle, field: texts.closedLabel, compact: texts.closedTitle)
            }
        }
        switch state {
        case .idle, .stopped:
            return nil
        case .entering:
            let field = fieldLine(revealLast: revealUntil != nil)
            let message = notice.map(noticeText)
            return EntryView(
                status: message ?? texts.promptTitle, field: field,
                compact: message.flatMap { length == 0 || noticeUntil != nil ? $0 : nil } ?? field,
                cursor: fieldCursor(in: field))
        case .verifying:
            let field = texts.fieldPrefix + String(repeating: texts.maskCharacter, count: submittedLength)
            return EntryView(status: texts.verifyingTitle, field: field, compact: texts.verifyingTitle)
        case .accepted:
            return EntryView(status: texts.acceptedTitle, field: texts.acceptedLabel, compact: texts.acceptedTitle, fullScreen: true)
        case .lockedOut:
            let label = config.lockedLabel(seconds: shownSeconds, columns: config.columns)
            return EntryView(status: texts.lockedTitle, field: label, compact: label)
        case .expired:
            return EntryView(status: texts.expiredTitle, field: texts.expiredLabel, compact: texts.expiredTitle)
        }
    }

    // MARK: - Internals

    private func noticeText(_ notice: Notice) -> String {
        let texts = config.texts
        switch notice {
        case .wrong(let left?): return texts.wrongCode.replacingPlaceholder(EntryTexts.countPlaceholder, with: decimalString(left))
        case .wrong(nil): return texts.wrongCodeUnlimited
        case .tooShort: return texts.tooShort
        case .tooLong: return texts.tooLong.replacingPlaceholder(EntryTexts.countPlaceholder, with: decimalString(config.maxLength))
        case .failed: return texts.verifyFailedTitle
        case .timedOut: return texts.verifyTimedOutTitle
        case .tryLater: return texts.tryLaterTitle
        }
    }

    /// The cell of `field` (a `fieldLine`) showing the last key typed; the prefix's end when empty.
    private func fieldCursor(in field: String) -> Int {
        var cells = config.texts.fieldPrefix.unicodeScalars.count
        var index = 0
        for character in field.dropFirst(config.texts.fieldPrefix.count) where index < length - 1 {
            cells += character.unicodeScalars.count
            index += 1
        }
        return cells
    }

    private func fieldLine(revealLast: Bool) -> String {
        let texts = config.texts
        var line = texts.fieldPrefix
        for index in 0..<length {
            let show: Bool
            switch config.echo {
            case .shown: show = true
            case .masked: show = false
            case .shownBriefly: show = revealLast && index == length - 1
            }
            line.append(show ? Character(Unicode.Scalar(buffer[index])) : texts.maskCharacter)
        }
        line += String(repeating: texts.emptyCharacter, count: config.maxLength - length)
        return line
    }

    /// Counts the try, holds the field for the verify command until the try is written
    /// (`stateWritten`), and overwrites the field.
    private mutating func submit(events: inout [EntryEvent]) {
        sequence += 1
        failures += 1
        changed = true
        let code = SecretCode(digits: Array(buffer[0..<length]))
        submittedLength = length
        events.append(.submitted(length: length, sequence: sequence))
        wipe()
        notice = nil
        holdClearAt = nil
        state = .verifying(sequence: sequence)
        awaitingRecord = VerifyRequest(sequence: sequence, code: code)
    }

    /// The lockout of the current round starts at `now`; the next round's is the next one.
    private mutating func startLockout(now: Instant, events: inout [EntryEvent]) {
        let lockout = config.lockout(forRound: rounds)
        let until = now + lockout
        rounds += 1
        failures = 0
        lockoutSeconds = Int(lockout.nanoseconds / oneSecond.nanoseconds)
        shownSeconds = lockoutSeconds
        changed = true
        events.append(.lockoutStarted(until: until, seconds: lockoutSeconds, round: rounds))
        state = .lockedOut(until: until)
    }

    /// After an answer that keeps the code open: the field again, or expired when its window ended.
    private mutating func reopen(now: Instant, events: inout [EntryEvent]) {
        state = .entering
        lastKey = nil
        settle(now: now, events: &events)
    }

    /// Brings timed things up to `now`.
    private mutating func settle(now: Instant, events: inout [EntryEvent]) {
        if let until = outputUntil, now >= until {
            outputUntil = nil
            releaseOutput = true
            events.append(.outputReleased(at: until))
        }
        switch state {
        case .accepted(let until):
            if now >= until {
                state = .idle
                events.append(.finished(at: until))
            }
        case .lockedOut(let until):
            if now >= until {
                endLockout(at: until, now: now, events: &events)
            } else {
                shownSeconds = min(wholeSecondsLeft(until - now), lockoutSeconds)
            }
        case .entering:
            settleEntering(now: now, events: &events)
        case .idle, .verifying, .expired, .stopped:
            break
        }
    }

    /// The lockout ends at `at`: the field again when a code is open, else idle.
    private mutating func endLockout(at: Instant, now: Instant, events: inout [EntryEvent]) {
        events.append(.lockoutFinished(at: at))
        changed = true
        lockoutSeconds = 0
        if open {
            state = .entering
            wipe()
            notice = nil
            lastKey = nil
            settleEntering(now: now, events: &events)
        } else {
            state = .idle
        }
    }

    private mutating func settleEntering(now: Instant, events: inout [EntryEvent]) {
        if let until = validUntil, now >= until {
            expire(at: until, events: &events)
            return
        }
        if let until = revealUntil, now >= until { revealUntil = nil }
        if let until = noticeUntil, now >= until {
            noticeUntil = nil
            notice = nil
        }
        if let at = holdClearAt, now >= at {
            holdClearAt = nil
            if length > 0 {
                events.append(.cleared(.held, length: length))
                wipe()
            }
        }
        if length > 0, let lastKey, let timeout = config.entryTimeout, now >= lastKey + timeout {
            events.append(.cleared(.timeout, length: length))
            wipe()
            notice = nil
        }
    }

    /// The code stops being valid at `at` (its window ended, or the service said so): entry shows
    /// "Code expired" until the next send.
    private mutating func expire(at: Instant, events: inout [EntryEvent]) {
        wipe()
        deviceCode.wipe()
        open = false
        validUntil = nil
        notice = nil
        holdClearAt = nil
        revealUntil = nil
        state = .expired
        changed = true
        events.append(.expired(at: at))
    }

    /// Overwrites every byte of the field, then empties it.
    private mutating func wipe() {
        for index in buffer.indices { buffer[index] = 0 }
        length = 0
        revealUntil = nil
        noticeUntil = nil
    }

    private mutating func output(_ events: [EntryEvent]) -> [EntryAction] {
        var actions: [EntryAction] = releaseOutput ? [.setOutput(false)] : []
        releaseOutput = false
        actions += events.map { EntryAction.log($0) }
        if changed {
            changed = false
            actions.append(.persist(snapshot))
        }
        return actions
    }
}
