import HAL

/// `EntrySnapshot` on the wall clock, for the state file (the monotonic clock restarts at boot).
/// Never holds the code. Not written to the state file yet: that wiring (a versioned `entry`
/// object beside the controller's keys) is a later step.
public struct PersistedEntryState: Hashable, Sendable {
    public var failures: Int
    public var rounds: Int
    public var lockoutEnd: WallTime?
    public var lockoutSeconds: Int
    public var open: Bool
    public var validUntil: WallTime?

    public init(failures: Int = 0, rounds: Int = 0, lockoutEnd: WallTime? = nil, lockoutSeconds: Int = 0,
                open: Bool = false, validUntil: WallTime? = nil) {
        self.failures = failures
        self.rounds = rounds
        self.lockoutEnd = lockoutEnd
        self.lockoutSeconds = lockoutSeconds
        self.open = open
        self.validUntil = validUntil
    }

    /// `snapshot` on the wall clock: each instant x becomes wallNow + (x - monotonicNow), both
    /// clocks read at about the same moment.
    public init(_ snapshot: EntrySnapshot, monotonicNow: Instant, wallNow: WallTime) {
        func wall(_ instant: Instant) -> WallTime { wallNow + (instant - monotonicNow) }
        self.init(
            failures: snapshot.failures, rounds: snapshot.rounds, lockoutEnd: snapshot.lockoutEnd.map(wall),
            lockoutSeconds: snapshot.lockoutSeconds, open: snapshot.open, validUntil: snapshot.validUntil.map(wall))
    }

    /// The state to resume with in a process started at `monotonicNow` = `wallNow`, under
    /// `config`, clamped like the cooldown (`PersistedState.resumed`), so that neither a restart
    /// nor a wall-clock change can shorten a lockout below what is left or stretch anything:
    /// - a lockout resumes with clamp(end - wallNow, 0, its length) left, its length capped by the
    ///   longest lockout `config` allows (a clock set backwards cannot extend it; set forward, it
    ///   ends it, as for the cooldown);
    /// - wrong codes are kept, clamped to 0...maxAttempts - 1 (none without a limit), rounds to
    ///   0...the number of lockouts configured (the last repeats anyway);
    /// - an open field resumes only with validity left, clamped to 0...`validity`.
    public func resumed(monotonicNow: Instant, wallNow: WallTime, config: EntryConfig) -> EntrySnapshot {
        var snapshot = EntrySnapshot()
        if let max = config.maxAttempts {
            snapshot.failures = min(Swift.max(0, failures), max - 1)
            snapshot.rounds = min(Swift.max(0, rounds), config.lockouts.count)
            let longest = min(Swift.max(0, lockoutSeconds), config.longestLockoutSeconds)
            if let end = lockoutEnd {
                let remaining = clamp(end - wallNow, upTo: .seconds(Int64(longest)))
                if remaining > .zero {
                    snapshot.lockoutEnd = monotonicNow + remaining
                    snapshot.lockoutSeconds = longest
                }
            }
        }
        if open {
            if let validity = config.validity {
                if let until = validUntil {
                    let remaining = clamp(until - wallNow, upTo: validity)
                    if remaining > .zero {
                        snapshot.open = true
                        snapshot.validUntil = monotonicNow + remaining
                    }
                }
            } else {
                snapshot.open = true
            }
        }
        return snapshot
    }
}
