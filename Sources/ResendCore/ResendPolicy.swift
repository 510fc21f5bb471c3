import HAL

/// How long each send's cooldown lasts and how many sends are allowed: escalating cooldowns and a
/// cap per time window. `ResendPolicy.off` (the default) keeps the configured duration for every
/// send and has no cap.
///
/// - Escalation: the n-th send of a run of sends gets `cooldowns[n-1]`, the last one repeating
///   (with [60, 120, 300] s: 60, 120, 300, 300, ...). A run ends when the button stayed ready with
///   no send for `runResetAfter` after a cooldown ended (or after a failed send); the next send is
///   then the first of a new run. Every started send counts, failed ones too: a failed command may
///   still have delivered the code.
/// - Cap: at most `cap.maxSends` sends within any `cap.window`. Once reached, the button is locked
///   out (label `Texts.lockoutLabel` counting down, LED off, presses ignored and logged) until the
///   oldest of those sends is `window` old.
///
/// The run number is also the send command's RESEND_ATTEMPT, so it is tracked with the policy off.
public struct ResendPolicy: Hashable, Sendable {
    /// The cap of sends per window.
    public struct Cap: Hashable, Sendable {
        /// Sends allowed within `window`, at least 1.
        public var maxSends: Int
        /// Whole seconds, from 1 s to a day.
        public var window: TimeSpan

        public init(maxSends: Int, window: TimeSpan) {
            self.maxSends = maxSends
            self.window = window
        }
    }

    /// Cooldowns for the 1st, 2nd, ... send of a run, whole seconds each (1 s to a day); empty
    /// means every send gets `ControllerConfig.duration`.
    public var cooldowns: [TimeSpan]
    /// Idle time (button ready, no send) after which a run of sends ends.
    public var runResetAfter: TimeSpan
    /// Nil: no cap.
    public var cap: Cap?

    /// A run ends after ten idle minutes unless configured otherwise.
    public static let defaultRunResetAfter = TimeSpan.seconds(600)
    /// No escalation, no cap.
    public static let off = ResendPolicy()

    public init(cooldowns: [TimeSpan] = [], runResetAfter: TimeSpan = ResendPolicy.defaultRunResetAfter, cap: Cap? = nil) {
        self.cooldowns = cooldowns
        self.runResetAfter = runResetAfter
        self.cap = cap
    }

    /// The cooldown of the `attempt`-th send of a run (attempt >= 1), `fallback` when there is
    /// no escalation.
    public func cooldown(forAttempt attempt: Int, fallback: TimeSpan) -> TimeSpan {
        precondition(attempt >= 1, "ResendPolicy.cooldown: attempts count from 1")
        guard let last = cooldowns.last else { return fallback }
        return attempt <= cooldowns.count ? cooldowns[attempt - 1] : last
    }

    /// What is wrong with this policy, for a message naming the setting; empty when valid.
    /// The controller treats an invalid policy as a bug: check this when reading a configuration.
    public var problems: [String] {
        var found: [String] = []
        for cooldown in cooldowns where !ControllerConfig.isValidDuration(cooldown) {
            found.append("every cooldown must be whole seconds from 1 to " + decimalString(ControllerConfig.maximumDurationSeconds))
            break
        }
        if runResetAfter < .zero || runResetAfter.nanoseconds % oneSecond.nanoseconds != 0 {
            found.append("the run reset time must be whole seconds, not negative")
        }
        if let cap {
            if cap.maxSends < 1 { found.append("the cap must allow at least 1 send") }
            if !ControllerConfig.isValidDuration(cap.window) {
                found.append("the cap window must be whole seconds from 1 to " + decimalString(ControllerConfig.maximumDurationSeconds))
            }
        }
        return found
    }
}
