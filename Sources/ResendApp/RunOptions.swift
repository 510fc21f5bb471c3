import HAL
import HALLinux
import ResendConfig
import ResendCore

/// The options of `resend-button run`: the configuration the device runs with, and what is not
/// configuration (where it was read from, where the state file was named, help).
public struct RunOptions: Sendable {
    /// The configuration file's values (the defaults where it is missing), each flag written over
    /// its own field: `--button` over `button.line`, `--duration` over `cooldown.seconds`,
    /// `--state-file off` as a nil `stateFile`, and so on.
    public var config = DeviceConfig()
    /// The configuration file read: `--config PATH`, else `DeviceConfig.defaultPath`.
    public var configPath = DeviceConfig.defaultPath
    /// True when `config.stateFile` comes from `--state-file`: a bad path is then a usage error
    /// (exit 64) rather than a configuration error (exit 78).
    public var stateFileFromFlag = false
    /// `--help`: print the help and run nothing (every other field keeps its default).
    public var help = false

    public init() {}

    /// `run`'s flags, in the order `--help` lists them: each section's flags are declared beside
    /// the code that writes them into that section's fields.
    static let specs: [OptionSpec] =
        [
            OptionSpec(
                "config", value: "PATH",
                help: "the configuration file (default \(DeviceConfig.defaultPath); missing there means all defaults); flags override it"),
            OptionSpec(
                "state-file", value: "PATH",
                help: "persist the countdown in PATH and resume it after a restart, or off (default \(DeviceConfig.defaultStateFile))"),
        ] + DeviceConfig.Button.flagSpecs + DeviceConfig.LED.flagSpecs + DeviceConfig.LCD.flagSpecs + [
            OptionSpec(
                "log-format", value: "FORMAT",
                help: listWithOr(LogFormat.allCases.map { $0 == DeviceConfig.Log().format ? "\($0.rawValue) (default)" : $0.rawValue })
                    + ": one line per event on standard error")
        ] + BehaviourSettings.optionSpecs + [OptionSpec("help", help: "show this help")]

    public static var help: String {
        helpText(
            usage: "resend-button run [options]",
            summary:
                "The ResendButton on a Raspberry Pi: a GPIO button (and LED), an HD44780 LCD on a PCF8574 I2C backpack.\nSIGINT or SIGTERM stops it: the LCD shows the stopped screen and the lines are released.",
            specs: specs)
    }

    /// Parses and validates every flag; does no I/O but reading the configuration file.
    /// `supportsKernelDebounce` is the libgpiod generation's (a compile-time fact).
    /// The configuration file comes first (`--config PATH`, else `DeviceConfig.defaultPath` when it
    /// exists), then every flag is written over its field. `readConfig` reads the file (tests pass
    /// a fake).
    public static func parse(
        _ arguments: [String], supportsKernelDebounce: Bool = LibGPIOD.supportsKernelDebounce,
        libgpiodVersion: String = LibGPIOD.version,
        readConfig: (String) -> ConfigFileContents = ConfigFileContents.read
    ) throws(ExitError) -> RunOptions {
        let command = "run"
        var options = RunOptions()
        guard let parsed = try parseFlags(arguments, specs: specs, command: command) else {
            options.help = true
            return options
        }
        options.configPath = parsed.value("config") ?? DeviceConfig.defaultPath
        options.config = try DeviceConfig.load(for: parsed, read: readConfig)
        let configPath = options.configPath
        if !supportsKernelDebounce, options.config.button.kernelDebounceMs != nil, parsed.value("kernel-debounce") == nil {
            throw ExitError(
                .config,
                "\(configPath): button.kernelDebounceMs needs libgpiod v2; this build uses libgpiod \(libgpiodVersion) (v1): remove the key, button.debounceMs does the debouncing"
            )
        }
        if let text = parsed.value("state-file") {
            options.config.stateFile = text == "off" ? nil : text
            options.stateFileFromFlag = true
            // Without the state file a restart would clear the wrong codes and the lockout: a
            // guesser could pull the plug between tries. There is no opt-out.
            if options.config.stateFile == nil && options.config.keypad.enabled {
                throw ExitError(
                    .usage,
                    "\(command): --state-file off with keypad.enabled (\(configPath)): the keypad's wrong codes and lockout must survive a restart; give --state-file PATH or leave it out (default \(DeviceConfig.defaultStateFile))"
                )
            }
        }
        try options.config.button.apply(parsed, supportsKernelDebounce: supportsKernelDebounce, libgpiodVersion: libgpiodVersion, command: command)
        try options.config.led.apply(parsed, button: options.config.button.lineSpec, command: command)
        try options.config.lcd.apply(parsed, configPath: configPath, command: command)
        if let text = parsed.value("log-format") {
            guard let format = LogFormat(rawValue: text) else {
                throw ExitError(
                    .usage, "\(command): --log-format: \(shown(text)) is not a format; use \(listWithOr(LogFormat.allCases.map { $0.rawValue }))")
            }
            options.config.log.format = format
        }
        try options.config.behaviour.apply(parsed, command: command)
        if let problem = options.config.controllerConfig.textProblems.first {
            throw ExitError(.usage, "\(command): \(problem.message)")
        }
        return options
    }
}

