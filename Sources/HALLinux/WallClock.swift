import CLinuxOS
import HAL

/// CLOCK_REALTIME: civil time, which NTP or an operator may set in either direction. Used only to
/// carry deadlines across restarts; nothing is timed with it. `now()` does not block.
public struct SystemWallClock: WallClock, Sendable {
    public init() {}

    public func now() -> WallTime {
        WallTime(nanosecondsSinceEpoch: clockNanoseconds(CLOCK_REALTIME, "clock_gettime(CLOCK_REALTIME) failed"))
    }
}

/// `time` as ISO 8601 in UTC with milliseconds: "2024-06-10T12:34:56.789Z".
public func iso8601(_ time: WallTime) -> String {
    let milliseconds = time.millisecondsSinceEpoch
    var seconds = time_t(milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000)
    let fraction = Int(milliseconds - Int64(seconds) * 1000)
    var parts = tm()
    guard gmtime_r(&seconds, &parts) != nil else { return "invalid time" }
    func padded(_ value: Int32, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    return padded(parts.tm_year + 1900, 4) + "-" + padded(parts.tm_mon + 1, 2) + "-" + padded(parts.tm_mday, 2)
        + "T" + padded(parts.tm_hour, 2) + ":" + padded(parts.tm_min, 2) + ":" + padded(parts.tm_sec, 2)
        + "." + padded(Int32(fraction), 3) + "Z"
}
