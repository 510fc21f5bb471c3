import HAL
import HALLinux
import ResendConfig
import ResendCore

/// A value in a log line: integers print bare, strings are quoted when they need it (plain) or
/// always (JSON).
public enum LogValue: Hashable, Sendable {
    case int(Int64)
    case string(String)
}

/// One event for the log: its words (`press accepted`) and its fields, in order.
///
/// The plain line is `<seconds, 3 decimals> <words> [key=value ...]`; the JSON line is one object
/// `{"t":<seconds>,"event":"<words joined by _>",<key>:<value>,...}` with the same content.
public struct LogRecord: Hashable, Sendable {
    /// Lower-case words separated by single spaces: "display offline".
    public var event: String
    public var fields: [LogField]

    public init(_ event: String, _ fields: [LogField] = []) {
        self.event = event
        self.fields = fields
    }

    /// `press ignored seconds_left=48`: the plain line without its time.
    public var plainText: String {
        var text = event
        for field in fields {
            text += " " + field.key + "=" + plainValue(field.value)
        }
        return text
    }
}

/// A key (lower-case, underscores) and its value.
public struct LogField: Hashable, Sendable {
    public var key: String
    public var value: LogValue

    public init(_ key: String, _ value: LogValue) {
        self.key = key
        self.value = value
    }

    public static func int(_ key: String, _ value: Int) -> LogField { LogField(key, .int(Int64(value))) }
    public static func int(_ key: String, _ value: UInt64) -> LogField { LogField(key, .int(Int64(clamping: value))) }
    public static func string(_ key: String, _ value: String) -> LogField { LogField(key, .string(value)) }
}

/// `--log-format` and `log.format`: plain text for journald (default) or one JSON object per line
/// for machines.
public typealias LogFormat = DeviceConfig.Log.Format

extension LogFormat {
    /// The line for `record` at `seconds` (monotonic seconds, printed with exactly 3 decimals).
    /// Never contains a line break: control characters in values are escaped.
    public func line(_ record: LogRecord, seconds: TimeSpan) -> String {
        switch self {
        case .plain:
            return formatSeconds3(seconds) + " " + record.plainText
        case .json:
            var line = "{\"t\":" + formatSeconds3(seconds) + ",\"event\":" + jsonString(String(record.event.map { $0 == " " ? "_" : $0 }))
            for field in record.fields {
                line += "," + jsonString(field.key) + ":" + jsonValue(field.value)
            }
            return line + "}"
        }
    }
}

/// A plain value: integers bare, strings bare when they are a non-empty run of characters without
/// spaces, quotes, `=`, backslashes or control characters, else quoted with those escaped.
func plainValue(_ value: LogValue) -> String {
    switch value {
    case .int(let number):
        return String(number)
    case .string(let text):
        let needsQuotes =
            text.isEmpty
            || text.unicodeScalars.contains { scalar in
                scalar == " " || scalar == "\"" || scalar == "=" || scalar == "\\" || isControl(scalar)
            }
        return needsQuotes ? jsonString(text) : text
    }
}

func jsonValue(_ value: LogValue) -> String {
    switch value {
    case .int(let number): return String(number)
    case .string(let text): return jsonString(text)
    }
}

/// The log record of a loop event at `now`; nil for events not worth a line (raw edges, debounced
/// levels, LED changes). The one formatter of events: `run`'s log, `simulate --events` and the
/// interactive simulator's status line all use it. The send command's output is only counted
/// (`output_bytes=N`) unless `sendOutput` (`send.logOutput`): an SMS API's reply may echo the code.
public func logRecord(for event: LoopEvent, at now: Instant, sendOutput: Bool = false) -> LogRecord? {
    switch event {
    case .controller(let event):
        return controllerRecord(event, sendOutput: sendOutput)
    case .display(let event):
        switch event {
        case .offline(let error):
            return LogRecord("display offline", [.string("op", error.operation), .string("error", describe(error))])
        case .online:
            return LogRecord("display online")
        case .refreshed:
            return LogRecord("display refreshed")
        }
    case .ledFailed(let error):
        return LogRecord("led failed", [.string("op", error.operation), .string("error", describe(error))])
    case .state(let event):
        return stateRecord(event)
    case .bouncesSuppressed(let count):
        return LogRecord("bounces suppressed", [.int("count", count)])
    case .edgesLost(let level):
        return LogRecord("edges lost", [.string("line", level.pressed ? "pressed" : "released")])
    case .buttonReadFailed(let error):
        return LogRecord("button read failed", [.string("op", error.operation), .string("error", describe(error))])
    case .keyEdgesLost:
        return LogRecord("key edges lost")
    case .keyReadFailed(let error):
        return LogRecord("key read failed", [.string("op", error.operation), .string("error", describe(error))])
    case .edge, .debounced, .led:
        return nil
    case .entry(let event):
        return entryRecord(event)
    case .verifyEnded(let ending, let duration):
        return verifyRecord(ending, duration: duration)
    case .output(let active):
        return LogRecord(active ? "output active" : "output inactive")
    case .outputFailed(let error):
        return LogRecord("output failed", [.string("op", error.operation), .string("error", describe(error))])
    case .keypad(let event):
        return keypadDeviceRecord(event)
    case .remote(let command):
        return LogRecord("mqtt command", [.string("command", remoteCommandName(command))])
    }
}

