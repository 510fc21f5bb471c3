import CharacterLCD
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// The emulated LCD watched byte by byte: the instants a `*` appeared in the code field's cells
/// (the cells after "Code: " on the field's row), i.e. the HD44780 latched the key's echo.
private final class StarWatcher: I2CDevice {
    let emulator: HD44780Emulator
    let fieldRow: Int
    private var stars = 0
    private(set) var echoes: [Instant] = []

    init(emulator: HD44780Emulator, fieldRow: Int) {
        self.emulator = emulator
        self.fieldRow = fieldRow
    }

    func receive(_ byte: UInt8, at time: Instant) {
        emulator.receive(byte, at: time)
        let prefix = EntryTexts().fieldPrefix.unicodeScalars.count
        let count = emulator.screen[fieldRow].unicodeScalars.dropFirst(prefix).filter { $0 == "*" }.count
        if count > stars { echoes.append(time) }
        stars = count
    }
}

/// A display that drops the frames' focus before the real one sees them: the driver then writes
/// the cells in its plain address order, as before frames carried a focus.
private struct FocusIgnoringDisplay<Inner: FrameDisplay>: FrameDisplay {
    var inner: Inner

    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        var plain = frame
        plain.focus = nil
        return inner.show(plain, now: now)
    }

    var nextService: Instant? { inner.nextService }
    mutating func service(now: Instant) -> [DisplayEvent] { inner.service(now: now) }
}

/// Records, after every step of the loop, what the emulated glass shows.
private final class GlassSampler: LoopObserver {
    let emulator: HD44780Emulator
    var screens: [(time: Instant, lines: [String])] = []

    init(emulator: HD44780Emulator) { self.emulator = emulator }

    func record(_ event: LoopEvent, at now: Instant) {}

    func stepFinished(at now: Instant) {
        if screens.last?.lines != emulator.screen { screens.append((now, emulator.screen)) }
    }
}

private struct EchoRun {
    var presses: [Instant] = []
    var echoes: [Instant] = []
    var screens: [(time: Instant, lines: [String])] = []
    var violations: [String] = []
}

/// The keypad with the default rules on `geometry`, through the real event loop with its code entry, driver and
/// backpack onto the HD44780 emulator behind the 100 kHz wire model (each write blocks the
/// virtual clock for its bytes): the button at 1 s (the send succeeds 300 ms later), then
/// `codes` 4-digit codes, each rejected 200 ms after `#` ("Wrong code" replaces the field), the
/// next code's first digit `gaps[i]` after that message. Unlimited attempts.
private func runEcho(geometry: LCDGeometry, gaps: [TimeSpan], honourFocus: Bool = true) throws -> EchoRun {
    let clock = ManualClock()
    let bus = RecordingI2CBus(clock: clock, blocking: true)
    let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
    let watcher = StarWatcher(emulator: emulator, fieldRow: geometry.rows >= 4 ? 3 : 0)
    let address = I2CAddress(0x27)!
    bus.attach(watcher, at: address)
    let lcd = HD44780(port: PCF8574Backpack(bus: bus, address: address), delay: VirtualDelay(clock: clock), geometry: geometry)
    var display = LCDDisplay(lcd: lcd, rom: .a00)
    try display.start(now: clock.now())

    var keypad = DeviceConfig.Keypad()
    keypad.enabled = true
    keypad.entry.maxAttempts = nil
    keypad.entry.timeoutSeconds = nil
    keypad.entry.validitySeconds = nil
    var config = ControllerConfig(duration: .seconds(60), texts: Texts(), layout: ScreenLayout(columns: geometry.columns, rows: geometry.rows))
    config.hasSendCommand = true

    var run = EchoRun()
    var inputs: [(time: Instant, input: LoopInput)] = ButtonScript.inputs(ButtonScript.press(at: at(1), holdFor: .milliseconds(100)))
    func tap(_ key: Key, _ time: Instant) {
        inputs.append((time, .key(KeyEvent(key, .pressed, at: time))))
        inputs.append((time + .milliseconds(100), .key(KeyEvent(key, .released, at: time + .milliseconds(100)))))
    }
    // The field opens at 1.32 s; a first code to get the message on the screen.
    var time = at(1.5)
    for gap in [TimeSpan.zero] + gaps {
        time = time + gap
        for digit in 1...4 {
            tap(Key.digit(digit)!, time)
            run.presses.append(time)
            time = time + .milliseconds(250)
        }
        tap(.pound, time)
        // `#` counts at +20 ms, the verify command answers 200 ms later: the message is up.
        time = time + .milliseconds(220)
    }
    inputs.append((time + .seconds(1), .stop))

    let sampler = GlassSampler(emulator: emulator)
    let verifies = ScriptedCommandRunner(Array(repeating: .init(after: .milliseconds(200), .exited(code: 1)), count: gaps.count + 1))
    let wallClock = ManualWallClock(WallTime(nanosecondsSinceEpoch: 0), following: clock)
    let source = VirtualEventSource(clock: clock, inputs: inputs)
    let send = ScriptedCommandRunner([.succeeds(after: .milliseconds(300))])
    let coordinator = deviceCoordinator(controller: config, button: Debouncer(), keypad: keypad)
    if honourFocus {
        var loop = EventLoop(
            environment: LoopEnvironment(
                source: source, display: display, outputs: .none, commands: .device(send: .scripted(send), verify: .scripted(verifies)), clock: clock,
                wallClock: wallClock, observer: sampler, store: NoStateStorage?.none, random: DeviceRandom.simulated),
            coordinator: coordinator)
        try loop.run()
    } else {
        var loop = EventLoop(
            environment: LoopEnvironment(
                source: source, display: FocusIgnoringDisplay(inner: display), outputs: .none,
                commands: .device(send: .scripted(send), verify: .scripted(verifies)), clock: clock, wallClock: wallClock, observer: sampler,
                store: NoStateStorage?.none, random: DeviceRandom.simulated),
            coordinator: coordinator)
        try loop.run()
    }
    run.echoes = watcher.echoes
    run.screens = sampler.screens
    run.violations = emulator.violations.map(\.description)
    return run
}

