import HAL
import ResendCore
import Testing

@Suite("Keys and evdev codes")
struct KeysTests {
    @Test func everyKeyWithASymbolRoundTrips() {
        for key in Key.all where key != .button {
            #expect(Key(symbol: key.symbol) == key)
        }
        #expect(Key(symbol: UInt8(ascii: "b")) == .b)
        #expect(Key(symbol: UInt8(ascii: "E")) == nil)
        #expect(Key(symbol: UInt8(ascii: " ")) == nil)
        #expect(Key.digit(7) == .digit7)
        #expect(Key.digit(10) == nil)
        #expect(Key.digit(-1) == nil)
        #expect(Key.digits.map { $0.digitValue! } == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    }

    /// input-event-codes.h, by name.
    @Test func theKernelsKeyCodesMapToKeypadKeys() {
        let table: [(String, UInt16, Key)] = [
            ("KEY_1", 2, .digit1), ("KEY_9", 10, .digit9), ("KEY_0", 11, .digit0),
            ("KEY_BACKSPACE", 14, .star), ("KEY_ENTER", 28, .pound), ("KEY_KPASTERISK", 55, .star),
            ("KEY_KP7", 71, .digit7), ("KEY_KP8", 72, .digit8), ("KEY_KP9", 73, .digit9),
            ("KEY_KP4", 75, .digit4), ("KEY_KP5", 76, .digit5), ("KEY_KP6", 77, .digit6),
            ("KEY_KP1", 79, .digit1), ("KEY_KP2", 80, .digit2), ("KEY_KP3", 81, .digit3), ("KEY_KP0", 82, .digit0),
            ("KEY_KPENTER", 96, .pound),
            ("KEY_NUMERIC_0", 0x200, .digit0), ("KEY_NUMERIC_5", 0x205, .digit5), ("KEY_NUMERIC_9", 0x209, .digit9),
            ("KEY_NUMERIC_STAR", 0x20a, .star), ("KEY_NUMERIC_POUND", 0x20b, .pound),
            ("KEY_NUMERIC_A", 0x20c, .a), ("KEY_NUMERIC_B", 0x20d, .b), ("KEY_NUMERIC_C", 0x20e, .c), ("KEY_NUMERIC_D", 0x20f, .d),
        ]
        for (name, code, key) in table {
            #expect(EvdevKeys.key(forCode: code) == key, "\(name)")
        }
        // Every digit is reachable from each family: top row, keypad, numeric.
        for family in [[11, 2, 3, 4, 5, 6, 7, 8, 9, 10], [82, 79, 80, 81, 75, 76, 77, 71, 72, 73], Array(0x200...0x209)] {
            #expect(family.map { EvdevKeys.key(forCode: UInt16($0)) } == Key.digits)
        }
    }

    @Test func otherCodesAndEventsAreNotKeys() {
        #expect(EvdevKeys.key(forCode: 0) == nil)  // KEY_RESERVED
        #expect(EvdevKeys.key(forCode: 30) == nil)  // KEY_A: a letter on a keyboard is not a keypad key
        #expect(EvdevKeys.key(forCode: 0x210) == nil)  // KEY_CAMERA_FOCUS
        let t = Instant(nanoseconds: 42)
        #expect(EvdevKeys.keyEvent(type: 1, code: 2, value: 1, at: t) == KeyEvent(.digit1, .pressed, at: t))
        #expect(EvdevKeys.keyEvent(type: 1, code: 2, value: 0, at: t) == KeyEvent(.digit1, .released, at: t))
        #expect(EvdevKeys.keyEvent(type: 1, code: 2, value: 2, at: t) == nil, "autorepeat is ignored")
        #expect(EvdevKeys.keyEvent(type: 1, code: 2, value: 7, at: t) == nil)
        #expect(EvdevKeys.keyEvent(type: 0, code: 2, value: 1, at: t) == nil, "EV_SYN")
        #expect(EvdevKeys.keyEvent(type: 4, code: 2, value: 1, at: t) == nil, "EV_MSC")
        #expect(EvdevKeys.keyEvent(type: 1, code: 30, value: 1, at: t) == nil)
    }
}

@Suite("Key debouncer")
struct KeyDebouncerTests {
    private let t0 = Instant(nanoseconds: 3_000_000_000)

    @Test func eachKeyIsDebouncedOnItsOwn() {
        var keys = KeyDebouncer()
        #expect(keys.feed(KeyEvent(.digit1, .pressed, at: t0)).isEmpty)
        #expect(keys.feed(KeyEvent(.digit2, .pressed, at: t0 + .milliseconds(5))).isEmpty)
        #expect(keys.nextDeadline == t0 + .milliseconds(20))
        #expect(keys.advance(to: t0 + .milliseconds(19)).isEmpty)
        #expect(keys.advance(to: t0 + .milliseconds(20)) == [KeyEvent(.digit1, .pressed, at: t0 + .milliseconds(20))])
        #expect(keys.isPressed(.digit1))
        #expect(!keys.isPressed(.digit2))
        #expect(keys.advance(to: t0 + .milliseconds(25)) == [KeyEvent(.digit2, .pressed, at: t0 + .milliseconds(25))])
        #expect(keys.nextDeadline == nil)
    }

