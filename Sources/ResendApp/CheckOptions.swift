import CharacterLCD
import HAL
import ResendConfig

/// The options of `resend-button check`.
public struct CheckOptions: Sendable {
    public var button = LineSpec.defaultButton
    public var led: LineSpec?
    public var i2cBus = DeviceConfig.LCD.defaultBus
    public var address = AddressChoice.auto
    public var geometry = LCDGeometry.lcd16x2
    public var testPattern = false
    /// `--keypad-device PATH` (else `keypad.device` of an enabled evdev keypad in the
    /// configuration): the evdev keypad to mark in the list of input devices and to test with
    /// `--keys`.
    public var keypadDevice: String?
    public var help = false
    /// The configuration file whose `keypad` and `mqtt` sections `check` looks at (`--config`,
    /// else the default file when it exists).
    public var configPath = DeviceConfig.defaultPath
    /// That file's configuration (the defaults when it is missing or could not be read). Check
    /// reads only its `keypad` (lines listed when `keypad.enabled`) and `mqtt` (the broker reported
    /// when `mqtt.enabled`); the button, LED, bus and address come from the flags above.
    public var config = DeviceConfig()
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
        OptionSpec("i2c-bus", value: "N", help: "the I2C bus to scan, /dev/i2c-N (default \(DeviceConfig.LCD.defaultBus))"),
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
                "Diagnose the hardware: GPIO chips and lines (and who holds them), I2C buses and the addresses that answer,\ninput devices (keypads) and their keys, access rights, the configuration's keypad lines or device (--keys SECONDS tests its keys),\nthe MQTT broker when mqtt.enabled (reachable, TLS, authenticated, round trip),\nwhether the state file's directory survives a power cut (tmpfs, an overlay root in RAM).\nOne line per finding, OK or PROBLEM with what to do. Exit 0 when all is well, 69 when\nsomething is missing, 77 when only permissions are wrong, 78 when a keypad's state would be\nforgotten at a power cut, 64 for bad flags.",
            specs: specs)
    }

    /// Parses and validates every flag; reads only the configuration file (`readConfig`), whose
    /// failure becomes `configProblem` rather than an error, so `check` still looks at the rest.
    public static func parse(_ arguments: [String], readConfig: (String) -> ConfigFileContents = ConfigFileContents.read) throws(ExitError)
        -> CheckOptions
    {
        let command = "check"
        var options = CheckOptions()
        guard let parsed = try parseFlags(arguments, specs: specs, command: command) else {
            options.help = true
            return options
        }
        if let text = parsed.value("button") { options.button = try LineSpec.parse(text, option: "button", command: command) }
        if let text = parsed.value("led") { options.led = try LineSpec.parse(text, option: "led", command: command) }
        try LineSpec.checkLED(options.led, button: options.button, command: command)
        if let text = parsed.value("i2c-bus") {
            options.i2cBus = try parseInteger(text, option: "i2c-bus", range: DeviceConfig.LCD.busRange, unit: "a bus number", command: command)
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
            options.config = try DeviceConfig.load(for: parsed, read: readConfig)
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
        } else if options.config.keypad.enabled && options.config.keypad.backend == .evdev {
            options.keypadDevice = options.config.keypad.device
        }
        return options
    }
}
