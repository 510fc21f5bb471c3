import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// The deployable behaviour in the simulator (`simulate` flags): the send command (a real one, or a
/// scripted one on virtual time), the state file and the resend policy, and whether a headless run
/// goes on real time.
public struct SimulationServices: Sendable {
    /// `--state-file PATH`: persist the countdown there and resume from it at start.
    public var stateFile: String?
    /// `--send-command "ARGV..."`: a real command (split on spaces), run on real time only.
    public var sendCommand: [String]?
    /// `--send-timeout SECONDS`: SIGTERM after this, SIGKILL 2 s later.
    public var sendTimeout = TimeSpan.seconds(Int64(SimulationServices.defaultSendTimeoutSeconds))
    /// `--mock-send OUTCOMES`: a scripted send command (each send takes the next, the last repeats).
    public var mockSend: [ScriptedCommandRunner.Step]?
    /// The configuration file's `send.logOutput`: `--events` shows the send command's output
    /// rather than only its length.
    public var logSendOutput = false
    /// `--cooldowns`, `--max-sends`, `--window`.
    public var policy = ResendPolicy.off
    /// `--realtime`: a headless run waits for the script's times for real.
    public var realtime = false
    /// Where the wall clock of a virtual-time run starts; nil for the real wall time (tests set it).
    public var virtualWallStart: WallTime?
    /// The configuration file's `keypad` section when `keypad.enabled`: the simulator's coordinator
    /// then has the code entry (`coordinator(_:command:)`); nil: the single button.
    public var keypad: DeviceConfig.Keypad?
    /// The OLED shown instead of the LCD (`display.kind` in the configuration), nil for the LCD.
    public var oled: SimulatedOLED?
    /// `--picture PATH`: headless, with an OLED, the glass saved there as a PGM at the end.
    public var picturePath: String?
    /// `--verify-command "ARGV..."`: a real verify command (split on spaces; the code on its
    /// standard input), run on real time only; its time-out and environment are the configuration
    /// file's `keypad.verify`.
    public var verifyCommand: [String]?
    /// `--mock-verify OUTCOMES`: a scripted verify command (each check takes the next, the last repeats).
    public var mockVerify: [ScriptedCommandRunner.Step]?
    /// The desktop flow (the interactive simulator with a keypad and no `--mock-send`): the send
    /// command is the simulated phone beside the LCD (`InProcessSend`); the code is made on the
    /// device and checked by the program (`keypad.code.source` "device") unless `--mock-verify`
    /// decides.
    public var phone = false
    /// The session directory given to real commands (`SessionDirectory`); set by the run.
    public var sessionDirectory: String?
    /// The configuration file's `mqtt` section when `mqtt.enabled` (headless real time only):
    /// the simulated device publishes through a real MQTT client.
    var mqtt: MQTTSetup?
    /// Where the MQTT identity's machine id is read (`--machine-id-file`).
    var machineIDFile = MQTTIdentity.machineIDFile

    public static let defaultSendTimeoutSeconds = 10
    public static let sendTimeoutRange = 1...3_600

    public init() {}

    /// True when a press runs a send command.
    public var hasSendCommand: Bool { sendCommand != nil || mockSend != nil || phone }

    /// `settings`' controller configuration with this send command and policy, checked.
    public func controllerConfig(_ settings: BehaviourSettings, command: String) throws(ExitError) -> ControllerConfig {
        var config = settings.controllerConfig
        config.hasSendCommand = hasSendCommand
        config.policy = policy
        if let problem = config.textProblems.first {
            throw ExitError(.usage, "\(command): \(problem.message)")
        }
        return config
    }

