import HAL
import ResendConfig
import ResendCore

/// The program's version, printed by `--version`.
public let programVersion = "0.1.0"

/// Where the CLI writes: injected so tests can run commands and read what a user would see.
public struct Console {
    public var out: (String) -> Void
    public var err: (String) -> Void
    public var readFile: (String) -> String?
    /// Reads the configuration file (`--config`, or the default path): a missing file is told
    /// apart from an unreadable one. Tests give a fake so that no real /etc file leaks in.
    public var readConfig: (String) -> ConfigFileContents
    /// Reads a text file named on the command line (`config check FILE`, `--script-file`) with at
    /// most `limit` bytes, saying why it cannot (`what` names the file's role in the message about
    /// the limit). Without one given, `readFile` serves (its nil reads as a missing file).
    public var readText: (_ path: String, _ limit: Int, _ what: String) -> ConfigFileContents

    public init(
        out: @escaping (String) -> Void, err: @escaping (String) -> Void, readFile: @escaping (String) -> String?,
        readConfig: @escaping (String) -> ConfigFileContents = ConfigFileContents.read,
        readText: ((_ path: String, _ limit: Int, _ what: String) -> ConfigFileContents)? = nil
    ) {
        self.out = out
        self.err = err
        self.readFile = readFile
        self.readConfig = readConfig
        self.readText = readText ?? { path, _, _ in readFile(path).map(ConfigFileContents.text) ?? .missing }
    }
}

let topUsage = """
    usage: resend-button <command> [options]

    commands:
      simulate   run the device on mock hardware: the whole flow in the terminal (LCD, phone, keypad, door), or --headless on virtual time
      run        run on a Raspberry Pi: GPIO button and LED, HD44780 LCD on a PCF8574 I2C backpack
      check      diagnose GPIO chips, lines and I2C buses, and say what to fix
      config     config check FILE: validate a configuration file (JSON5)
      output     output off: drive the keypad's output line (door strike) inactive; the unit's stop hook

    Run 'resend-button <command> --help' for the options of a command.
    """

/// The largest `--script-file` read, 16 MiB: room for a few hundred thousand items, and a bound
/// for an endless file.
public let maximumScriptFileSize = 16 << 20

/// What a command line asks for, once parsed and validated (`parseCommandLine`).
public enum CommandLineAction {
    /// Print this on standard output and exit 0 (`--help`, `--version`).
    case print(String)
    /// `simulate --headless`: the options and the script, read and parsed.
    case simulateHeadless(SimulateOptions, script: [ScriptItem])
    /// `simulate` with the terminal UI.
    case simulateInteractive(SimulateOptions)
    case run(RunOptions)
    case check(CheckOptions)
    /// `config ...`: `runConfigCommand` parses its own few arguments.
    case config([String])
    /// `output ...`: `runOutputCommand` parses its own few arguments.
    case output([String])
    /// No command: the top-level usage on standard error, exit 64.
    case usage
}

