import HAL
import ResendCore

/// The log text of a controller event; nil for events that are not worth a line.
public func describeControllerEvent(_ event: ControllerEvent) -> String? {
    switch event {
    case .pressAccepted: return "press accepted"
    case .pressIgnored(_, let secondsLeft): return "press ignored (\(secondsLeft) s left)"
    case .countdownStarted: return "countdown started"
    case .countdownFinished: return "countdown finished"
    case .sendTimedOut: return "send timed out"
    case .stopped: return "stopped"
    }
}

/// The log text of a display event.
public func describeDisplayEvent(_ event: DisplayEvent) -> String {
    switch event {
    case .offline(let error): return "display offline: \(error.operation) failed"
    case .online: return "display online: re-initialised and repainted"
    case .refreshed: return "display refreshed"
    }
}