    /// The option specs of these flags.
    static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            "picture", value: "PATH",
            help: "headless, with an OLED (display.kind in the configuration): save the glass at the end as a PGM picture in PATH"),
        OptionSpec(
            "state-file", value: "PATH",
            help: "persist the countdown in PATH (atomically) and resume it at start; an unreadable file is moved to PATH.corrupt-N"),
        OptionSpec(
            "machine-id-file", value: "PATH",
            help: "MQTT: take the machine id from PATH instead of /etc/machine-id (another panel's identity, docs/mqtt.md)"),
        OptionSpec(
            "send-command", value: "ARGV", help: "run this command on each press (split on spaces, no shell; with --headless it needs --realtime)"),
        OptionSpec(
            "send-timeout", value: "SECONDS",
            help:
                "SIGTERM the send command after this, SIGKILL 2 s later (\(sendTimeoutRange.lowerBound)-\(sendTimeoutRange.upperBound), default \(defaultSendTimeoutSeconds))"
        ),
        OptionSpec(
            "mock-send", value: "OUTCOMES",
            help:
                "a scripted send command: ok@T, fail@T (exit 1), tempfail@T (exit 75), exit=N@T, timeout@T, notfound; each send takes the next, the last repeats"
        ),
        OptionSpec(
            "cooldowns", value: "LIST",
            help: "escalating cooldowns in seconds, e.g. 60,120,300 (the n-th send in a row gets the n-th; the last repeats)"),
        OptionSpec("max-sends", value: "N", help: "cap: at most N sends per --window, then the label shows the lockout"),
        OptionSpec("window", value: "SECONDS", help: "the cap's window in seconds (with --max-sends)"),
        OptionSpec("realtime", help: "headless: run on real time (the script's times are waited for; SIGTERM stops it)"),
        OptionSpec(
            "verify-command", value: "ARGV",
            help:
                "keypad: check codes with this command (the code on its standard input; split on spaces, no shell; with --headless it needs --realtime)"
        ),
        OptionSpec(
            "mock-verify", value: "OUTCOMES",
            help:
                "keypad: a scripted verify command: accept@T, reject@T (exit 1), expired@T (exit 3), tempfail@T (exit 75), error@T (exit 2), exit=N@T, timeout@T, notfound; each check takes the next, the last repeats"
        ),
    ]

    /// Reads the flags; `headless` says whether the run is headless.
    static func parse(_ arguments: ParsedArguments, headless: Bool, keypad: DeviceConfig.Keypad? = nil, command: String) throws(ExitError)
        -> SimulationServices
    {
        var services = SimulationServices()
        services.keypad = keypad
        services.stateFile = arguments.value("state-file")
        services.picturePath = arguments.value("picture")
        services.machineIDFile = arguments.value("machine-id-file") ?? MQTTIdentity.machineIDFile
        services.realtime = arguments.has("realtime")
        if services.realtime && !headless {
            throw ExitError(.usage, "\(command): --realtime needs --headless (the interactive simulator always runs on real time)")
        }
        if let text = arguments.value("send-command") {
            let argv = text.split(separator: " ").map(String.init)
            guard !argv.isEmpty else { throw ExitError(.usage, "\(command): --send-command: give the program and its arguments") }
            guard headless && services.realtime else {
                throw ExitError(
                    .usage, "\(command): --send-command runs a real process: use it with --headless --realtime (or --mock-send on virtual time)")
            }
            services.sendCommand = argv
        }
        if let text = arguments.value("send-timeout") {
            let seconds = try parseInteger(text, option: "send-timeout", range: sendTimeoutRange, unit: "whole seconds", command: command)
            services.sendTimeout = .seconds(Int64(seconds))
        }
        if let text = arguments.value("mock-send") {
            guard services.sendCommand == nil else {
                throw ExitError(.usage, "\(command): give either --send-command or --mock-send, not both")
            }
            services.mockSend = try parseMockSend(text, command: command)
        }
        if let text = arguments.value("cooldowns") {
            var cooldowns: [TimeSpan] = []
            let counts = DeviceConfig.Policy.cooldownCountRange
            let items = text.split(separator: ",", omittingEmptySubsequences: false)
            guard counts.contains(items.count) else {
                throw ExitError(
                    .usage, "\(command): --cooldowns: \(items.count) cooldowns; give \(counts.lowerBound) to \(counts.upperBound), like 60,120,300")
            }
            for item in items {
                let seconds = try parseInteger(
                    String(item), option: "cooldowns", range: BehaviourSettings.durationRange, unit: "whole seconds per cooldown", command: command)
                cooldowns.append(.seconds(Int64(seconds)))
            }
            guard !cooldowns.isEmpty else { throw ExitError(.usage, "\(command): --cooldowns: give seconds like 60,120,300") }
            services.policy.cooldowns = cooldowns
        }
        try services.parseVerify(arguments, headless: headless, command: command)
        services.phone = !headless && keypad != nil && services.mockSend == nil
        if services.phone { services.keypad = keypad?.withPhone(scriptedVerify: services.mockVerify != nil) }
        if services.keypad?.code.source == .device && !services.hasSendCommand {
            throw ExitError(
                .usage,
                "\(command): keypad.code.source is \"device\": the code made on the device goes to a send command; give --mock-send (or --send-command with --headless --realtime)"
            )
        }
        switch (arguments.value("max-sends"), arguments.value("window")) {
        case (nil, nil):
            break
        case (let sends?, let window?):
            // The configuration file's ranges (policy.maxSends, policy.windowSeconds): one rule for both.
            let maxSends = try parseInteger(sends, option: "max-sends", range: DeviceConfig.Policy.maxSendsRange, unit: "sends", command: command)
            let seconds = try parseInteger(window, option: "window", range: DeviceConfig.Policy.windowRange, unit: "whole seconds", command: command)
            services.policy.cap = ResendPolicy.Cap(maxSends: maxSends, window: .seconds(Int64(seconds)))
        default:
            throw ExitError(.usage, "\(command): --max-sends and --window go together")
        }
        return services
    }

    /// `ok@1.5 fail@2 tempfail@1 exit=3@1 timeout@10 notfound`, separated by spaces or commas
    /// (tempfail exits 75, `CommandExitStatus.temporaryFailure`).
    static func parseMockSend(_ text: String, command: String) throws(ExitError) -> [ScriptedCommandRunner.Step] {
        var steps: [ScriptedCommandRunner.Step] = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
            if token == "notfound" {
                steps.append(.notFound)
                continue
            }
            let parts = token.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, let delay = parseTime(String(parts[1])) else {
                throw ExitError(
                    .usage, "\(command): --mock-send: \(shown(token)) is not OUTCOME@TIME (ok, fail, tempfail, exit=N, timeout) or notfound")
            }
            guard delay <= ScriptItem.maximumTime else {
                throw ExitError(
                    .usage, "\(command): --mock-send: \(shown(token)): the time is after \(ScriptItem.maximumTimeText), the latest it may use")
            }
            let kind = parts[0]
            if kind == "ok" {
                steps.append(.init(after: delay, .exited(code: 0), output: Array("sent\n".utf8)))
            } else if kind == "tempfail" {
                steps.append(.init(after: delay, .exited(code: CommandExitStatus.temporaryFailure), output: Array("rate limited\n".utf8)))
            } else if kind == "fail" {
                steps.append(.init(after: delay, .exited(code: 1), output: Array("gateway refused\n".utf8)))
            } else if kind.hasPrefix("exit=") {
                // An exit status is one byte (wait(2)): 0-255.
                guard let code = Int32(kind.dropFirst(5)), (0...255).contains(code) else {
                    throw ExitError(.usage, "\(command): --mock-send: \(shown(token)): the exit status must be a whole number from 0 to 255")
                }
                steps.append(.init(after: delay, .exited(code: code)))
            } else if kind == "timeout" {
                steps.append(.init(after: delay, .timedOut(after: delay, killed: false)))
            } else {
                throw ExitError(.usage, "\(command): --mock-send: unknown outcome \(shown(kind)) (ok, fail, tempfail, exit=N, timeout, notfound)")
            }
        }
        guard !steps.isEmpty else { throw ExitError(.usage, "\(command): --mock-send: give at least one outcome") }
        return steps
    }

    /// The runner these flags ask for.
    func makeRunner() throws(ExitError) -> CommandService {
        do throws(HALError) {
            return try .make(.send, arguments: sendCommand, timeout: sendTimeout, sessionDirectory: sessionDirectory, scripted: mockSend)
        } catch {
            throw ExitError(.ioError, "simulate: cannot prepare the send command: \(error.operation): \(describe(error))")
        }
    }
}