/// The command's word on the MQTT command topic.
func remoteCommandName(_ command: RemoteCommand) -> String {
    switch command {
    case .send: return "send"
    case .open: return "open"
    case .resetLockout: return "reset_lockout"
    }
}

/// `keypad offline device=/dev/input/by-id/... op="read ..." error="ENODEV (19): no such device"` and
/// `keypad online device=... name="..."`: the evdev keypad went away (or was missing at start) or
/// came back. `keypad events lost device=... changes=N`: the kernel dropped events (the program
/// fell behind) and N key changes were made up from the keys down; `keypad keys unreadable
/// device=... op="EVIOCGKEY ..." error=...`: the keys down could not be read. Never a key.
func keypadDeviceRecord(_ event: InputDeviceEvent) -> LogRecord {
    switch event {
    case .offline(let path, let error):
        return LogRecord("keypad offline", [.string("device", path), .string("op", error.operation), .string("error", describe(error))])
    case .online(let path, let name):
        return LogRecord("keypad online", [.string("device", path)] + (name.map { [.string("name", $0)] } ?? []))
    case .eventsLost(let path, let changes):
        return LogRecord("keypad events lost", [.string("device", path), .int("changes", changes)])
    case .keysUnreadable(let path, let error):
        return LogRecord("keypad keys unreadable", [.string("device", path), .string("op", error.operation), .string("error", describe(error))])
    }
}

/// The code-entry flow's events: lengths and outcomes, never a digit. Per-key events (a digit
/// typed, deleted, a key ignored) are not logged: their timing alone would tell an observer of the
/// log how long the code is while it is typed.
private func entryRecord(_ event: EntryEvent) -> LogRecord? {
    switch event {
    case .opened(let validUntil):
        return LogRecord("entry opened", [.int("valid", validUntil == nil ? 0 : 1)])
    case .digitEntered, .fieldFull, .deleted, .keyIgnored:
        return nil
    case .cleared(let reason, _):
        return LogRecord("entry cleared", [.string("reason", reason == .held ? "held" : "timeout")])
    case .tooShort(let length):
        return LogRecord("code too short", [.int("length", length)])
    case .submitted(let length, let sequence):
        return LogRecord("code submitted", [.int("length", length), .int("check", sequence)])
    case .verified(let result, let sequence):
        return LogRecord("code checked", [.string("result", verifyResultName(result)), .int("check", sequence)])
    case .staleVerify(let sequence):
        return LogRecord("check answer ignored", [.int("check", sequence)])
    case .rejected(let attemptsLeft):
        return LogRecord("code rejected", attemptsLeft.map { [.int("attempts_left", $0)] } ?? [])
    case .lockoutStarted(_, let seconds, let round):
        return LogRecord("entry lockout started", [.int("seconds", seconds), .int("round", round)])
    case .lockoutResumed(_, let secondsLeft):
        return LogRecord("entry lockout resumed", [.int("seconds_left", secondsLeft)])
    case .lockoutFinished:
        return LogRecord("entry lockout finished")
    case .expired:
        return LogRecord("code expired")
    case .finished:
        return LogRecord("entry finished")
    case .closed(_, let droppedCheck):
        // One line when code entry closes; the failed writes themselves are `state write failed`.
        return LogRecord(
            "entry closed",
            [.string("reason", "the state cannot be written")]
                + (droppedCheck.map { [.int("check_not_started", $0)] } ?? []))
    case .reopened:
        return LogRecord("entry reopened")
    case .outputPulsed, .outputReleased, .stopped:
        return nil  // `output active`/`output inactive` and the controller's `stopped` say it
    }
}

/// The log's name of a verify result: accepted, rejected, expired, tempfail, failed, timeout.
func verifyResultName(_ result: VerifyResult) -> String {
    switch result {
    case .accepted: return "accepted"
    case .rejected: return "rejected"
    case .expired: return "expired"
    case .temporaryFailure: return "tempfail"
    case .failed: return "failed"
    case .timedOut: return "timeout"
    }
}