/// Parses and validates the command line `arguments` (without the program name), reading only
/// what the options name through `console` (the configuration file, the script file): no
/// hardware, no event loop. Every bad input is an `ExitError` (one line, a sysexits code).
public func parseCommandLine(_ arguments: [String], console: Console) throws(ExitError) -> CommandLineAction {
    guard let command = arguments.first else { return .usage }
    let rest = Array(arguments.dropFirst())
    switch command {
    case "simulate":
        let options = try SimulateOptions.parse(rest, readConfig: console.readConfig)
        if options.help { return .print(SimulateOptions.help) }
        guard options.headless else { return .simulateInteractive(options) }
        let scriptText: String
        if let path = options.scriptFile {
            let contents = console.readText(path, maximumScriptFileSize, "a script file")
            guard let text = contents.text else {
                throw ExitError(.usage, "simulate: --script-file: cannot read \(shown(path)): \(contents.failureReason ?? "")")
            }
            scriptText = text
        } else {
            scriptText = options.script ?? ""
        }
        let script = try parseScript(scriptText, command: "simulate")
        try checkScriptNeedsNoKeypad(script, services: options.services)
        return .simulateHeadless(options, script: script)
    case "run":
        let options = try RunOptions.parse(rest, readConfig: console.readConfig)
        return options.help ? .print(RunOptions.help) : .run(options)
    case "check":
        let options = try CheckOptions.parse(rest, readConfig: console.readConfig)
        return options.help ? .print(CheckOptions.help) : .check(options)
    case "config":
        return .config(rest)
    case "output":
        return .output(rest)
    case "--help", "-h", "help":
        return .print(topUsage)
    case "--version", "version":
        return .print("resend-button \(programVersion)")
    default:
        var message = "resend-button: unknown command \(shown(command))"
        if let near = closestName(to: command, among: ["simulate", "run", "check", "config", "output"]) { message += "; did you mean '\(near)'?" }
        throw ExitError(.usage, message + " (commands: simulate, run, check, config, output)")
    }
}

/// Runs the command line `arguments` (without the program name) and returns the exit code.
/// Every failure is one line on `console.err` naming what is wrong, and a sysexits code.
public func runCommandLine(_ arguments: [String], console: Console, interactive: (SimulateOptions) throws(ExitError) -> Void) -> ExitCode {
    do throws(ExitError) {
        switch try parseCommandLine(arguments, console: console) {
        case .usage:
            console.err(topUsage)
            return .usage
        case .print(let text):
            console.out(text)
            return .ok
        case .simulateHeadless(let options, let script):
            try checkStatePath(options.services.stateFile, command: "simulate", fromFlag: true, configPath: "")
            try runHeadless(settings: options.settings, services: options.services, script: script, events: options.events, output: console.out)
            return .ok
        case .simulateInteractive(let options):
            try checkStatePath(options.services.stateFile, command: "simulate", fromFlag: true, configPath: "")
            try interactive(options)
            return .ok
        case .run(let options):
            try runDevice(options, console: console)
            return .ok
        case .check(let options):
            return runCheck(options, console: console)
        case .config(let rest):
            try runConfigCommand(rest, console: console)
            return .ok
        case .output(let rest):
            try runOutputCommand(rest, console: console)
            return .ok
        }
    } catch {
        console.err(error.message)
        return error.code
    }
}

/// The options of `resend-button simulate`.
public struct SimulateOptions: Sendable {
    public var settings = BehaviourSettings()
    /// The send command, state file, policy and real-time flag.
    public var services = SimulationServices()
    public var headless = false
    public var script: String?
    public var scriptFile: String?
    public var events = false
    public var help = false
    /// The key that gives a bouncy press in the interactive simulator.
    public var bounceKey: Character = "b"

    static let specs: [OptionSpec] =
        [
            OptionSpec(
                "config", value: "PATH",
                help:
                    "take cooldown, debounce, geometry, texts, policy and the keypad (keypad.enabled) from this configuration file (default \(DeviceConfig.defaultPath) when it exists); flags override it"
            )
        ] + BehaviourSettings.optionSpecs + [
            OptionSpec("headless", help: "no terminal UI: run --script on virtual time, instantly, printing every change of the screen and the LED"),
            OptionSpec(
                "script", value: "ITEMS",
                help:
                    "headless presses, e.g. \"press@0 bounce@30 press@60.5 end@90\" (times in s, or 500ms); with a keypad also key@T:5, keys@T:1234# (300 ms apart), down@T:K and up@T:K (K a key or button)"
            ),
            OptionSpec("script-file", value: "PATH", help: "read the headless script from a file (# starts a comment)"),
            OptionSpec("events", help: "headless: also print press accepted/ignored and countdown events"),
            OptionSpec("bounce-key", value: "KEY", help: "interactive: the key that gives a bouncy press (default b)"),
            OptionSpec(
                "button-only",
                help:
                    "the button and the LCD only: no keypad, phone or door (the interactive simulator's default is the whole flow, also without a configuration file)"
            ),
        ] + SimulationServices.optionSpecs + [
            OptionSpec("help", help: "show this help")
        ]