    @Test func changesDueTogetherComeOutInTimeOrder() {
        var keys = KeyDebouncer()
        _ = keys.feed(KeyEvent(.digit9, .pressed, at: t0 + .milliseconds(3)))
        _ = keys.feed(KeyEvent(.star, .pressed, at: t0 + .milliseconds(4)))
        _ = keys.feed(KeyEvent(.digit1, .pressed, at: t0 + .milliseconds(1)))
        let out = keys.advance(to: t0 + .seconds(1))
        #expect(out.map(\.key) == [.digit1, .digit9, .star])
        #expect(out.map(\.at) == [t0 + .milliseconds(21), t0 + .milliseconds(23), t0 + .milliseconds(24)])
    }

    @Test func aFeedReportsOtherKeysDueBeforeIt() {
        var keys = KeyDebouncer()
        _ = keys.feed(KeyEvent(.digit1, .pressed, at: t0))
        let out = keys.feed(KeyEvent(.digit2, .pressed, at: t0 + .milliseconds(50)))
        #expect(out == [KeyEvent(.digit1, .pressed, at: t0 + .milliseconds(20))])
    }

    @Test func promptModeReportsAtOnce() {
        var keys = KeyDebouncer(mode: .prompt)
        #expect(keys.feed(KeyEvent(.pound, .pressed, at: t0)) == [KeyEvent(.pound, .pressed, at: t0)])
        #expect(keys.feed(KeyEvent(.pound, .released, at: t0 + .milliseconds(1))).isEmpty)
        #expect(keys.feed(KeyEvent(.pound, .pressed, at: t0 + .milliseconds(2))).isEmpty)
        #expect(keys.advance(to: t0 + .milliseconds(40)).isEmpty, "bounces within the window change nothing")
    }

    @Test("a press edge at t0 and a read that finds the line released at t0+25 ms: no press, now or later (the window did not hold)")
    func reconcileLostRelease() {
        var keys = KeyDebouncer()
        #expect(keys.feed(KeyEvent(.button, .pressed, at: t0)).isEmpty)
        #expect(keys.reconcile(.button, level: ButtonLevel(pressed: false, time: t0 + .milliseconds(25))).isEmpty)
        #expect(keys.advance(to: t0 + .seconds(1)).isEmpty)
        #expect(!keys.isPressed(.button))
        #expect(keys.reconciledLevels == 1)
        #expect(keys.nextDeadline == nil)
    }

    @Test("a read that finds a key pressed whose press edge was lost presses it one window later; a read that agrees changes nothing")
    func reconcileLostPress() {
        var keys = KeyDebouncer()
        #expect(keys.reconcile(.button, level: ButtonLevel(pressed: false, time: t0)).isEmpty)
        #expect(keys.reconciledLevels == 0)
        #expect(keys.reconcile(.button, level: ButtonLevel(pressed: true, time: t0)).isEmpty)
        #expect(keys.rawPressed(.button))
        #expect(keys.advance(to: t0 + .milliseconds(20)) == [KeyEvent(.button, .pressed, at: t0 + .milliseconds(20))])
    }

    @Test("a read reports other keys' changes due before it first")
    func reconcileKeepsTimeOrder() {
        var keys = KeyDebouncer(mode: .prompt)
        _ = keys.feed(KeyEvent(.digit1, .pressed, at: t0))
        _ = keys.feed(KeyEvent(.digit1, .released, at: t0 + .milliseconds(5)))
        let out = keys.reconcile(.button, level: ButtonLevel(pressed: true, time: t0 + .milliseconds(30)))
        #expect(out == [KeyEvent(.digit1, .released, at: t0 + .milliseconds(20)), KeyEvent(.button, .pressed, at: t0 + .milliseconds(30))])
    }

    @Test("a key given its own debouncer keeps its window, mode and start-up level; the others use the shared settings")
    func ownDebouncer() {
        var keys = KeyDebouncer(window: .milliseconds(20))
        keys.use(Debouncer(window: .milliseconds(50), mode: .stable, pressed: true), for: .button)
        #expect(keys.isPressed(.button), "held at start-up")
        #expect(keys.feed(KeyEvent(.button, .released, at: t0)).isEmpty)
        #expect(keys.feed(KeyEvent(.digit4, .pressed, at: t0)).isEmpty)
        #expect(keys.advance(to: t0 + .milliseconds(20)) == [KeyEvent(.digit4, .pressed, at: t0 + .milliseconds(20))])
        #expect(keys.advance(to: t0 + .milliseconds(49)).isEmpty)
        #expect(keys.advance(to: t0 + .milliseconds(50)) == [KeyEvent(.button, .released, at: t0 + .milliseconds(50))])
        #expect(keys.suppressedEdges(of: .button) == 0, "the release of a button held at start-up is no bounce")
    }

    @Test("a key given its own debouncer counts as first seen at its first event: changes due together keep that order")
    func ownDebouncerKeepsFirstSeenOrder() {
        var keys = KeyDebouncer(window: .milliseconds(20))
        keys.use(Debouncer(window: .milliseconds(20)), for: .button)
        _ = keys.feed(KeyEvent(.digit7, .pressed, at: t0))
        _ = keys.feed(KeyEvent(.button, .pressed, at: t0))
        #expect(keys.advance(to: t0 + .milliseconds(20)).map(\.key) == [.digit7, .button])
    }
}
