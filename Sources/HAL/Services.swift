// The device's services beyond the button and the display: the wall clock (for a cooldown that
// survives restarts), the send command and a durable store for the controller's state. Like the rest
// of the HAL these are protocols and value types only; HALLinux implements them on the OS, HALMock
// on virtual time.

/// A point in civil time: nanoseconds since the Unix epoch (1970-01-01T00:00:00Z, leap seconds
/// ignored, as CLOCK_REALTIME counts). Unlike `Instant` it can jump (NTP, an operator, a Pi booting
/// without a real-time clock), so it is only used to carry a deadline across a restart, never to
/// time anything while running.
public struct WallTime: Hashable, Comparable, Sendable {
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    /// Whole milliseconds since the epoch, rounded toward negative infinity.
    public var millisecondsSinceEpoch: Int64 {
        let perMillisecond: Int64 = 1_000_000
        let (quotient, remainder) = nanosecondsSinceEpoch.quotientAndRemainder(dividingBy: perMillisecond)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// Saturates beyond the ±292 years `nanosecondsSinceEpoch` holds (see `TimeSpan`).
    public init(millisecondsSinceEpoch ms: Int64) { self.nanosecondsSinceEpoch = saturatingProduct(ms, 1_000_000) }

    // Saturating, like `Instant` and `TimeSpan`: a wall clock or state file far off cannot trap.
    public static func < (a: WallTime, b: WallTime) -> Bool { a.nanosecondsSinceEpoch < b.nanosecondsSinceEpoch }
    public static func + (a: WallTime, b: TimeSpan) -> WallTime {
        WallTime(nanosecondsSinceEpoch: saturatingSum(a.nanosecondsSinceEpoch, b.nanoseconds))
    }
    public static func - (a: WallTime, b: TimeSpan) -> WallTime {
        WallTime(nanosecondsSinceEpoch: saturatingDifference(a.nanosecondsSinceEpoch, b.nanoseconds))
    }
    public static func - (a: WallTime, b: WallTime) -> TimeSpan {
        TimeSpan(nanoseconds: saturatingDifference(a.nanosecondsSinceEpoch, b.nanosecondsSinceEpoch))
    }
}

/// The civil clock (CLOCK_REALTIME on Linux). `now()` does not block. It may jump in either
/// direction between two calls; callers must not time anything with it.
public protocol WallClock {
    func now() -> WallTime
}

/// One run of the send command, as the controller asks for it.
public struct SendRequest: Hashable, Sendable {
    /// Unique among the sends of one process run (1, 2, 3, ...): matches an outcome to its send.
    public var sequence: Int
    /// The position of this send in the current run of sends (1 = first send, 2 = first resend,
    /// ...); given to the command as RESEND_ATTEMPT.
    public var attempt: Int
    /// The cooldown this send started, in whole seconds; given as RESEND_COOLDOWN_SECONDS.
    public var cooldownSeconds: Int
    /// The press that asked for the send, on the wall clock; given as RESEND_PRESS_TIME.
    public var pressTime: WallTime
    /// A code made on the device for this send: it goes to the command's standard input only
    /// (never argv or the environment), and the runner wipes it once written. Nil: standard input
    /// is /dev/null.
    public var input: SecretCode?

    public init(sequence: Int, attempt: Int, cooldownSeconds: Int, pressTime: WallTime, input: SecretCode? = nil) {
        self.sequence = sequence
        self.attempt = attempt
        self.cooldownSeconds = cooldownSeconds
        self.pressTime = pressTime
        self.input = input
    }
}

/// What a command the loop runs is for: sending the code (`CommandRunner` with `SendRequest`s) or
/// verifying a code typed on the keypad (its outcome decides accepted, rejected or failed).
public enum CommandPurpose: Hashable, Sendable {
    case send
    case verify
}

/// How one run of a command (the send command or the verify command) ended.
public struct CommandOutcome: Hashable, Sendable {
    public enum Ending: Hashable, Sendable {
        /// The command exited by itself with this status (0 is success).
        case exited(code: Int32)
        /// The command was killed by a signal nobody in this program sent.
        case signalled(signal: Int32)
        /// The command ran past its time-out and was sent SIGTERM; `killed` is true when it was
        /// still running after the grace period and got SIGKILL too. Always a failure, even when
        /// the command then exited with status 0.
        case timedOut(after: TimeSpan, killed: Bool)
        /// The command could not be started (not found, not executable, out of resources):
        /// `reason` is for humans, `errno` the raw cause (0 when none).
        case couldNotStart(reason: String, errno: Int32)
    }

    /// The `SendRequest.sequence` of the send this ends.
    public var sequence: Int
    public var ending: Ending
    /// From the start of the command to its end (reaping), on the monotonic clock.
    public var duration: TimeSpan
    /// The first bytes of what the command wrote to standard output and standard error
    /// (interleaved, as written), at most the runner's capture limit.
    public var output: [UInt8]
    /// Bytes written beyond the capture limit: counted, then dropped.
    public var droppedOutputBytes: Int

    public init(sequence: Int, ending: Ending, duration: TimeSpan, output: [UInt8] = [], droppedOutputBytes: Int = 0) {
        self.sequence = sequence
        self.ending = ending
        self.duration = duration
        self.output = output
        self.droppedOutputBytes = droppedOutputBytes
    }

    /// True only for `.exited(code: 0)`.
    public var succeeded: Bool { ending == .exited(code: 0) }
}

/// Runs the send command without blocking the event loop.
///
/// `start` returns at once. An outcome arrives exactly once per started request, by one of three
/// ways: returned by `start` (the command could not start), returned by `service(now:)` (runners
/// on virtual time), or delivered by the event source as `LoopInput.commandFinished` (a real process:
/// its pidfd is in the poll set). A runner that must act at a time (send SIGTERM at the time-out,
/// SIGKILL after the grace period, complete a scripted send) names it in `nextService`; the loop
/// then calls `service(now:)` once the monotonic clock reaches it. Several sends may run at once.
public protocol CommandRunner {
    mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome?
    var nextService: Instant? { get }
    mutating func service(now: Instant) -> [CommandOutcome]
}

/// A small durable file (or flash sector) holding the controller's state across restarts.
///
/// `read` returns the stored bytes, nil when nothing was ever stored (a fresh start). `write`
/// replaces them atomically and durably: after it returns, a crash or power cut leaves either the
/// old or the new bytes, never a mix, and the new ones survive. `moveAside` renames unreadable
/// content out of the way (keeping it for a human) and returns where it went. All three block for
/// the I/O (a write includes its fsyncs).
///
/// `isUnreadableContent` tells, for an error thrown by `read`, whether something is stored that
/// cannot be the state (more than the storage reads, say): it is moved aside like unreadable
/// bytes rather than left to be silently replaced by the next write. Other read errors (no
/// permission, not a regular file) leave the storage alone.
public protocol StateStorage {
    func read() throws(HALError) -> [UInt8]?
    mutating func write(_ bytes: [UInt8]) throws(HALError)
    mutating func moveAside() throws(HALError) -> String
    func isUnreadableContent(_ error: HALError) -> Bool
}

extension StateStorage {
    /// By default no read error means unreadable content.
    public func isUnreadableContent(_ error: HALError) -> Bool { false }
}