    public static var help: String {
        helpText(
            usage: "resend-button simulate [options]",
            summary:
                "The ResendButton on mock hardware: the real LCD driver drives an emulated HD44780 behind a PCF8574.\nInteractive: the whole flow. Space = Send: the code arrives on the phone beside the LCD;\n0-9 type it, enter or # = submit, backspace or * = erase a digit, x = clear the field,\nA-D (upper case) = letter keys, b = bouncy press, q or Ctrl-C = quit. The door shows DOOR OPEN\nwhile the output pulses. --button-only: the button and the LCD alone (space or enter = press).",
            specs: specs)
    }

    /// The configuration file's behaviour comes first (`--config PATH`, else
    /// `DeviceConfig.defaultPath` when it exists: cooldown, debounce, geometry, texts, policy), then
    /// the flags override it. The file's send command and state file belong to the device: the
    /// simulator takes them only from `--send-command`/`--mock-send` and `--state-file`.
    public static func parse(_ arguments: [String], readConfig: (String) -> ConfigFileContents = ConfigFileContents.read) throws(ExitError)
        -> SimulateOptions
    {
        var options = SimulateOptions()
        guard let parsed = try parseFlags(arguments, specs: specs, command: "simulate") else {
            options.help = true
            return options
        }
        let config = try DeviceConfig.load(for: parsed, read: readConfig)
        options.settings = config.behaviour
        try options.settings.apply(parsed, command: "simulate")
        options.headless = parsed.has("headless")
        options.events = parsed.has("events")
        var keypad = config.keypad.enabled ? config.keypad : nil
        if parsed.has("button-only") {
            keypad = nil
        } else if keypad == nil && !options.headless {
            keypad = .desktop
        }
        options.services = try SimulationServices.parse(parsed, headless: options.headless, keypad: keypad, command: "simulate")
        if parsed.value("cooldowns") == nil && parsed.value("max-sends") == nil {
            options.services.policy = config.resendPolicy  // policy flags replace the file's policy as a whole
        }
        options.services.logSendOutput = config.send.logOutput
        if config.mqtt.enabled {
            guard options.headless && options.services.realtime else {
                throw ExitError(.usage, "simulate: mqtt.enabled in the configuration needs --headless --realtime (a real broker runs on real time)")
            }
            options.services.mqtt = try MQTTSetup(config.mqtt, command: "simulate")
        }
        _ = try options.services.controllerConfig(options.settings, command: "simulate")
        try options.services.checkKeypad(options.settings, command: "simulate")
        options.script = parsed.value("script")
        options.scriptFile = parsed.value("script-file")
        if options.script != nil && options.scriptFile != nil {
            throw ExitError(.usage, "simulate: give either --script or --script-file, not both")
        }
        if !options.headless && (options.script != nil || options.scriptFile != nil) {
            throw ExitError(.usage, "simulate: --script and --script-file need --headless")
        }
        if let key = parsed.value("bounce-key") {
            let reserved: Set<Character> = [" ", "q", "Q"]
            guard key.count == 1, let character = key.first, character.isASCII, !reserved.contains(character),
                character.isLetter || character.isNumber
            else {
                throw ExitError(.usage, "simulate: --bounce-key: expected one letter or digit other than q, got \(shown(key))")
            }
            options.bounceKey = character
        }
        if options.services.keypad != nil, let byte = options.bounceKey.asciiValue,
            interactiveKeypadKey(byte) != nil || byte == interactiveClearKey
        {
            throw ExitError(
                .usage,
                "simulate: --bounce-key: \(shown(String(options.bounceKey))) is a keypad key in the simulator with a keypad; allowed: a letter other than q, x and A-D"
            )
        }
        return options
    }
}
