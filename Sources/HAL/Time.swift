/// A length of time in nanoseconds. Signed, so differences of instants are representable.
///
/// The HAL uses its own small type rather than `Swift.Duration` so that arithmetic stays a single
/// 64-bit integer on a microcontroller; ±292 years of range is plenty.
public struct TimeSpan: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = TimeSpan(nanoseconds: 0)
    public static func seconds(_ s: Int64) -> TimeSpan { TimeSpan(nanoseconds: s * 1_000_000_000) }
    public static func milliseconds(_ ms: Int64) -> TimeSpan { TimeSpan(nanoseconds: ms * 1_000_000) }
    public static func microseconds(_ us: Int64) -> TimeSpan { TimeSpan(nanoseconds: us * 1_000) }

    /// Whole milliseconds, truncated toward zero.
    public var milliseconds: Int64 { nanoseconds / 1_000_000 }
    /// Whole microseconds, truncated toward zero.
    public var microseconds: Int64 { nanoseconds / 1_000 }

    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: TimeSpan, b: TimeSpan) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds + b.nanoseconds) }
    public static func - (a: TimeSpan, b: TimeSpan) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds - b.nanoseconds) }
    public static func * (a: TimeSpan, n: Int64) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds * n) }
    public static func / (a: TimeSpan, n: Int64) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds / n) }
}

/// A point on the monotonic clock: nanoseconds since an arbitrary, fixed origin (on Linux,
/// CLOCK_MONOTONIC, the same clock libgpiod stamps edge events with). Never compared with wall time.
public struct Instant: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The origin of the clock. Virtual clocks start here.
    public static let origin = Instant(nanoseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: Instant, b: TimeSpan) -> Instant { Instant(nanoseconds: a.nanoseconds + b.nanoseconds) }
    public static func - (a: Instant, b: TimeSpan) -> Instant { Instant(nanoseconds: a.nanoseconds - b.nanoseconds) }
    public static func - (a: Instant, b: Instant) -> TimeSpan { TimeSpan(nanoseconds: a.nanoseconds - b.nanoseconds) }
}

/// The monotonic clock. `now()` never goes backwards and is unaffected by wall-clock changes.
/// It does not block.
public protocol MonotonicClock {
    func now() -> Instant
}

/// A blocking wait used by drivers for datasheet timings (e.g. HD44780 power-up, 40 ms).
///
/// `delay(_:)` returns after at least `span` has passed on the monotonic clock. A virtual
/// implementation advances its virtual clock instead of sleeping. Spans of zero or less return at once.
public protocol Delay {
    mutating func delay(_ span: TimeSpan)
}
