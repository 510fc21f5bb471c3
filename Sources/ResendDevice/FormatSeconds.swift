import HAL

/// `3.050`: seconds with exactly three decimals, as the event log, the headless
/// output and the diagnostics print times (never "3.5" for 3.050).
public func formatSeconds3(_ span: TimeSpan) -> String {
    let totalMillis = span.nanoseconds / 1_000_000
    let sign = totalMillis < 0 ? "-" : ""
    let magnitude = totalMillis < 0 ? -totalMillis : totalMillis
    let fraction = String(magnitude % 1000)
    return sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
}
