import CharacterLCD
import HAL
import ResendConfig
import ResendCore
import ResendDevice

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
        // An OLED in the configuration: the simulator shows it, with the font's glyphs (exit 78
        // as config check for a missing font or glyph).
        if let controller = config.display.kind.oledController,
            let font = try config.loadOLEDFont(source: parsed.value("config") ?? DeviceConfig.defaultPath, read: DeviceConfig.readFontFile)
        {
            options.services.oled = SimulatedOLED(
                controller: controller, font: font, contrast: UInt8(config.display.contrast), flip: config.display.flip)
        }
        if options.services.picturePath != nil && (options.services.oled == nil || !options.headless) {
            throw ExitError(.usage, "simulate: --picture needs --headless and an OLED (display.kind \"ssd1306\" or \"sh1106\" in the configuration)")
        }
        if config.mqtt.enabled {
            guard options.headless && options.services.realtime else {
                throw ExitError(.usage, "simulate: mqtt.enabled in the configuration needs --headless --realtime (a real broker runs on real time)")
            }
            options.services.mqtt = try MQTTSetup(
                config, stateFile: options.services.stateFile, command: "simulate", machineIDFile: options.services.machineIDFile)
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
