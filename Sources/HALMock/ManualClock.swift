import HAL

/// A monotonic clock that only moves when a test (or a virtual component) moves it.
///
/// It is a class so that every component handed the clock (a bus, a delay, an event source) sees
/// the same time. It starts at `.origin` unless told otherwise. Not thread-safe: virtual-time tests
/// run on one thread.
public final class ManualClock: MonotonicClock {
    private var current: Instant

    public init(_ start: Instant = .origin) {
        current = start
    }

    /// The current virtual time. Does not block and does not move the clock.
    public func now() -> Instant { current }

    /// Moves the clock forward by `span`. A negative span is a caller bug (the clock is monotonic).
    public func advance(by span: TimeSpan) {
        precondition(span >= .zero, "ManualClock.advance(by:) with a negative span: a monotonic clock never goes back")
        current = current + span
    }

    /// Moves the clock to `instant`, which must not be earlier than `now()` (setting it to `now()`
    /// is allowed and does nothing).
    public func set(to instant: Instant) {
        precondition(instant >= current, "ManualClock.set(to:) backwards: a monotonic clock never goes back")
        current = instant
    }
}

/// A `Delay` on virtual time: `delay(_:)` advances its `ManualClock` instead of sleeping and
/// records the request.
///
/// Copies share one record (a driver usually keeps its own copy), so a test can read `total` and
/// `requests` from the value it created.
public struct VirtualDelay: Delay {
    /// The shared record behind every copy.
    private final class Record {
        var requests: [TimeSpan] = []
    }

    public let clock: ManualClock
    private let record = Record()

    public init(clock: ManualClock) {
        self.clock = clock
    }

    /// Advances the clock by `span`; spans of zero or less return at once without moving it (as
    /// the `Delay` contract says) but are still recorded, so a test can see them.
    public mutating func delay(_ span: TimeSpan) {
        record.requests.append(span)
        if span > .zero {
            clock.advance(by: span)
        }
    }

    /// Every span requested so far, in order (including zero or negative ones).
    public var requests: [TimeSpan] { record.requests }

    /// The time actually waited so far: the sum of the positive requests.
    public var total: TimeSpan {
        record.requests.reduce(TimeSpan.zero) { $0 + ($1 > .zero ? $1 : .zero) }
    }
}
