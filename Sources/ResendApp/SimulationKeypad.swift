import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendCore

// The simulator with a keypad (issue 14): when the configuration file enables `keypad`, the
// headless and the interactive simulator run the keypad's loop (`runKeypadLoop`, the one `run`
// uses) on the mock device: the emulated LCD, the LED, the output line as a recording mock, and
// the verify command (a real one on real time, `--verify-command`, or a scripted one,
// `--mock-verify`; without either every check fails, "Check failed", as on a device whose verify
// command cannot start).

extension SimulationServices {
    /// The verify flags (`--verify-command`, `--mock-verify`); they need the keypad.
    mutating func parseVerify(_ arguments: ParsedArguments, headless: Bool, command: String) throws(ExitError) {
        let commandText = arguments.value("verify-command")
        let mockText = arguments.value("mock-verify")
        for (flag, given) in [("verify-command", commandText != nil), ("mock-verify", mockText != nil)] where given && keypad == nil {
            throw ExitError(.usage, "\(command): --\(flag) needs the keypad: set keypad.enabled to true in the configuration file (--config PATH)")
        }
        if commandText != nil && mockText != nil {
            throw ExitError(.usage, "\(command): give either --verify-command or --mock-verify, not both")
        }
        if let commandText {
            let argv = commandText.split(separator: " ").map(String.init)
            guard !argv.isEmpty else { throw ExitError(.usage, "\(command): --verify-command: give the program and its arguments") }
            guard headless && realtime else {
                throw ExitError(.usage, "\(command): --verify-command runs a real process: use it with --headless --realtime (or --mock-verify on virtual time)")
            }
            verifyCommand = argv
        }
        if let mockText {
            mockVerify = try Self.parseMockVerify(mockText, command: command)
        }
    }

    /// `accept@1.5 reject@2 error@1 exit=3@1 timeout@10 notfound`, separated by spaces or commas:
    /// `--mock-send`'s syntax with the verify command's outcomes (exit 0 accepted, 1 rejected,
    /// anything else an error; a time-out is an error too).
    static func parseMockVerify(_ text: String, command: String) throws(ExitError) -> [ScriptedCommandRunner.Step] {
        var steps: [ScriptedCommandRunner.Step] = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
            if token == "notfound" {
                steps.append(.init(after: .zero, .couldNotStart(reason: "verify-command: ENOENT (2): no such file or directory", errno: 2)))
                continue
            }
            let parts = token.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let delay = parseTime(String(parts[1])) else {
                throw ExitError(.usage, "\(command): --mock-verify: \(shown(token)) is not OUTCOME@TIME (accept, reject, error, exit=N, timeout) or notfound")
            }
            guard delay <= ScriptItem.maximumTime else {
                throw ExitError(.usage, "\(command): --mock-verify: \(shown(token)): the time is after \(ScriptItem.maximumTimeText), the latest it may use")
            }
            let kind = parts[0]
            if kind == "accept" {
                steps.append(.init(after: delay, .exited(code: 0)))
            } else if kind == "reject" {
                steps.append(.init(after: delay, .exited(code: 1)))
            } else if kind == "error" {
                steps.append(.init(after: delay, .exited(code: 2)))
            } else if kind.hasPrefix("exit=") {
                // An exit status is one byte (wait(2)): 0-255.
                guard let code = Int32(kind.dropFirst(5)), (0...255).contains(code) else {
                    throw ExitError(.usage, "\(command): --mock-verify: \(shown(token)): the exit status must be a whole number from 0 to 255")
                }
                steps.append(.init(after: delay, .exited(code: code)))
            } else if kind == "timeout" {
                steps.append(.init(after: delay, .timedOut(after: delay, killed: false)))
            } else {
                throw ExitError(.usage, "\(command): --mock-verify: unknown outcome \(shown(kind)) (accept, reject, error, exit=N, timeout, notfound)")
            }
        }
        guard !steps.isEmpty else { throw ExitError(.usage, "\(command): --mock-verify: give at least one outcome") }
        return steps
    }

    /// The keypad's coordinator around `config` on `settings`' display, or why the keypad's entry
    /// rules cannot run there (a `--geometry` narrower than the configuration file's `lcd.geometry`).
    func keypadCoordinator(_ keypad: DeviceConfig.Keypad, config: ControllerConfig, settings: BehaviourSettings, command: String) throws(ExitError) -> KeypadCoordinator {
        if let problem = keypad.entryConfig(texts: keypad.texts, columns: settings.geometry.columns).problems(columns: settings.geometry.columns).first {
            throw ExitError(.usage, "\(command): the keypad's entry rules do not fit the \(settings.geometry.name) LCD: \(problem) (keypad.entry in the configuration file, or --geometry)")
        }
        return keypad.coordinator(controller: config)
    }

    /// Checks what the keypad needs before anything runs (`simulate` calls it while parsing).
    func checkKeypad(_ settings: BehaviourSettings, command: String) throws(ExitError) {
        guard let keypad else { return }
        _ = try keypadCoordinator(keypad, config: controllerConfig(settings, command: command), settings: settings, command: command)
    }

    /// The verify command these flags ask for.
    func makeVerifier() throws(ExitError) -> VerifyRunner {
        if let verifyCommand {
            let verify = keypad?.verify ?? DeviceConfig.Verify()
            do throws(HALError) {
                return .process(try ProcessRunner(.init(
                    arguments: verifyCommand, timeout: .seconds(Int64(verify.timeoutSeconds)), environment: verify.environment,
                    purpose: .verify)))
            } catch {
                throw ExitError(.ioError, "simulate: cannot prepare the verify command: \(error.operation): \(describe(error))")
            }
        }
        if let mockVerify { return .scripted(ScriptedCommandRunner(mockVerify)) }
        return .none
    }
}

