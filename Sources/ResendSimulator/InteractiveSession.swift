import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

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

/// The interactive terminal simulator on real time: keys in, the emulated LCD (and in the desktop
/// flow the phone and the door) drawn in place, sized to the terminal. The terminal is restored on
/// every way out (q, Ctrl-C, SIGTERM, an error).
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
    let output: (String) -> Void = { text in try? StandardStreams.writeOutput(text) }
    // Alternate screen, hidden cursor; undone below whatever happens.
    output("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
    defer {
        output("\u{1B}[?25h\u{1B}[?1049l")
        try? keyboard.restore()
    }
    let session = InteractiveSession(
        options, clock: clock, delay: SleepDelay(), wallClock: SystemWallClock(), random: .kernel(KernelRandom()),
        terminalSize: { HALLinux.terminalSize() }, output: output)
    try session.run(keys: keyboard)
}

/// One run of the interactive simulator, on any clock and any key source (the terminal on real
/// time, typed keys on virtual time in tests): the mock device, the renderer, and in the desktop
/// flow (`SimulationServices.phone`) the phone as the send service.
public final class InteractiveSession<Clock: MonotonicClock, Wait: Delay, Wall: WallClock> {
    public let options: SimulateOptions
    public let clock: Clock
    public let wallClock: Wall
    /// Where the codes made on the device come from (the kernel on a terminal).
    public let random: DeviceRandom
    public private(set) var device: MockDevice<Clock, Wait>
    /// The keypad's output line (the door in the desktop flow).
    public let outputLine: RecordingLED
    /// The phone, in the desktop flow.
    public let phone: SimulatedPhone?
    public let renderer: TerminalRenderer

    /// `bus` as for `MockDevice` (on virtual time a blocking one); `random` the source of the codes
    /// made on the device; `terminalSize` the terminal's columns and rows (nil: not a terminal).
    public init(
        _ options: SimulateOptions, clock: Clock, delay: Wait, bus: RecordingI2CBus? = nil, wallClock: Wall,
        random: DeviceRandom, terminalSize: @escaping () -> (columns: Int, rows: Int)?, output: @escaping (String) -> Void
    ) {
        self.options = options
        self.random = random
        self.clock = clock
        self.wallClock = wallClock
        device = MockDevice(settings: options.settings, clock: clock, delay: delay, bus: bus)
        outputLine = RecordingLED(clock: clock)
        let keypad = options.services.keypad
        phone = options.services.phone ? SimulatedPhone(start: clock.now()) : nil
        renderer = TerminalRenderer(
            emulator: device.emulator, led: device.led, settings: options.settings, bounceKey: options.bounceKey, keypad: keypad != nil,
            outputLine: keypad?.output.line == nil ? nil : outputLine, phone: phone, terminalSize: terminalSize, output: output)
    }

    /// Starts the display and runs the loop on `keys` until a quit key, a stop signal or the end of
    /// the keys (tests' typed keys end with a stop).
    public func run<Keys: KeySource>(keys: Keys) throws(ExitError) {
        try device.startDisplay(now: clock.now())
        let services = options.services
        let coordinator = try services.coordinator(options.settings, command: "simulate")
        var source = KeyboardButton(
            keys: keys, clock: clock, bounceKey: options.bounceKey,
            clearHold: services.keypad.map { .milliseconds(Int64($0.entry.holdToClearMs)) })
        let renderer = renderer
        let clock = clock
        source.onResize = { renderer.redraw(at: clock.now()) }
        var sender = try services.makeRunner()
        if let phone {
            // An SMS takes a second to arrive.
            sender = .inProcess(InProcessSend(delay: .seconds(1)) { input, at in phone.deliver(input, at: at) })
        }
        let environment = DeviceLoopEnvironment(
            source: source, display: device.display, outputs: Outputs(led: device.led, strike: outputLine),
            commands: .device(send: sender, verify: try services.makeVerifier()), clock: clock, wallClock: wallClock, observer: renderer,
            store: services.stateFile.map { StateFile(path: $0) }, random: random)
        do throws(HALError) {
            try runLoop(environment, coordinator: coordinator)
        } catch {
            throw ExitError(.ioError, "simulate: reading the keyboard failed: \(error.operation): \(describe(error))")
        }
    }
}
