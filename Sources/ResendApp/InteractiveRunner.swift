import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore

extension TerminalKeyboard: KeySource {
    public func waitForKeys(until deadline: Instant?) throws(HALError) -> [KeyInput] {
        try wait(until: deadline).map { input in
            switch input {
            case .key(let byte): return .key(byte)
            case .stop, .endOfInput: return .stop
            case .resized: return .resized
            }
        }
    }
}

/// The interactive terminal simulator on real time: keys in, the emulated LCD drawn in place.
/// The terminal is restored on every way out (q, Ctrl-C, SIGTERM, an error).
public func runInteractive(_ options: SimulateOptions) throws(ExitError) {
    let keyboard: TerminalKeyboard
    do throws(HALError) {
        keyboard = try TerminalKeyboard()
    } catch {
        throw ExitError(.unavailable, "simulate: cannot use the terminal: \(error.operation): \(describe(error))")
    }
    guard keyboard.isTerminal else {
        throw ExitError(.usage, "simulate: standard input is not a terminal; use --headless --script for scripted runs")
    }
    let clock = SystemClock()
    var device = MockDevice(settings: options.settings, clock: clock, delay: SleepDelay())
    let output: (String) -> Void = { text in try? StandardStreams.writeOutput(text) }
    // Alternate screen, hidden cursor; undone below whatever happens.
    output("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    defer {
        output("\u{1B}[?25h\u{1B}[?1049l")
        try? keyboard.restore()
    }
    try device.startDisplay(now: clock.now())
    let keypad = options.services.keypad
    let line = RecordingLED(clock: clock)
    let renderer = TerminalRenderer(
        emulator: device.emulator, led: device.led, settings: options.settings, bounceKey: options.bounceKey, keypad: keypad != nil,
        outputLine: keypad?.output.line == nil ? nil : line, output: output)
    let coordinator = try options.services.coordinator(options.settings, command: "simulate")
    let source = KeyboardButton(
        keys: keyboard, clock: clock, bounceKey: options.bounceKey, clearHold: keypad.map { .milliseconds(Int64($0.entry.holdToClearMs)) })
    let environment = DeviceEnvironment(
        source: source, display: device.display, led: device.led, strike: line, clock: clock, observer: renderer,
        sender: try options.services.makeRunner(), verifier: try options.services.makeVerifier(), stateFile: options.services.stateFile,
        wallClock: SystemWallClock())
    do throws(HALError) {
        try runLoop(environment, coordinator: coordinator)
    } catch {
        throw ExitError(.ioError, "simulate: reading the keyboard failed: \(error.operation): \(describe(error))")
    }
}
