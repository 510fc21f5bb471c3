import HAL

/// One second on the monotonic clock, the unit of the countdown display.
let oneSecond = TimeSpan.seconds(1)

/// The number of whole seconds a countdown shows for `remaining` time: rounded **up**, so the
/// display reads 1 during the last second and 0 only once the deadline is reached.
///
/// `remaining` of zero or less gives 0; 1 ns gives 1; exactly 59 s gives 59; 59 s + 1 ns gives 60.
public func wholeSecondsLeft(_ remaining: TimeSpan) -> Int {
    guard remaining.nanoseconds > 0 else { return 0 }
    // ceil(r / s) for r > 0, in integers: (r - 1) / s + 1.
    return Int((remaining.nanoseconds - 1) / oneSecond.nanoseconds + 1)
}

/// The fewest digits a countdown number is shown with ("05", not "5"), so the label keeps its
/// width during the last nine seconds.
public let minimumSecondsDigits = 2

/// Formats a seconds count for the countdown label: decimal, zero-padded to
/// `minimumSecondsDigits`, natural width beyond ("00", "05", "59", "120").
///
/// `seconds` must not be negative (the controller never shows a negative count).
public func formatSeconds(_ seconds: Int) -> String {
    precondition(seconds >= 0, "formatSeconds: a countdown never shows a negative count")
    return decimalString(seconds, minimumDigits: minimumSecondsDigits)
}

/// Formats the seconds left of a lockout (which may last a day) in at most `width` characters, the
/// first form that fits: the countdown's seconds below 1000 ("30", "600"), a clock ("16:40",
/// "23:59:59"), then whole minutes or hours rounded up like the seconds ("17m", "24h"; "59" below a
/// minute). With less room than the coarse form needs, the coarse form anyway (the caller's width
/// check then names the text).
///
/// | seconds | width 20 | width 5 | width 3 |
/// |---|---|---|---|
/// | 30 | 30 | 30 | 30 |
/// | 600 | 600 | 600 | 600 |
/// | 1000 | 16:40 | 16:40 | 17m |
/// | 3600 | 1:00:00 | 60m | 60m |
/// | 86400 | 24:00:00 | 24h | 24h |
public func formatLockoutSeconds(_ seconds: Int, width: Int) -> String {
    precondition(seconds >= 0, "formatLockoutSeconds: a countdown never shows a negative count")
    if seconds < 1_000 {
        let plain = formatSeconds(seconds)
        if plain.utf8.count <= width || seconds < 60 { return plain }
    }
    let hours = seconds / 3_600
    let clock =
        (hours > 0 ? decimalString(hours) + ":" + decimalString(seconds / 60 % 60, minimumDigits: 2) : decimalString(seconds / 60))
        + ":" + decimalString(seconds % 60, minimumDigits: 2)
    if clock.utf8.count <= width { return clock }
    if seconds > 3_600 { return decimalString((seconds + 3_599) / 3_600) + "h" }
    return decimalString((seconds + 59) / 60) + "m"
}

/// `value` in decimal, with leading zeros up to `minimumDigits`; a minus sign for negatives.
/// Written out here because Embedded Swift has no `description` for integers to lean on.
func decimalString(_ value: Int, minimumDigits: Int = 1) -> String {
    let zero = UInt8(ascii: "0")
    let radix: UInt = 10
    // Work on the magnitude so Int.min does not overflow.
    var magnitude = value.magnitude
    var reversedDigits: [UInt8] = []
    repeat {
        reversedDigits.append(zero + UInt8(magnitude % radix))
        magnitude /= radix
    } while magnitude > 0
    while reversedDigits.count < minimumDigits {
        reversedDigits.append(zero)
    }
    if value < 0 {
        reversedDigits.append(UInt8(ascii: "-"))
    }
    return String(decoding: reversedDigits.reversed(), as: UTF8.self)
}