/// `verify finished result=accepted exit=0 ms=80`, `result=rejected exit=1`, `result=expired
/// exit=3`, `result=tempfail exit=75`, `result=failed exit=4` or `signal=9`, `result=timeout after_ms=5000 killed=0`, `result=not_started reason="..."`. The
/// command's output is not logged: it might echo the code.
func verifyRecord(_ ending: CommandOutcome.Ending, duration: TimeSpan) -> LogRecord {
    var fields: [LogField]
    switch ending {
    case .exited(let code):
        fields = [.string("result", verifyResultName(VerifyResult(ending))), .int("exit", Int(code))]
    case .signalled(let signal):
        fields = [.string("result", "failed"), .int("signal", Int(signal))]
    case .timedOut(let limit, let killed):
        fields = [.string("result", "timeout"), LogField("after_ms", .int(limit.milliseconds)), .int("killed", killed ? 1 : 0)]
    case .couldNotStart(let reason, _):
        fields = [.string("result", "not_started"), .string("reason", reason)]
    }
    fields.append(LogField("ms", .int(duration.milliseconds)))
    return LogRecord("verify finished", fields)
}

private func controllerRecord(_ event: ControllerEvent, sendOutput: Bool) -> LogRecord {
    switch event {
    case .pressAccepted:
        return LogRecord("press accepted")
    case .pressIgnored(_, let secondsLeft):
        return LogRecord("press ignored", [.int("seconds_left", secondsLeft)])
    case .pressLockedOut(_, let secondsLeft):
        return LogRecord("press locked out", [.int("seconds_left", secondsLeft)])
    case .countdownStarted(_, let seconds):
        return LogRecord("countdown started", [.int("seconds", seconds)])
    case .countdownResumed(_, let secondsLeft):
        return LogRecord("countdown resumed", [.int("seconds_left", secondsLeft)])
    case .countdownFinished:
        return LogRecord("countdown finished")
    case .countdownCancelled:
        return LogRecord("countdown cancelled")
    case .sendStarted(let attempt, _, let cooldownSeconds):
        return LogRecord("send started", [.int("attempt", attempt), .int("cooldown_seconds", cooldownSeconds)])
    case .sendFinished(let outcome, _, let superseded):
        return sendRecord(outcome, superseded: superseded, showOutput: sendOutput)
    case .lockoutStarted:
        return LogRecord("lockout started")
    case .lockoutFinished:
        return LogRecord("lockout finished")
    case .stopped:
        return LogRecord("stopped")
    }
}

/// `send finished result=ok exit=0 ms=120`, `send finished result=tempfail exit=75 ...` (not
/// counted as a send), `send finished result=failed exit=3 ...`,
/// `send finished result=timeout after_ms=10000 killed=1`, `send finished result=not_started reason="..."`;
/// when the command wrote anything, `output_bytes=N` (what it wrote, counted), or with `showOutput`
/// (`send.logOutput`) `output="..."` (escaped, the kept bytes) and `dropped_output_bytes=N`.
func sendRecord(_ outcome: CommandOutcome, superseded: Bool, showOutput: Bool) -> LogRecord {
    var fields: [LogField]
    switch outcome.ending {
    case .exited(let code):
        let result: String
        switch SendResult(outcome.ending) {
        case .sent: result = "ok"
        case .temporaryFailure: result = "tempfail"
        case .failed: result = "failed"
        }
        fields = [.string("result", result), .int("exit", Int(code))]
    case .signalled(let signal):
        fields = [.string("result", "failed"), .int("signal", Int(signal))]
    case .timedOut(let limit, let killed):
        fields = [.string("result", "timeout"), LogField("after_ms", .int(limit.milliseconds)), .int("killed", killed ? 1 : 0)]
    case .couldNotStart(let reason, _):
        fields = [.string("result", "not_started"), .string("reason", reason)]
    }
    fields.append(LogField("ms", .int(outcome.duration.milliseconds)))
    if !showOutput {
        let written = outcome.output.count + outcome.droppedOutputBytes
        if written > 0 { fields.append(.int("output_bytes", written)) }
    } else {
        if !outcome.output.isEmpty {
            fields.append(.string("output", String(decoding: outcome.output, as: UTF8.self)))
        }
        if outcome.droppedOutputBytes > 0 {
            fields.append(.int("dropped_output_bytes", outcome.droppedOutputBytes))
        }
    }
    if superseded {
        fields.append(.int("superseded", 1))
    }
    return LogRecord("send finished", fields)
}

