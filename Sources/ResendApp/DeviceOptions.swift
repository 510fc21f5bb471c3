import CharacterLCD
import HAL
import HALLinux
import ResendConfig
import ResendCore

/// Where a GPIO line is, as the user wrote it: a line name ("GPIO17", found on whichever chip has
/// it) or a chip and offset ("gpiochip0:17").
public enum LineSpec: Hashable, Sendable {
    case named(String)
    case chipOffset(chip: Int, offset: UInt32)

    /// The Pi's GPIO17 (header pin 11): the default button line.
    public static let defaultButton = LineSpec.named("GPIO17")

    /// Parses `GPIO17` (any name without spaces or a colon) or `gpiochipN:OFFSET`; nil otherwise.
    public init?(parsing text: String) {
        guard lineNameProblem(text) == nil else { return nil }
        guard let colon = text.firstIndex(of: ":") else {
            self = .named(text)
            return
        }
        let chip = text[..<colon]
        let offset = text[text.index(after: colon)...]
        let prefix = "gpiochip"
        guard chip.hasPrefix(prefix), let number = parseDecimal(chip.dropFirst(prefix.count)),
            let offsetNumber = parseDecimal(offset), let line = UInt32(exactly: offsetNumber),
            let chipNumber = Int(exactly: number)
        else { return nil }
        self = .chipOffset(chip: chipNumber, offset: line)
    }

    /// "GPIO17" or "gpiochip0:17", as the user writes it.
    public var text: String {
        switch self {
        case .named(let name): return name
        case .chipOffset(let chip, let offset): return "gpiochip\(chip):\(offset)"
        }
    }

    /// The chip's device node for a chip-and-offset spec.
    public func location(deviceDirectory: String = "/dev") -> GPIOLineLocation? {
        guard case .chipOffset(let chip, let offset) = self else { return nil }
        return GPIOLineLocation(chipPath: "\(deviceDirectory)/gpiochip\(chip)", offset: offset)
    }
}

/// Digits only (no sign, no spaces), at most 9 of them.
private func parseDecimal(_ text: Substring) -> UInt64? {
    guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return UInt64(text)
}

/// `--address`: probe the backpack ranges, or a fixed 7-bit address.
public enum AddressChoice: Hashable, Sendable {
    case auto
    case fixed(I2CAddress)

    /// "auto", "0x27" (hex, `0x` or `0X`) or "39" (decimal). The address must be within
    /// 0x08-0x77 (`I2CAddress.validRange`). Throws a usage error naming `--address`.
    public static func parse(_ text: String, command: String) throws(ExitError) -> AddressChoice {
        if text == "auto" { return .auto }
        var value: UInt64?
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let digits = text.dropFirst(2)
            if !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ $0.isHexDigit }) { value = UInt64(digits, radix: 16) }
        } else {
            value = parseDecimal(Substring(text))
        }
        let range = "\(hexAddress(I2CAddress.validRange.lowerBound))-\(hexAddress(I2CAddress.validRange.upperBound))"
        guard let value else {
            throw ExitError(
                .usage, "\(command): --address: \(shown(text)) is not an address; use auto, 0xNN (hex) or a decimal number, within \(range)")
        }
        guard let byte = UInt8(exactly: value), let address = I2CAddress(byte) else {
            throw ExitError(
                .usage,
                "\(command): --address: \(shown(text)) is outside \(range), the 7-bit I2C addresses a device may use (PCF8574 backpacks: 0x20-0x27, PCF8574A: 0x38-0x3f)"
            )
        }
        return .fixed(address)
    }

    /// "auto" or "0x27".
    public var text: String {
        switch self {
        case .auto: return "auto"
        case .fixed(let address): return hexAddress(address.rawValue)
        }
    }
}

/// "0x27": two lower-case hex digits, as i2cdetect prints them.
public func hexAddress(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: false)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}

