import CLinuxOS
import HAL

/// CLOCK_MONOTONIC: the clock libgpiod stamps edge events with and the timerfd of
/// `LinuxEventSource` runs on. `now()` does not block.
public struct SystemClock: MonotonicClock, Sendable {
    public init() {}

    public func now() -> Instant {
        var spec = timespec()
        let result = clock_gettime(CLOCK_MONOTONIC, &spec)
        // CLOCK_MONOTONIC always exists on Linux and `spec` is valid: a failure is our bug.
        precondition(result == 0, "clock_gettime(CLOCK_MONOTONIC) failed")
        return Instant(nanoseconds: Int64(spec.tv_sec) * nanosecondsPerSecond + Int64(spec.tv_nsec))
    }
}

/// Blocks the calling thread with clock_nanosleep on CLOCK_MONOTONIC.
///
/// The wait is computed as an absolute deadline (now + span), so a signal that interrupts the sleep
/// (EINTR) resumes it for exactly the remaining time. Returns after at least `span`.
public struct SleepDelay: Delay, Sendable {
    public init() {}

    public mutating func delay(_ span: TimeSpan) {
        guard span > .zero else { return }
        let deadline = SystemClock().now() + span
        var spec = timespec(
            tv_sec: Int(deadline.nanoseconds / nanosecondsPerSecond),
            tv_nsec: Int(deadline.nanoseconds % nanosecondsPerSecond))
        while true {
            // clock_nanosleep returns the error number itself, not -1.
            let error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil)
            if error == 0 { return }
            precondition(error == EINTR, "clock_nanosleep failed: \(describe(errno: error))")
        }
    }
}

let nanosecondsPerSecond: Int64 = 1_000_000_000
