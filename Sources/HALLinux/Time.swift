import CLinuxOS
import HAL

/// CLOCK_MONOTONIC: the clock libgpiod stamps edge events with and the timerfd of
/// `LinuxEventSource` runs on. `now()` does not block.
public struct SystemClock: MonotonicClock, Sendable {
    public init() {}

    public func now() -> Instant {
        Instant(nanoseconds: clockNanoseconds(CLOCK_MONOTONIC, "clock_gettime(CLOCK_MONOTONIC) failed"))
    }
}

/// `clock`'s reading in nanoseconds (clock_gettime(2)). The clocks asked for (CLOCK_MONOTONIC,
/// CLOCK_REALTIME) always exist on Linux and the buffer is valid: a failure is our bug, a crash
/// with `failure`.
func clockNanoseconds(_ clock: clockid_t, _ failure: String) -> Int64 {
    var spec = timespec()
    let result = clock_gettime(clock, &spec)
    precondition(result == 0, failure)
    return Int64(spec.tv_sec) * nanosecondsPerSecond + Int64(spec.tv_nsec)
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

/// A short wait that lasts what it says: up to `spinLimit` it reads CLOCK_MONOTONIC in a loop
/// (no sleep), longer spans sleep like `SleepDelay`. A sleep of 10 us lasts far longer: the
/// kernel lets a normal thread's timer fire up to its timer slack late (50 us by default,
/// prctl(PR_GET_TIMERSLACK)), plus the wake-up; measured on the x86-64 CI machine under load,
/// clock_nanosleep for 10 us took 30 us at least and 74 us as the median. The matrix keypad's
/// settle time is such a wait, a few per scan while a key is held. Returns after at least `span`
/// (preemption can make any wait longer). Does not block other threads; uses the CPU while it
/// spins.
public struct SpinDelay: Delay, Sendable {
    /// The longest span waited by spinning: 100 us.
    public static var spinLimit: TimeSpan { .microseconds(100) }

    public init() {}

    public mutating func delay(_ span: TimeSpan) {
        guard span > .zero else { return }
        guard span <= SpinDelay.spinLimit else {
            var sleep = SleepDelay()
            sleep.delay(span)
            return
        }
        let clock = SystemClock()
        let deadline = clock.now() + span
        while clock.now() < deadline {}
    }
}

let nanosecondsPerSecond: Int64 = 1_000_000_000
