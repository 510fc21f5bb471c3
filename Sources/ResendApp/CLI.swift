import HAL
import ResendConfig
import ResendCore
import ResendSimulator

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