/// The options of `resend-button run`.
public struct RunOptions: Sendable {
    public var settings = BehaviourSettings()
    public var button = LineSpec.defaultButton
    public var buttonBias = GPIOBias.pullUp
    /// False (default): active-low, the button pulls the line to ground when pressed.
    public var buttonActiveHigh = false
    /// Kernel debounce in milliseconds (libgpiod v2 only); nil: none.
    public var kernelDebounceMilliseconds: Int?
    public var led: LineSpec?
    public var ledActiveLow = false
    public var i2cBus = RunOptions.defaultI2CBus
    /// 0x27, the common PCF8574T backpack; `auto` is refused by `parse`.
    public var address = AddressChoice.fixed(RunOptions.defaultAddress)
    /// Re-initialise and repaint the LCD every this many seconds; nil: never (default).
    public var refreshSeconds: Int?
    public var logFormat = LogFormat.plain
    /// The LCD's character ROM, backlight and backpack wiring (configuration file only).
    public var rom = CharacterROM.a00
    public var backlight = true
    public var wiring = PCF8574Wiring.common
    /// The send command (configuration file only); `send.command == nil`: none.
    public var send = DeviceConfig.Send()
    /// The code-entry keypad, its rules, verify command and output line (configuration file only);
    /// `keypad.enabled == false` (default): the single button, as before.
    public var keypad = DeviceConfig.Keypad()
    /// The MQTT link (configuration file only); `mqtt.enabled == false` (default): none.
    public var mqtt = DeviceConfig.MQTT()
    /// Where the countdown is persisted; nil (`--state-file off`): not persisted.
    public var stateFile: String? = DeviceConfig.defaultStateFile
    /// True when `stateFile` comes from `--state-file` (a bad path is then exit 64, else 78).
    public var stateFileFromFlag = false
    public var policy = ResendPolicy.off
    /// The configuration file read, and whether it was named with `--config`.
    public var configPath = DeviceConfig.defaultPath
    public var help = false

    public init() {}

    /// The options a configuration file sets; flags are applied over them.
    public init(config: DeviceConfig) {
        settings = config.behaviourSettings()
        button = LineSpec(parsing: config.button.line) ?? .named(config.button.line)
        buttonBias = config.button.bias
        buttonActiveHigh = !config.button.activeLow
        kernelDebounceMilliseconds = config.button.kernelDebounceMs
        led = config.led.line.map { LineSpec(parsing: $0) ?? .named($0) }
        ledActiveLow = config.led.activeLow
        i2cBus = config.lcd.bus
        switch config.lcd.address {
        case .auto: address = .auto
        case .fixed(let fixed): address = .fixed(fixed)
        }
        refreshSeconds = config.lcd.refreshSeconds
        logFormat = config.log.format == .json ? .json : .plain
        rom = config.lcd.rom
        backlight = config.lcd.backlight
        wiring = config.lcd.wiring
        send = config.send
        keypad = config.keypad
        mqtt = config.mqtt
        stateFile = config.stateFile
        policy = config.resendPolicy
    }

    /// The controller's configuration: the behaviour, the send command and the policy.
    public var controllerConfig: ControllerConfig {
        var config = settings.controllerConfig
        config.hasSendCommand = send.command != nil
        config.policy = policy
        return config
    }

    /// The Pi header's I2C bus (GPIO2 = SDA, GPIO3 = SCL).
    public static let defaultI2CBus = 1
    /// The common backpack (PCF8574T, all address jumpers open).
    public static let defaultAddress = I2CAddress(0x27)!
    public static let i2cBusRange = 0...1_023
    public static let kernelDebounceRange = 1...1_000
    public static let refreshRange = 1...86_400

    static let biasNames: [(name: String, bias: GPIOBias)] = [
        ("pull-up", .pullUp), ("pull-down", .pullDown), ("disabled", .disabled), ("as-is", .asIs),
    ]

    static let specs: [OptionSpec] =
        [
            OptionSpec(
                "config", value: "PATH",
                help: "the configuration file (default \(DeviceConfig.defaultPath); missing there means all defaults); flags override it"),
            OptionSpec(
                "state-file", value: "PATH",
                help: "persist the countdown in PATH and resume it after a restart, or off (default \(DeviceConfig.defaultStateFile))"),
            OptionSpec("button", value: "LINE", help: "the button's GPIO line: a name like GPIO17 or gpiochipN:OFFSET (default GPIO17)"),
            OptionSpec("button-bias", value: "BIAS", help: "pull-up (default), pull-down, disabled (external resistor) or as-is"),
            OptionSpec("button-active-high", help: "the button connects the line to 3V3 (default: active-low, button to ground)"),
            OptionSpec(
                "kernel-debounce", value: "MS",
                help: "let the kernel debounce too, \(kernelDebounceRange.lowerBound)-\(kernelDebounceRange.upperBound) ms (libgpiod v2 only)"),
            OptionSpec("led", value: "LINE", help: "an LED's GPIO line, lit while the button is ready to send (default: none)"),
            OptionSpec("led-active-low", help: "the LED lights when the line is low"),
            OptionSpec("i2c-bus", value: "N", help: "the LCD's I2C bus /dev/i2c-N (default \(defaultI2CBus))"),
            OptionSpec("address", value: "ADDR", help: "the backpack's I2C address, 0xNN (default 0x27); 'resend-button check' finds it"),
            OptionSpec("refresh", value: "SECONDS", help: "re-initialise and repaint the LCD this often, against noise (default off)"),
            OptionSpec("log-format", value: "FORMAT", help: "plain (default) or json: one line per event on standard error"),
        ] + BehaviourSettings.optionSpecs + [
            OptionSpec("help", help: "show this help")
        ]

