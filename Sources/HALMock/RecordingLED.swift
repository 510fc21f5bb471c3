import HAL

/// An `OutputLine` (the LED) that records every successful `set` with the clock's time and can be
/// told to fail.
///
/// A failed `set` changes nothing, is not recorded in `history`, and throws
/// `HALError(kind, operation: "set LED", errno: 0)`.
public final class RecordingLED: OutputLine {
    /// The last level set, or nil before the first successful `set`.
    public private(set) var isOn: Bool?
    /// Every successful `set`, in order (repeats of the same level included).
    public private(set) var history: [(time: Instant, on: Bool)] = []
    /// How many `set` calls failed.
    public private(set) var failures = 0

    private let now: () -> Instant
    private var failNextCount = 0
    private var failNextKind: HALError.Kind = .injected
    private var failAlwaysKind: HALError.Kind?

    // (convenience: Embedded Swift allows no generic designated initialiser in a class.)
    public convenience init(clock: some MonotonicClock) {
        self.init(now: { clock.now() })
    }

    private init(now: @escaping () -> Instant) {
        self.now = now
    }

    public func set(_ active: Bool) throws(HALError) {
        if let kind = nextFailure() {
            failures += 1
            throw HALError(kind, operation: "set LED", errno: 0)
        }
        isOn = active
        history.append((time: now(), on: active))
    }

    /// The levels of `history` without their times.
    public var levels: [Bool] { history.map { $0.on } }

    /// The next `count` calls to `set` fail with `kind`.
    public func failNext(_ count: Int, with kind: HALError.Kind = .injected) {
        precondition(count >= 0, "failNext needs a count >= 0")
        failNextCount = count
        failNextKind = kind
    }

    /// Every `set` fails with `kind` until `clearFailures()`.
    public func failAlways(with kind: HALError.Kind = .injected) {
        failAlwaysKind = kind
    }

    public func clearFailures() {
        failAlwaysKind = nil
        failNextCount = 0
    }

    private func nextFailure() -> HALError.Kind? {
        if let failAlwaysKind { return failAlwaysKind }
        if failNextCount > 0 {
            failNextCount -= 1
            return failNextKind
        }
        return nil
    }
}
