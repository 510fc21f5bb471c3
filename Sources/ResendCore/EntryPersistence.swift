import HAL

/// `EntrySnapshot` on the wall clock, for the state file (the monotonic clock restarts at boot):
/// the `entry` object of `PersistedState`, written atomically with the controller's keys by
/// `EventLoop` (with a code entry). Never holds the code, nor its length.
///
/// ```
/// "entry": {"failures": 1, "rounds": 1, "lockoutEndsUnixMs": 1718000090000, "lockoutSeconds": 30,
///           "open": true, "validUntilUnixMs": 1718000600000}
/// ```
///
/// The times are null when no lockout runs / no window applies. Unknown keys are ignored; a missing
/// key or a wrong type makes the whole state unreadable (moved aside, as for the controller's
/// keys). Numbers are capped when read (`resumed` clamps them to the configuration).
public typealias PersistedEntryState = EntryRecord<WallTime>

extension EntryRecord where Time == WallTime {
    /// `snapshot` on the wall clock: each instant x becomes wallNow + (x - monotonicNow), both
    /// clocks read at about the same moment.
    public init(_ snapshot: EntrySnapshot, monotonicNow: Instant, wallNow: WallTime) {
        self = snapshot.convertingTimes { wallNow + ($0 - monotonicNow) }
    }

    /// The state to resume with in a process started at `monotonicNow` = `wallNow`, under
    /// `config`, clamped like the cooldown (`PersistedState.resumed`), so that neither a restart
    /// nor a wall-clock change can shorten a lockout below what is left or stretch anything:
    /// - a lockout resumes with clamp(end - wallNow, 0, its length) left, its length capped by the
    ///   longest lockout `config` allows (a clock set backwards cannot extend it; set forward, it
    ///   ends it, as for the cooldown);
    /// - wrong codes are kept, clamped to 0...maxAttempts (none without a limit): a count at the
    ///   limit is a last try recorded before its check whose answer never came, and `CodeEntry`
    ///   starts its lockout; rounds are clamped to 0...the number of lockouts configured (the last
    ///   repeats anyway);
    /// - an open field resumes only with validity left, clamped to 0...`validity`.
    public func resumed(monotonicNow: Instant, wallNow: WallTime, config: EntryConfig) -> EntrySnapshot {
        var snapshot = EntrySnapshot()
        if let max = config.maxAttempts {
            snapshot.failures = min(Swift.max(0, failures), max)
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

extension EntryRecord where Time == WallTime {
    /// The `entry` object, on one line.
    var encodedObject: String {
        func time(_ value: WallTime?) -> String { value.map { decimalDigits($0.millisecondsSinceEpoch) } ?? "null" }
        return "{\"failures\": " + decimalString(failures) + ", \"rounds\": " + decimalString(rounds)
            + ", \"lockoutEndsUnixMs\": " + time(lockoutEnd) + ", \"lockoutSeconds\": " + decimalString(lockoutSeconds)
            + ", \"open\": " + (open ? "true" : "false") + ", \"validUntilUnixMs\": " + time(validUntil) + "}"
    }

    /// Reads the `entry` object written by `encodedObject`.
    init(decoding value: JSONValue) throws(StateFormatError) {
        guard case .object(let members) = value else { throw StateFormatError("\"entry\" must be an object") }
        func member(_ key: String) throws(StateFormatError) -> JSONValue {
            guard let value = members.last(where: { $0.key == key })?.value else {
                throw StateFormatError("missing key \"entry." + key + "\"")
            }
            return value
        }
        /// A count of at least 0, capped (the clamp at resumption bounds it further).
        func count(_ key: String, cap: Int64) throws(StateFormatError) -> Int {
            guard case .integer(let value) = try member(key), value >= 0 else {
                throw StateFormatError("\"entry." + key + "\" must be an integer of at least 0")
            }
            return Int(min(value, cap))
        }
        func optionalTime(_ key: String) throws(StateFormatError) -> WallTime? {
            switch try member(key) {
            case .null: return nil
            case .integer(let ms) where PersistedState.unixMillisecondsRange.contains(ms): return WallTime(millisecondsSinceEpoch: ms)
            default: throw StateFormatError("\"entry." + key + "\" must be Unix milliseconds " + unixMillisecondsRangeText + " or null")
            }
        }
        failures = try count("failures", cap: Int64(Int32.max))
        rounds = try count("rounds", cap: Int64(Int32.max))
        lockoutEnd = try optionalTime("lockoutEndsUnixMs")
        lockoutSeconds = try count("lockoutSeconds", cap: Int64(EntryConfig.maximumSeconds))
        guard case .bool(let open) = try member("open") else { throw StateFormatError("\"entry.open\" must be true or false") }
        self.open = open
        validUntil = try optionalTime("validUntilUnixMs")
    }
}