    public static var help: String {
        helpText(
            usage: "resend-button run [options]",
            summary:
                "The ResendButton on a Raspberry Pi: a GPIO button (and LED), an HD44780 LCD on a PCF8574 I2C backpack.\nSIGINT or SIGTERM stops it: the LCD shows the stopped screen and the lines are released.",
            specs: specs)
    }

    /// Parses and validates every flag; does no I/O. `supportsKernelDebounce` is the libgpiod
    /// generation's (a compile-time fact).
    /// The configuration file comes first (`--config PATH`, else `DeviceConfig.defaultPath` when it
    /// exists), then every flag overrides it. `readConfig` reads the file (tests pass a fake).
    public static func parse(
        _ arguments: [String], supportsKernelDebounce: Bool = LibGPIOD.supportsKernelDebounce,
        libgpiodVersion: String = LibGPIOD.version,
        readConfig: (String) -> ConfigFileContents = ConfigFileContents.read
    ) throws(ExitError) -> RunOptions {
        let command = "run"
        let parsed = try parseArguments(arguments, specs: specs, command: command)
        if parsed.has("help") {
            var options = RunOptions()
            options.help = true
            return options
        }
        if let extra = parsed.positional.first {
            throw ExitError(.usage, "\(command): unexpected argument \(shown(extra)) (options start with --)")
        }
        let configPath = parsed.value("config") ?? DeviceConfig.defaultPath
        let config = try DeviceConfig.load(for: parsed, read: readConfig)
        if !supportsKernelDebounce, config.button.kernelDebounceMs != nil, parsed.value("kernel-debounce") == nil {
            throw ExitError(
                .config,
                "\(configPath): button.kernelDebounceMs needs libgpiod v2; this build uses libgpiod \(libgpiodVersion) (v1): remove the key, button.debounceMs does the debouncing"
            )
        }
        var options = RunOptions(config: config)
        options.configPath = configPath
        if let text = parsed.value("state-file") {
            options.stateFile = text == "off" ? nil : text
            options.stateFileFromFlag = true
            // Without the state file a restart would clear the wrong codes and the lockout: a
            // guesser could pull the plug between tries. There is no opt-out.
            if options.stateFile == nil && options.keypad.enabled {
                throw ExitError(
                    .usage,
                    "\(command): --state-file off with keypad.enabled (\(configPath)): the keypad's wrong codes and lockout must survive a restart; give --state-file PATH or leave it out (default \(DeviceConfig.defaultStateFile))"
                )
            }
        }
        if let text = parsed.value("button") { options.button = try parseLine(text, option: "button", command: command) }
        if let text = parsed.value("button-bias") {
            guard let bias = biasNames.first(where: { $0.name == text })?.bias else {
                throw ExitError(
                    .usage, "\(command): --button-bias: \(shown(text)) is not a bias; use \(biasNames.map { $0.name }.joined(separator: ", "))")
            }
            options.buttonBias = bias
        }
        if parsed.has("button-active-high") { options.buttonActiveHigh = true }
        if let text = parsed.value("kernel-debounce") {
            let value = try parseInteger(text, option: "kernel-debounce", range: kernelDebounceRange, unit: "milliseconds", command: command)
            guard supportsKernelDebounce else {
                throw ExitError(
                    .usage,
                    "\(command): --kernel-debounce needs libgpiod v2; this build uses libgpiod \(libgpiodVersion) (v1): leave it out, --debounce does the debouncing"
                )
            }
            options.kernelDebounceMilliseconds = value
        }
        if let text = parsed.value("led") { options.led = try parseLine(text, option: "led", command: command) }
        if parsed.has("led-active-low") { options.ledActiveLow = true }
        if options.ledActiveLow && options.led == nil {
            throw ExitError(.usage, "\(command): --led-active-low needs --led LINE")
        }
        if let led = options.led, led == options.button {
            throw ExitError(.usage, "\(command): --led: \(led.text) is the button's line; the LED needs a line of its own")
        }
        if let text = parsed.value("i2c-bus") {
            options.i2cBus = try parseInteger(text, option: "i2c-bus", range: i2cBusRange, unit: "a bus number", command: command)
        }
        if let text = parsed.value("address") {
            options.address = try AddressChoice.parse(text, command: command)
            if options.address == .auto { throw ExitError(.usage, "\(command): --address auto: " + autoAddressRefusal) }
        } else if options.address == .auto {
            throw ExitError(.config, "\(configPath): lcd.address: \"auto\" is for 'resend-button check' only: " + autoAddressRefusal)
        }
        if let text = parsed.value("refresh") {
            if text != "off" {
                options.refreshSeconds = try parseInteger(
                    text, option: "refresh", range: refreshRange, unit: "whole seconds (or off)", command: command)
            }
        }
        if let text = parsed.value("log-format") {
            guard let format = LogFormat(rawValue: text) else {
                throw ExitError(.usage, "\(command): --log-format: \(shown(text)) is not a format; use plain or json")
            }
            options.logFormat = format
        }
        try options.settings.apply(parsed, command: command)
        if let problem = options.controllerConfig.textProblems.first {
            throw ExitError(.usage, "\(command): \(problem.message)")
        }
        return options
    }

