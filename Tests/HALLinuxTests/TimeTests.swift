import HAL
import HALLinux
import Testing

@Suite("the system clock and delay")
struct TimeTests {
    @Test("the monotonic clock does not go backwards")
    func monotonic() {
        let clock = SystemClock()
        let first = clock.now()
        let second = clock.now()
        #expect(second >= first)
        #expect(first > .origin)
    }

    @Test("a delay lasts at least its span (HD44780 38 us command margin)")
    func delayLastsItsSpan() {
        let clock = SystemClock()
        var delay = SleepDelay()
        let span = TimeSpan.microseconds(38)
        let start = clock.now()
        delay.delay(span)
        #expect(clock.now() - start >= span)
    }

    @Test(
        "the keypad's settle wait lasts at least its span, spun (10 us) or slept (past the spin limit)",
        arguments: [
            TimeSpan.microseconds(1), .microseconds(10), SpinDelay.spinLimit, SpinDelay.spinLimit + .microseconds(1),
        ])
    func spinDelayLastsItsSpan(span: TimeSpan) {
        let clock = SystemClock()
        var delay = SpinDelay()
        let start = clock.now()
        delay.delay(span)
        #expect(clock.now() - start >= span)
    }
}
