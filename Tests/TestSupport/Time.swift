import Glibc
import HAL

// Time for tests: instants on virtual time by their seconds, and the real clocks for the few
// tests that are about real time (a child process, a kill, a file on disk).

/// Seconds (with millisecond precision) as an instant on virtual time: `at(11.02)`.
public func at(_ seconds: Double) -> Instant {
    Instant(nanoseconds: Int64((seconds * 1000).rounded()) * 1_000_000)
}

/// The wall clock (CLOCK_REALTIME), in seconds since the epoch.
public func wallSeconds() -> Double {
    seconds(of: CLOCK_REALTIME)
}

/// The monotonic clock (CLOCK_MONOTONIC), in seconds since an arbitrary start.
public func monotonicSeconds() -> Double {
    seconds(of: CLOCK_MONOTONIC)
}

private func seconds(of clock: clockid_t) -> Double {
    var spec = timespec()
    _ = clock_gettime(clock, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Sleeps `seconds` of real time (nothing when it is zero or less), through signals.
public func sleepFor(seconds: Double) {
    guard seconds > 0 else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// Sleeps until the wall clock reads `seconds` (at once when it is past).
public func sleepUntil(wall seconds: Double) {
    sleepFor(seconds: seconds - wallSeconds())
}

/// Asks `condition` every `interval` seconds of real time until it holds (true) or `seconds`
/// have passed (false); it is asked at least once, and once more at the end.
public func waitUntil(within seconds: Double, every interval: Double = 0.01, _ condition: () -> Bool) -> Bool {
    let giveUp = monotonicSeconds() + seconds
    while true {
        if condition() { return true }
        if monotonicSeconds() >= giveUp { return false }
        sleepFor(seconds: interval)
    }
}