    /// "pull-up"
    public var biasName: String { Self.biasNames.first { $0.bias == buttonBias }?.name ?? "pull-up" }
}

/// The options of `resend-button check`.
public struct CheckOptions: Sendable {
    public var button = LineSpec.defaultButton
    public var led: LineSpec?
    public var i2cBus = RunOptions.defaultI2CBus
    public var address = AddressChoice.auto
    public var geometry = LCDGeometry.lcd16x2
    public var testPattern = false
    /// `--keypad-device PATH` (else `keypad.device` of an enabled evdev keypad in the
    /// configuration): the evdev keypad to mark in the list of input devices and to test with
    /// `--keys`.
    public var keypadDevice: String?
    public var help = false
    /// The configuration file whose `keypad` section `check` looks at (`--config`, else the
    /// default file when it exists); its keypad lines are listed when `keypad.enabled`.
    public var configPath = DeviceConfig.defaultPath
    public var keypad = DeviceConfig.Keypad()
    /// The configuration's `mqtt` section: with `mqtt.enabled`, check reports the broker.
    public var mqtt = DeviceConfig.MQTT()
    /// Why the configuration could not be read (a finding of its own; check goes on without it).
    public var configProblem: String?
    /// `--keys SECONDS`: test the keypad that long, printing every key pressed.
    public var keySeconds: Int?

    public init() {}

    /// `--keys`: whole seconds.
    public static let keySecondsRange = 1...300

    static let specs: [OptionSpec] = [
        OptionSpec("button", value: "LINE", help: "the button's GPIO line to look for: GPIO17 (default) or gpiochipN:OFFSET"),
        OptionSpec("led", value: "LINE", help: "the LED's GPIO line to look for (default: none)"),
        OptionSpec("i2c-bus", value: "N", help: "the I2C bus to scan, /dev/i2c-N (default \(RunOptions.defaultI2CBus))"),
        OptionSpec("address", value: "ADDR", help: "the backpack's address: auto (default) or 0xNN"),
        OptionSpec(
            "geometry", value: "COLSxROWS",
            help: "LCD size for the test pattern: \(LCDGeometry.supported.map { $0.name }.joined(separator: ", ")) (default 16x2)"),
        OptionSpec("test-pattern", help: "draw on the LCD: every cell dark, then its address and size"),
        OptionSpec(
            "config", value: "PATH", help: "the configuration file whose keypad section to check (default \(DeviceConfig.defaultPath), if it exists)"),
        OptionSpec("keys", value: "SECONDS", help: "test the keypad for SECONDS (1-300): every key pressed is printed"),
        OptionSpec(
            "keypad-device", value: "PATH",
            help: "the evdev keypad to mark among the input devices and to test with --keys (default: keypad.device of the configuration)"),
        OptionSpec("help", help: "show this help"),
    ]

