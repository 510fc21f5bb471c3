import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

// The simulator with a keypad: when the configuration file enables `keypad`, the headless and the
// interactive simulator build the coordinator with the code entry (`deviceCoordinator`, as `run`
// does) and run the one loop (`runLoop`) on the mock device: the emulated LCD, the LED, the output
// line as a recording mock, and the verify command (a real one on real time, `--verify-command`,
// or a scripted one, `--mock-verify`; without either every check fails, "Check failed", as on a
// device whose verify command cannot start).

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
                throw ExitError(
                    .usage, "\(command): --verify-command runs a real process: use it with --headless --realtime (or --mock-verify on virtual time)")
            }
            verifyCommand = argv
        }
        if let mockText {
            mockVerify = try Self.parseMockVerify(mockText, command: command)
        }
    }

    /// `accept@1.5 reject@2 expired@1 tempfail@1 error@1 exit=4@1 timeout@10 notfound`, separated
    /// by spaces or commas: `--mock-send`'s syntax with the verify command's outcomes (the contract,
    /// `CommandExitStatus`: accept exits 0, reject 1, expired 3, tempfail 75, error 2).
    static func parseMockVerify(_ text: String, command: String) throws(ExitError) -> [ScriptedCommandRunner.Step] {
        var steps: [ScriptedCommandRunner.Step] = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
            if token == "notfound" {
                steps.append(.init(after: .zero, .couldNotStart(reason: "verify-command: ENOENT (2): no such file or directory", errno: 2)))
                continue
            }
            let parts = token.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let delay = parseTime(String(parts[1])) else {
                throw ExitError(
                    .usage,
                    "\(command): --mock-verify: \(shown(token)) is not OUTCOME@TIME (accept, reject, expired, tempfail, error, exit=N, timeout) or notfound"
                )
            }
            guard delay <= ScriptItem.maximumTime else {
                throw ExitError(
                    .usage, "\(command): --mock-verify: \(shown(token)): the time is after \(ScriptItem.maximumTimeText), the latest it may use")
            }
            let kind = parts[0]
            if kind == "accept" {
                steps.append(.init(after: delay, .exited(code: 0)))
            } else if kind == "reject" {
                steps.append(.init(after: delay, .exited(code: 1)))
            } else if kind == "error" {
                steps.append(.init(after: delay, .exited(code: 2)))
            } else if kind == "expired" {
                steps.append(.init(after: delay, .exited(code: CommandExitStatus.expired)))
            } else if kind == "tempfail" {
                steps.append(.init(after: delay, .exited(code: CommandExitStatus.temporaryFailure)))
            } else if kind.hasPrefix("exit=") {
                // An exit status is one byte (wait(2)): 0-255.
                guard let code = Int32(kind.dropFirst(5)), (0...255).contains(code) else {
                    throw ExitError(.usage, "\(command): --mock-verify: \(shown(token)): the exit status must be a whole number from 0 to 255")
                }
                steps.append(.init(after: delay, .exited(code: code)))
            } else if kind == "timeout" {
                steps.append(.init(after: delay, .timedOut(after: delay, killed: false)))
            } else {
                throw ExitError(
                    .usage,
                    "\(command): --mock-verify: unknown outcome \(shown(kind)) (accept, reject, expired, tempfail, error, exit=N, timeout, notfound)")
            }
        }
        guard !steps.isEmpty else { throw ExitError(.usage, "\(command): --mock-verify: give at least one outcome") }
        return steps
    }

    /// The device's coordinator for these flags on `settings`' display (the button debounced by
    /// `settings`, with the keypad's code entry when there is one), or why it cannot run: the
    /// resend policy, or the keypad's entry rules do not fit (a `--geometry` narrower than the
    /// configuration file's `lcd.geometry`).
    func coordinator(_ settings: BehaviourSettings, command: String) throws(ExitError) -> DeviceCoordinator {
        let config = try controllerConfig(settings, command: command)
        if let keypad,
            let problem = keypad.entryConfig(texts: keypad.texts, columns: settings.geometry.columns).problems(columns: settings.geometry.columns)
                .first
        {
            throw ExitError(
                .usage,
                "\(command): the keypad's entry rules do not fit the \(settings.geometry.name) LCD: \(problem) (keypad.entry in the configuration file, or --geometry)"
            )
        }
        return deviceCoordinator(controller: config, button: settings.makeDebouncer(), keypad: keypad)
    }

    /// Checks what the keypad needs before anything runs (`simulate` calls it while parsing).
    func checkKeypad(_ settings: BehaviourSettings, command: String) throws(ExitError) {
        guard keypad != nil else { return }
        _ = try coordinator(settings, command: command)
    }

    /// The verify command these flags ask for.
    func makeVerifier() throws(ExitError) -> CommandService {
        let verify = keypad?.verify ?? DeviceConfig.Verify()
        do throws(HALError) {
            return try .make(
                .verify, arguments: verifyCommand, timeout: .seconds(Int64(verify.timeoutSeconds)), environment: verify.environment,
                sessionDirectory: sessionDirectory, scripted: mockVerify)
        } catch {
            throw ExitError(.ioError, "simulate: cannot prepare the verify command: \(error.operation): \(describe(error))")
        }
    }
}

/// The script's items that need the keypad, when there is none: a usage error naming them.
public func checkScriptNeedsNoKeypad(_ script: [ScriptItem], services: SimulationServices) throws(ExitError) {
    guard services.keypad == nil, script.contains(where: { $0.needsKeypad }) else { return }
    throw ExitError(
        .usage,
        "simulate: the script's key items (key@, keys@, down@ and up@ of a key) need the keypad: set keypad.enabled to true in the configuration file (--config PATH); down@T:button and up@T:button hold the button without one"
    )
}
