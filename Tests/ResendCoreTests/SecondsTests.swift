import HAL
import Testing

@testable import ResendCore

@Suite("Seconds shown on the countdown")
struct SecondsTests {
    @Test(
        "seconds are formatted with at least two digits, wider when needed",
        arguments: [
            (0, "00"), (5, "05"), (9, "09"), (10, "10"), (59, "59"), (60, "60"),
            (99, "99"), (100, "100"), (120, "120"), (86_400, "86400"),
        ])
    func formatsSeconds(seconds: Int, expected: String) {
        #expect(formatSeconds(seconds) == expected)
    }

    @Test(
        "the seconds left are rounded up to whole seconds",
        arguments: [
            (TimeSpan(nanoseconds: -1_000_000_000), 0),
            (TimeSpan.zero, 0),
            (TimeSpan(nanoseconds: 1), 1),
            (TimeSpan.milliseconds(300), 1),
            (TimeSpan.milliseconds(999), 1),
            (TimeSpan.seconds(1), 1),
            (TimeSpan.seconds(1) + TimeSpan(nanoseconds: 1), 2),
            (TimeSpan.milliseconds(58_700), 59),
            (TimeSpan.seconds(59), 59),
            (TimeSpan.milliseconds(59_001), 60),
            (TimeSpan.seconds(60), 60),
            (TimeSpan.seconds(120), 120),
        ])
    func roundsUp(remaining: TimeSpan, expected: Int) {
        #expect(wholeSecondsLeft(remaining) == expected)
    }

    @Test(
        "decimal numbers keep their inner and trailing zeros and their sign",
        arguments: [
            (0, "0"), (7, "7"), (105, "105"), (1_000, "1000"), (-42, "-42"), (Int.max, "9223372036854775807"),
        ])
    func decimal(value: Int, expected: String) {
        #expect(decimalString(value) == expected)
    }
}
