import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator

// Figure 7: the keypad on virtual time, through the device's one loop (`EventLoop`) with the code entry,
// coordinator, driver and backpack, onto the HD44780 emulator behind a recording bus with the
// 100 kHz timing model (each write blocks the virtual clock for its bytes), like figure 1:
// - idle wake-ups: how often the loop's wait returns with nothing to do, with a keypad, while
//   nothing happens (ready screen; and again after a whole flow, once the countdown is over);
// - key to echo: from a digit key's raw press to the byte that puts its `*` on the glass (the
//   emulator latched it), over many codes typed, on 16x2 and 20x4.

/// A virtual event source that counts what each wait returned.
struct CountingSource: EventSource {
    var inner: VirtualEventSource
    /// (returned at, deadline asked for, inputs returned) of every wait.
    var waits: [(at: Instant, deadline: Instant?, inputs: Int)] = []

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        let inputs = try inner.wait(until: deadline)
        waits.append((inner.clock.now(), deadline, inputs.count))
        return inputs
    }
}

/// The emulated LCD on the bus, watched byte by byte: when the code field's cells (the
/// `maxLength` cells after the prefix on its row) show one more `*` than before, the instant of the
/// byte that put it there (the HD44780 latched it: the echo is on the glass); and when the whole
/// field line is readable with one more `*` (the row starts with the prefix: after a message on
/// 16x2 the prefix replaces the message's first cells too).
final class EchoWatcher: I2CDevice {
    let emulator: HD44780Emulator
    let fieldRow: Int
    private var stars = 0
    private var lineStars = 0
    private(set) var echoes: [Instant] = []
    private(set) var lines: [Instant] = []

    init(emulator: HD44780Emulator, fieldRow: Int) {
        self.emulator = emulator
        self.fieldRow = fieldRow
    }

    func receive(_ byte: UInt8, at time: Instant) {
        emulator.receive(byte, at: time)
        let row = emulator.screen[fieldRow]
        let prefix = EntryTexts().fieldPrefix
        let cells = row.unicodeScalars.dropFirst(prefix.unicodeScalars.count).prefix(EntryConfig().maxLength)
        let count = cells.filter { $0 == "*" }.count
        if count > stars { echoes.append(time) }
        stars = count
        let lineCount = row.hasPrefix(prefix) ? count : 0
        if lineCount > lineStars { lines.append(time) }
        lineStars = lineCount
    }
}

struct KeypadFigures {
    /// Waits that returned without an input in 10 min idle on the ready screen, and the deadline
    /// the idle wait asked for (nil: none, it sleeps until an input).
    var idleReadyWakeups: Int
    var idleReadyDeadline: Instant?
    /// The same for 10 min idle after a whole flow (send, a code accepted, the countdown over).
    var idleAfterFlowWakeups: Int
    var idleAfterFlowDeadline: Instant?
    /// Key to echo on the glass, per geometry: the first digit of each code (its line changes
    /// from a message to the field) and the others (one more `*`), in ns; and for the first digit,
    /// key to the whole field line readable ("Code: *").
    var echo: [(geometry: String, first: [Int64], typing: [Int64], firstLine: [Int64])]
    var window: TimeSpan
    var violations: [String]
}

/// The keypad rig: a keypad with the default rules, a scripted send (300 ms) and verify
/// (rejects 200 ms after each code but the last, which it accepts), on `geometry`.
private func runKeypadRig(
    geometry: LCDGeometry, inputs: [(time: Instant, input: LoopInput)], verifySteps: [ScriptedCommandRunner.Step], maxAttempts: Int?,
    fieldRow: Int
) throws(HALError) -> (source: CountingSource, echoes: [Instant], lines: [Instant], violations: [String]) {
    let clock = ManualClock()
    let bus = RecordingI2CBus(clock: clock, blocking: true)
    let emulator = HD44780Emulator(columns: geometry.columns, rows: geometry.rows, clock: clock)
    let watcher = EchoWatcher(emulator: emulator, fieldRow: fieldRow)
    bus.attach(watcher, at: benchAddress)
    let lcd = HD44780(port: PCF8574Backpack(bus: bus, address: benchAddress), delay: VirtualDelay(clock: clock), geometry: geometry)
    var display = LCDDisplay(lcd: lcd, rom: .a00)
    try display.start(now: clock.now())
    var keypad = DeviceConfig.Keypad()
    keypad.enabled = true
    keypad.entry.maxAttempts = maxAttempts
    keypad.entry.timeoutSeconds = nil
    keypad.entry.validitySeconds = nil
    var config = ControllerConfig(duration: .seconds(60), texts: Texts(), layout: ScreenLayout(columns: geometry.columns, rows: geometry.rows))
    config.hasSendCommand = true
    let environment = LoopEnvironment(
        source: CountingSource(inner: VirtualEventSource(clock: clock, inputs: inputs)), display: display, outputs: .none,
        commands: .device(
            send: .scripted(ScriptedCommandRunner([.succeeds(after: .milliseconds(300))])), verify: .scripted(ScriptedCommandRunner(verifySteps))),
        clock: clock, wallClock: ManualWallClock(WallTime(nanosecondsSinceEpoch: 0), following: clock), observer: NoObserver(),
        store: NoStateStorage?.none, random: DeviceRandom.simulated)
    var loop = EventLoop(environment: environment, coordinator: deviceCoordinator(controller: config, button: Debouncer(), keypad: keypad))
    try loop.run()
    return (loop.environment.source, watcher.echoes, watcher.lines, emulator.violations.map(\.description))
}