/// The script's items that need the keypad, when there is none: a usage error naming them.
func checkScriptNeedsNoKeypad(_ script: [ScriptItem], services: SimulationServices) throws(ExitError) {
    guard services.keypad == nil, script.contains(where: { $0.needsKeypad }) else { return }
    throw ExitError(.usage, "simulate: the script's key items (key@, keys@, down@ and up@ of a key) need the keypad: set keypad.enabled to true in the configuration file (--config PATH); down@T:button and up@T:button hold the button without one")
}

/// `runHeadless` with the keypad: the same output (every change of the screen and the LED, and
/// of the output line: `3.620 output on`), on virtual time or, with `--realtime`, on real time.
func runHeadlessKeypad(
    _ keypad: DeviceConfig.Keypad, settings: BehaviourSettings, services: SimulationServices, script: [ScriptItem], events: Bool,
    output: @escaping (String) -> Void
) throws(ExitError) {
    let config = try services.controllerConfig(settings, command: "simulate")
    let pad = try services.keypadCoordinator(keypad, config: config, settings: settings, command: "simulate")
    if services.realtime {
        let clock = SystemClock()
        var device = MockDevice(settings: settings, clock: clock, delay: SleepDelay())
        try device.startDisplay(now: clock.now())
        let line = RecordingLED(clock: clock)
        let runner = try services.makeRunner()
        let verifier = try services.makeVerifier()
        var inner: LinuxEventSource
        do throws(HALError) {
            inner = try LinuxEventSource(button: nil)
        } catch {
            throw ExitError(.software, "simulate: cannot set up the event source: \(error.operation): \(describe(error))")
        }
        var started: [ProcessRunner] = []
        if case .process(let process) = runner { started.append(process) }
        if case .process(let process) = verifier { started.append(process) }
        let processes = started
        for process in processes {
            _ = inner.register(fileDescriptor: process.pollDescriptor) { () throws(HALError) -> [LoopInput] in try process.collect() }
        }
        let start = clock.now()
        let printer = HeadlessPrinter(
        emulator: device.emulator, led: device.led, start: start, events: events, outputLine: line,
        logSendOutput: services.logSendOutput, output: output)
        let source = RealtimeScriptSource(
            inner: inner, pending: scriptInputs(script, start: start), clock: clock, busy: { processes.contains { $0.runningCount > 0 } })
        do throws(HALError) {
            try runKeypadLoop(
                source: source, display: device.display, led: device.led, output: line, clock: clock, wall: SystemWallClock(),
                observer: printer, pad: pad, runner: runner, verifier: verifier, stateFile: services.stateFile)
        } catch {
            throw ExitError(.ioError, "simulate: waiting for events failed: \(error.operation): \(describe(error))")
        }
        return
    }
    let clock = ManualClock()
    var device = MockDevice(
        settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true))
    try device.startDisplay(now: clock.now())
    let line = RecordingLED(clock: clock)
    let start = clock.now()
    let printer = HeadlessPrinter(
        emulator: device.emulator, led: device.led, start: start, events: events, outputLine: line,
        logSendOutput: services.logSendOutput, output: output)
    let wall = ManualWallClock(services.virtualWallStart ?? SystemWallClock().now(), following: clock)
    let runner = try services.makeRunner()
    let verifier = try services.makeVerifier()
    do throws(HALError) {
        try runKeypadLoop(
            source: VirtualEventSource(clock: clock, inputs: scriptInputs(script, start: start)), display: device.display,
            led: device.led, output: line, clock: clock, wall: wall, observer: printer, pad: pad, runner: runner,
            verifier: verifier, stateFile: services.stateFile)
    } catch {
        throw ExitError(.software, "simulate: the virtual event source failed: \(error.operation)")
    }
    for violation in device.emulator.violations {
        output("violation \(violation)")
    }
}

/// The interactive simulator with the keypad: keys 0-9, `*`, `#` and A-D (upper case) go to the
/// keypad, `x` holds `*` long enough to clear the field.
func runInteractiveKeypad(
    _ keypad: DeviceConfig.Keypad, options: SimulateOptions, keyboard: TerminalKeyboard, output: @escaping (String) -> Void
) throws(ExitError) {
    let clock = SystemClock()
    var device = MockDevice(settings: options.settings, clock: clock, delay: SleepDelay())
    try device.startDisplay(now: clock.now())
    let line = RecordingLED(clock: clock)
    let renderer = TerminalRenderer(
        emulator: device.emulator, led: device.led, settings: options.settings, bounceKey: options.bounceKey, keypad: true,
        outputLine: keypad.output.line == nil ? nil : line, output: output)
    let config = try options.services.controllerConfig(options.settings, command: "simulate")
    let pad = try options.services.keypadCoordinator(keypad, config: config, settings: options.settings, command: "simulate")
    let runner = try options.services.makeRunner()
    let verifier = try options.services.makeVerifier()
    let source = KeyboardButton(
        keys: keyboard, clock: clock, bounceKey: options.bounceKey, clearHold: .milliseconds(Int64(keypad.entry.holdToClearMs)))
    do throws(HALError) {
        try runKeypadLoop(
            source: source, display: device.display, led: device.led, output: line, clock: clock, wall: SystemWallClock(),
            observer: renderer, pad: pad, runner: runner, verifier: verifier, stateFile: options.services.stateFile)
    } catch {
        throw ExitError(.ioError, "simulate: reading the keyboard failed: \(error.operation): \(describe(error))")
    }
}