/// First digits after the message at these gaps (the messages come 1.22 s after a code's first
/// digit): 30 ms after it, and on a countdown tick (the ticks are at 2.02 s, 3.02 s, ...; the
/// digits at 4.000, 6.000 and 9.000 s count at a tick, so their frame also changes the label).
private let gaps: [TimeSpan] = [30, 30, 780, 30, 530, 280, 280].map { .milliseconds($0) }
private let debounce = TimeSpan.milliseconds(Int64(DeviceConfig.Keypad().debounceMs))

@Suite("Keypad echo on the glass")
struct KeypadEchoTests {
    @Test(
        "the first digit after a message has its * on the glass within debounce + 2 ms, on 16x2 and 20x4",
        arguments: [LCDGeometry.lcd16x2, .lcd20x4])
    func firstDigitAfterMessage(geometry: LCDGeometry) throws {
        let run = try runEcho(geometry: geometry, gaps: gaps)
        try #require(run.echoes.count == run.presses.count)
        #expect(run.violations == [])
        for (index, (press, echo)) in zip(run.presses, run.echoes).enumerated() {
            #expect(echo - press <= debounce + .milliseconds(2), "digit \(index % 4 + 1) of code \(index / 4 + 1) on \(geometry.name)")
            #expect(echo - press >= debounce, "an echo before the key was certain")
        }
    }

    @Test(
        "writing the key's cell first leaves every screen as it was: the same screens, one after another, on 16x2 and 20x4",
        arguments: [LCDGeometry.lcd16x2, .lcd20x4])
    func screensUnchanged(geometry: LCDGeometry) throws {
        let focused = try runEcho(geometry: geometry, gaps: gaps)
        let plain = try runEcho(geometry: geometry, gaps: gaps, honourFocus: false)
        #expect(focused.violations == [])
        #expect(focused.screens.last?.lines == plain.screens.last?.lines)
        // Between steps (every byte of a frame latched) the glass shows the same screens.
        #expect(focused.screens.map(\.lines) == plain.screens.map(\.lines))
        let wrong = geometry.rows >= 4 ? 2 : 0
        #expect(plain.screens.contains { $0.lines[wrong].hasPrefix("Wrong code") }, "the rig never showed the message")
        let field = geometry.rows >= 4 ? 3 : 0
        #expect(focused.screens.contains { $0.lines[field].hasPrefix("Code: *_______") })
    }

}
