/// A length of time in nanoseconds. Signed, so differences of instants are representable.
///
/// The HAL uses its own small type rather than `Swift.Duration` so that arithmetic stays a single
/// 64-bit integer on a microcontroller; ±292 years of range is plenty.
///
/// Arithmetic saturates at the ends of that range instead of trapping (`saturating`): times come
/// from outside input (a script, a state file, a clock set far off), and a value ±292 years away
/// means "never" or "long ago" just as well as an exact one would. Inputs are range-checked where
/// they are read; saturation is the second line of defence, so that no input can crash the program.
public struct TimeSpan: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = TimeSpan(nanoseconds: 0)
    public static func seconds(_ s: Int64) -> TimeSpan { TimeSpan(nanoseconds: saturatingProduct(s, 1_000_000_000)) }
    public static func milliseconds(_ ms: Int64) -> TimeSpan { TimeSpan(nanoseconds: saturatingProduct(ms, 1_000_000)) }
    public static func microseconds(_ us: Int64) -> TimeSpan { TimeSpan(nanoseconds: saturatingProduct(us, 1_000)) }

    /// Whole milliseconds, truncated toward zero.
    public var milliseconds: Int64 { nanoseconds / 1_000_000 }
    /// Whole microseconds, truncated toward zero.
    public var microseconds: Int64 { nanoseconds / 1_000 }

    public static func < (a: TimeSpan, b: TimeSpan) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: TimeSpan, b: TimeSpan) -> TimeSpan { TimeSpan(nanoseconds: saturatingSum(a.nanoseconds, b.nanoseconds)) }
    public static func - (a: TimeSpan, b: TimeSpan) -> TimeSpan { TimeSpan(nanoseconds: saturatingDifference(a.nanoseconds, b.nanoseconds)) }
    public static func * (a: TimeSpan, n: Int64) -> TimeSpan { TimeSpan(nanoseconds: saturatingProduct(a.nanoseconds, n)) }
    /// `n` must not be 0. Int64.min / -1 saturates to Int64.max.
    public static func / (a: TimeSpan, n: Int64) -> TimeSpan {
        let (quotient, overflow) = a.nanoseconds.dividedReportingOverflow(by: n)
        return TimeSpan(nanoseconds: overflow ? .max : quotient)
    }
}

/// A point on the monotonic clock: nanoseconds since an arbitrary, fixed origin (on Linux,
/// CLOCK_MONOTONIC, the same clock libgpiod stamps edge events with). Never compared with wall time.
public struct Instant: Hashable, Comparable, Sendable {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The origin of the clock. Virtual clocks start here.
    public static let origin = Instant(nanoseconds: 0)

    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    public static func + (a: Instant, b: TimeSpan) -> Instant { Instant(nanoseconds: saturatingSum(a.nanoseconds, b.nanoseconds)) }
    public static func - (a: Instant, b: TimeSpan) -> Instant { Instant(nanoseconds: saturatingDifference(a.nanoseconds, b.nanoseconds)) }
    public static func - (a: Instant, b: Instant) -> TimeSpan { TimeSpan(nanoseconds: saturatingDifference(a.nanoseconds, b.nanoseconds)) }
}

/// `a + b`, or Int64.max / Int64.min where it would overflow.
@inlinable
public func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b > 0 ? .max : .min) : sum
}

/// `a - b`, or Int64.max / Int64.min where it would overflow.
@inlinable
public func saturatingDifference(_ a: Int64, _ b: Int64) -> Int64 {
    let (difference, overflow) = a.subtractingReportingOverflow(b)
    return overflow ? (b < 0 ? .max : .min) : difference
}

/// `a * b`, or Int64.max / Int64.min where it would overflow.
@inlinable
public func saturatingProduct(_ a: Int64, _ b: Int64) -> Int64 {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? ((a < 0) == (b < 0) ? .max : .min) : product
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
