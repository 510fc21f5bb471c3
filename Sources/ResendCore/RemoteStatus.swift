import HAL

/// What the device is doing, as a home-automation system sees it (the MQTT state topic): the
/// resend controller's status and seconds left, the cap's sends left, and with a code entry its
/// state, the wrong codes left and the lockout's seconds left. Never the code, its digits or its
/// length.
public struct DeviceStatus: Hashable, Sendable {
    /// "ready", "sending", "cooldown", "failed", "locked_out" (the cap of sends) or "stopped".
    public var status: String
    /// The seconds the label shows (countdown or the cap's lockout); 0 otherwise.
    public var secondsLeft: Int
    /// Sends the cap still allows in its window; nil without a cap.
    public var sendsLeft: Int?
    /// The code entry: "idle", "entering", "verifying", "accepted", "locked_out", "expired",
    /// "stopped"; nil without a code entry.
    public var entry: String?
    /// Wrong codes left before a lockout; nil without a code entry or a limit.
    public var attemptsLeft: Int?
    /// The code entry's lockout: seconds left (0 when not locked out).
    public var lockoutSecondsLeft: Int
    /// Whether the display answers; set by the observer that follows display events.
    public var displayOnline: Bool

    public init(coordinator: DeviceCoordinator, now: Instant, displayOnline: Bool = true) {
        let controller = coordinator.controller
        switch controller.state {
        case .ready: status = "ready"
        case .sending: status = "sending"
        case .cooldown: status = "cooldown"
        case .failed: status = "failed"
        case .lockedOut: status = "locked_out"
        case .stopped: status = "stopped"
        }
        switch controller.state {
        case .sending(let until), .cooldown(let until), .lockedOut(let until):
            secondsLeft = max(0, wholeSecondsLeft(until - now))
        case .ready, .failed, .stopped:
            secondsLeft = 0
        }
        sendsLeft = controller.sendsLeft(at: now)
        lockoutSecondsLeft = 0
        if let flow = coordinator.entry {
            attemptsLeft = flow.attemptsLeft
            switch flow.state {
            case .idle: entry = "idle"
            case .entering: entry = "entering"
            case .verifying: entry = "verifying"
            case .accepted: entry = "accepted"
            case .lockedOut(let until):
                entry = "locked_out"
                lockoutSecondsLeft = max(0, wholeSecondsLeft(until - now))
            case .expired: entry = "expired"
            case .stopped: entry = "stopped"
            }
        }
        self.displayOnline = displayOnline
    }

    /// True while either lockout runs (the cap's or the code entry's).
    public var lockedOut: Bool { status == "locked_out" || entry == "locked_out" }

    /// The state topic's JSON object, keys always in this order.
    public var json: String {
        "{\"status\":\"" + status + "\",\"seconds_left\":" + decimalString(secondsLeft)
            + ",\"sends_left\":" + (sendsLeft.map { decimalString($0) } ?? "null")
            + ",\"entry\":" + (entry.map { "\"" + $0 + "\"" } ?? "null")
            + ",\"attempts_left\":" + (attemptsLeft.map { decimalString($0) } ?? "null")
            + ",\"lockout\":" + (lockedOut ? "true" : "false")
            + ",\"lockout_seconds_left\":" + decimalString(lockoutSecondsLeft)
            + ",\"display_online\":" + (displayOnline ? "true" : "false") + "}"
    }
}
