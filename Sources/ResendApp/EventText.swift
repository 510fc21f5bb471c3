import HAL
import ResendCore

/// The log text of a controller event; nil for events that are not worth a line.
public func describeControllerEvent(_ event: ControllerEvent) -> String? {
    switch event {
    case .pressAccepted: return "press accepted"
    case .pressIgnored(_, let secondsLeft): return "press ignored (\(secondsLeft) s left)"
    case .pressLockedOut(_, let secondsLeft): return "press ignored: locked out (\(secondsLeft) s left)"
    case .countdownStarted(_, let seconds): return "countdown started (\(seconds) s)"
    case .countdownResumed(_, let secondsLeft): return "countdown resumed (\(secondsLeft) s left)"
    case .countdownFinished: return "countdown finished"
    case .countdownCancelled: return "countdown cancelled"
    case .sendStarted(let attempt, _, let cooldownSeconds): return "send started (attempt \(attempt), cooldown \(cooldownSeconds) s)"
    case .sendFinished(let outcome, _, let superseded):
        return describeSendOutcome(outcome) + (superseded ? " (superseded by a newer send)" : "")
    case .lockoutStarted: return "locked out: the cap of sends is reached"
    case .lockoutFinished: return "lockout finished"
    case .stopped: return "stopped"
    }
}

/// "send finished: exit 0 after 0.120 s", "send failed: exit 3 after 1.000 s, output \"...\"",
/// "send timed out after 10.000 s: SIGTERM, then SIGKILL", "send could not start: ...".
public func describeSendOutcome(_ outcome: SendOutcome) -> String {
    let after = " after " + formatSeconds3(outcome.duration) + " s"
    var text: String
    switch outcome.ending {
    case .exited(let code):
        text = (code == 0 ? "send finished: exit 0" : "send failed: exit \(code)") + after
    case .signalled(let signal):
        text = "send failed: killed by signal \(signal)" + after
    case .timedOut(let limit, let killed):
        text = "send timed out after " + formatSeconds3(limit) + " s: SIGTERM" + (killed ? ", then SIGKILL" : "")
    case .couldNotStart(let reason, _):
        text = "send could not start: " + reason
    }
    if !outcome.output.isEmpty {
        text += ", output \"" + escapedOutput(outcome.output) + "\""
    }
    if outcome.droppedOutputBytes > 0 {
        text += " (+\(outcome.droppedOutputBytes) bytes dropped)"
    }
    return text
}

/// Output bytes on one log line: printable ASCII as is, \n \r \t \\ \" escaped, the rest as \xNN.
func escapedOutput(_ bytes: [UInt8]) -> String {
    var text = ""
    for byte in bytes {
        switch byte {
        case 0x0A: text += "\\n"
        case 0x0D: text += "\\r"
        case 0x09: text += "\\t"
        case 0x5C: text += "\\\\"
        case 0x22: text += "\\\""
        case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            text += "\\x" + (hex.count < 2 ? "0" : "") + hex
        }
    }
    return text
}

/// The log text of a display event.
public func describeDisplayEvent(_ event: DisplayEvent) -> String {
    switch event {
    case .offline(let error): return "display offline: \(error.operation) failed"
    case .online: return "display online: re-initialised and repainted"
    case .refreshed: return "display refreshed"
    }
}

/// The log text of a persisted-state event.
public func describeStateEvent(_ event: StateEvent) -> String {
    switch event {
    case .freshStart: return "state: none stored, fresh start"
    case .restored(let state):
        return state.countdownEnd == nil ? "state: restored" : "state: restored a countdown"
    case .unreadable(let reason, let movedTo):
        return "state: unreadable (\(reason)); " + (movedTo.map { "moved to \($0)" } ?? "could not move it aside") + ", fresh start"
    case .readFailed(let error): return "state: reading failed: \(error.operation), fresh start"
    case .moveAsideFailed(let error): return "state: moving the unreadable state aside failed: \(error.operation)"
    case .writeFailed(let error): return "state: writing failed: \(error.operation)"
    }
}