    public static var help: String {
        helpText(
            usage: "resend-button check [options]",
            summary:
                "Diagnose the hardware: GPIO chips and lines (and who holds them), I2C buses and the addresses that answer,\ninput devices (keypads) and their keys, access rights, the configuration's keypad lines or device (--keys SECONDS tests its keys),\nthe MQTT broker when mqtt.enabled (reachable, TLS, authenticated, round trip).\nOne line per finding, OK or PROBLEM with what to do. Exit 0 when all is well, 69 when\nsomething is missing, 77 when only permissions are wrong, 64 for bad flags.",
            specs: specs)
    }

    /// Parses and validates every flag; reads only the configuration file (`readConfig`), whose
    /// failure becomes `configProblem` rather than an error, so `check` still looks at the rest.
    public static func parse(_ arguments: [String], readConfig: (String) -> ConfigFileContents = ConfigFileContents.read) throws(ExitError)
        -> CheckOptions
    {
        let command = "check"
        let parsed = try parseArguments(arguments, specs: specs, command: command)
        var options = CheckOptions()
        if parsed.has("help") {
            options.help = true
            return options
        }
        if let extra = parsed.positional.first {
            throw ExitError(.usage, "\(command): unexpected argument \(shown(extra)) (options start with --)")
        }
        if let text = parsed.value("button") { options.button = try parseLine(text, option: "button", command: command) }
        if let text = parsed.value("led") { options.led = try parseLine(text, option: "led", command: command) }
        if let led = options.led, led == options.button {
            throw ExitError(.usage, "\(command): --led: \(led.text) is the button's line; the LED needs a line of its own")
        }
        if let text = parsed.value("i2c-bus") {
            options.i2cBus = try parseInteger(text, option: "i2c-bus", range: RunOptions.i2cBusRange, unit: "a bus number", command: command)
        }
        if let text = parsed.value("address") { options.address = try AddressChoice.parse(text, command: command) }
        if let text = parsed.value("geometry") {
            guard let geometry = LCDGeometry(parsing: text) else {
                throw ExitError(
                    .usage,
                    "\(command): --geometry: \(shown(text)) is not a supported LCD size; use one of \(LCDGeometry.supported.map { $0.name }.joined(separator: ", "))"
                )
            }
            options.geometry = geometry
        }
        options.testPattern = parsed.has("test-pattern")
        if let text = parsed.value("keys") {
            options.keySeconds = try parseInteger(text, option: "keys", range: keySecondsRange, unit: "whole seconds", command: command)
        }
        options.configPath = parsed.value("config") ?? DeviceConfig.defaultPath
        do throws(ExitError) {
            let config = try DeviceConfig.load(for: parsed, read: readConfig)
            options.keypad = config.keypad
            options.mqtt = config.mqtt
        } catch {
            options.configProblem = error.message
        }
        if let path = parsed.value("keypad-device") {
            guard path.hasPrefix("/") && !path.hasSuffix("/") else {
                throw ExitError(
                    .usage,
                    "\(command): --keypad-device: \(shown(path)) is not an absolute path; use an input device such as /dev/input/by-id/usb-...-event-kbd"
                )
            }
            options.keypadDevice = path
        } else if options.keypad.enabled && options.keypad.backend == .evdev {
            options.keypadDevice = options.keypad.device
        }
        return options
    }
}

/// Why `run` refuses `auto`: a read of a PCF8574 returns its port pins, which no other chip in the
/// backpack ranges is obliged to differ from, so a lone responder cannot be identified without
/// writing to it; and LCD bytes reconfigure a register-based chip (MCP23008/MCP23017/PCA95xx
/// direction and output registers, a BH1750's mode, an OLED's commands).
public let autoAddressRefusal =
    "run writes the LCD's bytes only to an address you name, since a lone device answering in 0x20-0x27 or 0x38-0x3f may be another chip (an MCP23008 or PCA95xx expander, a BH1750, an AHT20, an OLED) that those bytes would reconfigure; 'resend-button check' finds the backpack and prints the line to use (lcd: { address: 0x27 } in the config, or --address 0x27)"

func parseLine(_ text: String, option: String, command: String) throws(ExitError) -> LineSpec {
    guard let line = LineSpec(parsing: text) else {
        throw ExitError(
            .usage, "\(command): --\(option): \(shown(text)) is not a GPIO line; use a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17")
    }
    return line
}