extension DeviceConfig.Button {
    /// `--button`, `--button-bias`, `--button-active-high`, `--kernel-debounce`.
    fileprivate static let flagSpecs = [
        OptionSpec("button", value: "LINE", help: "the button's GPIO line: a name like GPIO17 or gpiochipN:OFFSET (default \(Self().line))"),
        OptionSpec("button-bias", value: "BIAS", help: GPIOBias.helpList),
        OptionSpec("button-active-high", help: "the button connects the line to 3V3 (default: active-low, button to ground)"),
        OptionSpec(
            "kernel-debounce", value: "MS",
            help: "let the kernel debounce too, \(kernelDebounceRange.lowerBound)-\(kernelDebounceRange.upperBound) ms (libgpiod v2 only)"),
    ]

    /// Writes `--button`, `--button-bias`, `--button-active-high` and `--kernel-debounce` over
    /// these fields (`--debounce` and `--debounce-mode` go through `DeviceConfig.behaviour`).
    fileprivate mutating func apply(
        _ parsed: ParsedArguments, supportsKernelDebounce: Bool, libgpiodVersion: String, command: String
    ) throws(ExitError) {
        if let text = parsed.value("button") { lineSpec = try LineSpec.parse(text, option: "button", command: command) }
        if let text = parsed.value("button-bias") {
            guard let bias = GPIOBias(name: text) else {
                throw ExitError(
                    .usage,
                    "\(command): --button-bias: \(shown(text)) is not a bias; use \(GPIOBias.vocabulary.map { $0.name }.joined(separator: ", "))")
            }
            self.bias = bias
        }
        if parsed.has("button-active-high") { activeLow = false }
        if let text = parsed.value("kernel-debounce") {
            let value = try parseInteger(text, option: "kernel-debounce", range: Self.kernelDebounceRange, unit: "milliseconds", command: command)
            guard supportsKernelDebounce else {
                throw ExitError(
                    .usage,
                    "\(command): --kernel-debounce needs libgpiod v2; this build uses libgpiod \(libgpiodVersion) (v1): leave it out, --debounce does the debouncing"
                )
            }
            kernelDebounceMs = value
        }
    }
}

extension DeviceConfig.LED {
    /// `--led`, `--led-active-low`.
    fileprivate static let flagSpecs = [
        OptionSpec("led", value: "LINE", help: "an LED's GPIO line, lit while the button is ready to send (default: none)"),
        OptionSpec("led-active-low", help: "the LED lights when the line is low"),
    ]

    /// Writes `--led` and `--led-active-low` over these fields; the LED needs a line, and one
    /// that is not `button`'s.
    fileprivate mutating func apply(_ parsed: ParsedArguments, button: LineSpec, command: String) throws(ExitError) {
        if let text = parsed.value("led") { lineSpec = try LineSpec.parse(text, option: "led", command: command) }
        if parsed.has("led-active-low") {
            activeLow = true
            // The flag alone is a mistake the user typed; the file's `led.activeLow` without
            // `led.line` (an LED taken out by nulling its line) describes no LED and changes nothing.
            if line == nil { throw ExitError(.usage, "\(command): --led-active-low needs --led LINE") }
        }
        try LineSpec.checkLED(lineSpec, button: button, command: command)
    }
}

extension DeviceConfig.LCD {
    /// `--i2c-bus`, `--address`, `--refresh`.
    fileprivate static let flagSpecs = [
        OptionSpec("i2c-bus", value: "N", help: "the LCD's I2C bus /dev/i2c-N (default \(defaultBus))"),
        OptionSpec(
            "address", value: "ADDR",
            help: "the backpack's I2C address, 0xNN (default \(hexAddress(defaultAddress.rawValue))); 'resend-button check' finds it"),
        OptionSpec("refresh", value: "SECONDS", help: "re-initialise and repaint the LCD this often, against noise (default off)"),
    ]

    /// Writes `--i2c-bus`, `--address` and `--refresh` over these fields (`--geometry` goes
    /// through `DeviceConfig.behaviour`). `auto` is refused, from a flag (exit 64) or from the
    /// file at `configPath` (exit 78): see `autoAddressRefusal`. `--refresh off` turns off a
    /// refresh the file sets.
    fileprivate mutating func apply(_ parsed: ParsedArguments, configPath: String, command: String) throws(ExitError) {
        if let text = parsed.value("i2c-bus") {
            bus = try parseInteger(text, option: "i2c-bus", range: Self.busRange, unit: "a bus number", command: command)
        }
        if let text = parsed.value("address") {
            address = try AddressChoice.parse(text, command: command)
            if address == .auto { throw ExitError(.usage, "\(command): --address auto: " + autoAddressRefusal) }
        } else if address == .auto {
            throw ExitError(.config, "\(configPath): lcd.address: \"auto\" is for 'resend-button check' only: " + autoAddressRefusal)
        }
        if let text = parsed.value("refresh") {
            refreshSeconds =
                text == "off"
                ? nil : try parseInteger(text, option: "refresh", range: Self.refreshRange, unit: "whole seconds (or off)", command: command)
        }
    }
}