private func stateRecord(_ event: StateEvent) -> LogRecord {
    switch event {
    case .freshStart:
        return LogRecord("state fresh start")
    case .restored(let state):
        return LogRecord("state restored", [.int("countdown", state.controller.countdownEnd == nil ? 0 : 1)])
    case .unreadable(let reason, let movedTo):
        return LogRecord("state unreadable", [.string("reason", reason), .string("moved_to", movedTo ?? "-")])
    case .readFailed(let error):
        return LogRecord("state read failed", [.string("op", error.operation), .string("error", describe(error))])
    case .newerFormat(let versions, let movedTo):
        var fields: [LogField] = [
            .int("format", Int(clamping: versions.format)), .int("readable_from", Int(clamping: versions.readableFrom)),
            .int("reads_up_to", Int(clamping: PersistedState.formatVersion)),
        ]
        if let movedTo {
            fields.append(.string("moved_to", movedTo))
        } else {
            fields.append(
                .string(
                    "kept",
                    "left as it is and not written (a keypad stays closed); install a resend-button that reads it, or remove the file to start afresh"
                ))
        }
        return LogRecord("state newer", fields)
    case .moveAsideFailed(let error):
        return LogRecord("state move aside failed", [.string("op", error.operation), .string("error", describe(error))])
    case .writeFailed(let error):
        return LogRecord("state write failed", [.string("op", error.operation), .string("error", describe(error))])
    }
}

/// Seconds in `span`, rounded up (the countdown's own rounding), never negative.
private func wholeSecondsRoundedUp(_ span: TimeSpan) -> Int {
    let second = TimeSpan.seconds(1).nanoseconds
    guard span.nanoseconds > 0 else { return 0 }
    return Int((span.nanoseconds + second - 1) / second)
}

/// Writes one log line per event (`LogFormat`) through `output`; the loop's observer on a device
/// and, with `--events`, inside the headless simulator.
///
/// Times are the loop's `now` on the monotonic clock, less `origin` (the device logs absolute
/// CLOCK_MONOTONIC seconds, the simulator seconds since its start). Besides the loop's events
/// (among them `bounces suppressed count=N` after an accepted press) it logs after each step the
/// edges the kernel dropped (`dropped edge events count=N`, from `droppedEdgeEvents`). A display outage is logged once: a
/// repeated offline report without an online in between is not logged again; likewise a state
/// file write failure identical to the previous one. The lines an outsider can cause go through
/// `LogRateLimit` (a summary line instead of thousands); its summaries come at the next line or
/// loop step after their window.
public final class EventLogger: LoopObserver {
    public let format: LogFormat
    public let origin: Instant
    private let output: (String) -> Void
    private let droppedEdgeEvents: () -> UInt64
    private var reportedDrops: UInt64 = 0
    private var displayOffline = false
    private var lastStateWriteFailure: HALError?
    private var rateLimit: LogRateLimit
    /// `send.logOutput`: the send command's output goes into its line; else only its length.
    public let logSendOutput: Bool

    /// - Parameter droppedEdgeEvents: the running count of edges the kernel dropped (`GPIOButton`).
    public init(
        format: LogFormat, origin: Instant = .origin, droppedEdgeEvents: @escaping () -> UInt64 = { 0 },
        logSendOutput: Bool = false, rateLimit: LogRateLimit = LogRateLimit(), output: @escaping (String) -> Void
    ) {
        self.rateLimit = rateLimit
        self.format = format
        self.origin = origin
        self.logSendOutput = logSendOutput
        self.droppedEdgeEvents = droppedEdgeEvents
        self.output = output
    }

    /// Logs `record` at `now` (unless its rate limit holds it back).
    public func log(_ record: LogRecord, at now: Instant) {
        writeSummaries(at: now)
        guard rateLimit.admit(record.event, at: now) else { return }
        output(format.line(record, seconds: now - origin))
    }

    private func writeSummaries(at now: Instant) {
        for summary in rateLimit.summaries(at: now) { output(format.line(summary, seconds: now - origin)) }
    }

    public func record(_ event: LoopEvent, at now: Instant) {
        switch event {
        case .display(.offline):
            if displayOffline { return }
            displayOffline = true
        case .display(.online), .display(.refreshed):
            displayOffline = false
        case .state(.writeFailed(let error)):
            // A state file that cannot be written (its directory missing when run by hand) fails
            // the same way on every press: say it once, and again only when the failure changes.
            if error == lastStateWriteFailure { return }
            lastStateWriteFailure = error
        default:
            break
        }
        if let record = logRecord(for: event, at: now, sendOutput: logSendOutput) { log(record, at: now) }
    }

    public func stepFinished(at now: Instant) {
        writeSummaries(at: now)
        let dropped = droppedEdgeEvents()
        if dropped > reportedDrops {
            log(LogRecord("dropped edge events", [.int("count", dropped - reportedDrops)]), at: now)
            reportedDrops = dropped
        }
    }
}