private func tap(_ key: Key, at time: Instant, hold: TimeSpan = .milliseconds(100)) -> [(time: Instant, input: LoopInput)] {
    [(time, .key(KeyEvent(key, .pressed, at: time))), (time + hold, .key(KeyEvent(key, .released, at: time + hold)))]
}

/// Waits in (from, to] that returned no input, and the deadline the idle wait asked for.
private func idleWakeups(_ source: CountingSource, from: Instant, to: Instant) -> (count: Int, deadline: Instant?) {
    let inWindow = source.waits.filter { $0.at > from && $0.at <= to }
    // The wait that slept through the window is the first one that returned after its start.
    let sleeper = source.waits.first { $0.at > from }
    return (inWindow.filter { $0.inputs == 0 }.count, sleeper?.deadline)
}

func measureKeypad(codes: Int) throws(HALError) -> KeypadFigures {
    let start = Instant.origin
    let idle = TimeSpan.seconds(600)
    // Idle on the ready screen: nothing but a stop 10 min later.
    let ready = try runKeypadRig(
        geometry: .lcd16x2, inputs: [(start + idle, .stop)], verifySteps: [.succeeds(after: .milliseconds(200))],
        maxAttempts: 3, fieldRow: 0)
    let readyIdle = idleWakeups(ready.source, from: start, to: start + idle)

    // A whole flow, then idle: press, a code typed and accepted, the countdown over at 60 s; stop at 130 + 600 s.
    var flow: [(time: Instant, input: LoopInput)] = ButtonScript.inputs(ButtonScript.press(at: start + .seconds(1), holdFor: .milliseconds(200)))
    var t = start + .seconds(3)
    for key in [Key.digit4, .digit7, .digit1, .digit1, .pound] {
        flow += tap(key, at: t)
        t = t + .milliseconds(300)
    }
    let settled = start + .seconds(130)
    flow.append((settled + idle, .stop))
    let afterFlow = try runKeypadRig(
        geometry: .lcd16x2, inputs: flow, verifySteps: [.succeeds(after: .milliseconds(200))],
        maxAttempts: 3, fieldRow: 0)
    let flowIdle = idleWakeups(afterFlow.source, from: settled, to: settled + idle)

    // Key to echo: `codes` codes of 6 digits, 300 ms apart, each rejected (unlimited attempts),
    // the first digits at an offset that walks through the countdown's ticks (7 ms per code).
    var echo: [(geometry: String, first: [Int64], typing: [Int64], firstLine: [Int64])] = []
    var violations = ready.violations + afterFlow.violations
    for (geometry, fieldRow) in [(LCDGeometry.lcd16x2, 0), (.lcd20x4, 3)] {
        var inputs: [(time: Instant, input: LoopInput)] = ButtonScript.inputs(
            ButtonScript.press(at: start + .seconds(1), holdFor: .milliseconds(200)))
        var presses: [Instant] = []
        var at = start + .seconds(2)
        for code in 0..<codes {
            var keyTime = at + .milliseconds(Int64(code % 143) * 7)
            for digit in 0..<6 {
                guard let key = Key.digit((code + digit) % 10) else { preconditionFailure("bench: a digit 0-9") }
                inputs += tap(key, at: keyTime)
                presses.append(keyTime)
                keyTime = keyTime + .milliseconds(300)
            }
            inputs += tap(.pound, at: keyTime)
            at = keyTime + .seconds(1)
        }
        inputs.append((at + .seconds(1), .stop))
        let run = try runKeypadRig(
            geometry: geometry, inputs: inputs, verifySteps: [.init(after: .milliseconds(200), .exited(code: 1))],
            maxAttempts: nil, fieldRow: fieldRow)
        precondition(run.echoes.count == presses.count, "bench: \(presses.count) digits typed, \(run.echoes.count) echoes seen on \(geometry.name)")
        precondition(
            run.lines.count == presses.count, "bench: \(presses.count) digits typed, \(run.lines.count) field lines seen on \(geometry.name)")
        let latencies = zip(presses, run.echoes).map { ($1 - $0).nanoseconds }
        let first = latencies.enumerated().filter { $0.offset % 6 == 0 }.map(\.element)
        let typing = latencies.enumerated().filter { $0.offset % 6 != 0 }.map(\.element)
        let firstLine = zip(presses, run.lines).enumerated().filter { $0.offset % 6 == 0 }.map { ($0.element.1 - $0.element.0).nanoseconds }
        echo.append((geometry.name, first, typing, firstLine))
        violations += run.violations
    }
    return KeypadFigures(
        idleReadyWakeups: readyIdle.count, idleReadyDeadline: readyIdle.deadline, idleAfterFlowWakeups: flowIdle.count,
        idleAfterFlowDeadline: flowIdle.deadline, echo: echo, window: .milliseconds(Int64(DeviceConfig.Keypad().debounceMs)),
        violations: violations)
}
