import CharacterLCD
import HAL
import ResendCore

/// Everything the configuration file (`/etc/resend-button/config.json5`) sets: one struct, one
/// nested struct per section of the file, property names as the file's keys. The defaults are
/// those of `BehaviourSettings` and board/README.md; `board/config.example.json5` sets exactly
/// these defaults and documents every key, and docs/configuration.md lists every key (both
/// checked against `schema` by tests).
///
/// This type only holds validated plain values: the send command, state file, resend policy and
/// log format are carried out elsewhere.
public struct DeviceConfig: Hashable, Sendable {
    public var button = Button()
    public var led = LED()
    public var lcd = LCD()
    /// `display`: the character LCD or a 128x64 OLED (ConfigDisplay.swift).
    public var display = Display()
    public var cooldown = Cooldown()
    /// `texts.*`, `texts.lockoutLabel` included (shown while the resend policy locks sending out).
    public var texts = Texts()
    public var send = Send()
    /// `stateFile`: where the cooldown deadline (and the policy's history) is persisted; an
    /// absolute path. Nil: not persisted, which only `run --state-file off` says (the file has no
    /// word for it).
    public var stateFile: String? = DeviceConfig.defaultStateFile
    public var policy = Policy()
    public var log = Log()
    /// `keypad.*`: the code-entry keypad, its rules, verify command and output line (off by default).
    public var keypad = Keypad()
    /// `mqtt.*`: state and events on an MQTT broker, Home Assistant discovery (off by default).
    public var mqtt = MQTT()

    /// The defaults.
    public init() {}

    /// Where `run` and `simulate` look when no `--config` is given. A missing file there means
    /// "use the defaults"; a missing file given with `--config` is an error.
    public static let defaultPath = "/etc/resend-button/config.json5"
    public static let defaultStateFile = "/var/lib/resend-button/state.json"
    /// The largest configuration file read, 4 MiB: a real one is a few KiB; the cap only keeps an
    /// endless file (a copy of /dev/zero) from exhausting memory.
    public static let maximumFileSize = 4 << 20

    /// `button`: the push-button on a GPIO line.
    public struct Button: Hashable, Sendable {
        /// `button.line`: the GPIO line's name as the kernel knows it (gpioinfo), or `gpiochipN:OFFSET`.
        public var line = "GPIO17"
        /// `button.bias`: "pull-up" (a button to ground), "pull-down" (a button to 3V3), "disabled"
        /// (an external resistor), "as-is" (leave what the firmware set).
        public var bias = GPIOBias.pullUp
        /// `button.activeLow`: true when pressing pulls the line low (a button to ground).
        public var activeLow = true
        /// `button.debounceMs`: the debounce window in milliseconds.
        public var debounceMs = BehaviourSettings.defaultDebounceMilliseconds
        /// `button.debounceMode`: "stable" or "prompt" (see `DebounceMode`).
        public var debounceMode = DebounceMode.stable
        /// `button.kernelDebounceMs`: the kernel's own debounce period in milliseconds (libgpiod v2
        /// only); nil: none.
        public var kernelDebounceMs: Int? = nil

        public init() {}

        /// Debounce windows the file accepts, in milliseconds. Zero is refused: the `Debouncer`
        /// needs a window longer than zero.
        public static let debounceRange = 1...BehaviourSettings.debounceRange.upperBound
        public static let kernelDebounceRange = 1...1_000
    }

    /// `led`: the optional LED, lit while a press is accepted.
    public struct LED: Hashable, Sendable {
        /// `led.line`: the GPIO line's name; nil: no LED.
        public var line: String? = nil
        /// `led.activeLow`: true when the LED lights with the line low (wired to 3V3).
        public var activeLow = false

        public init() {}
    }

    /// `lcd`: the HD44780 character LCD behind a PCF8574 backpack.
    public struct LCD: Hashable, Sendable {
        /// `lcd.bus`: N of /dev/i2c-N (1 on the Pi's header).
        public var bus = LCD.defaultBus
        /// `lcd.address`: a 7-bit address (0x27, the common PCF8574T backpack, by default), or
        /// "auto", which `run` refuses (see `autoAddressRefusal`).
        public var address = Address.fixed(LCD.defaultAddress)
        /// `lcd.geometry`: columns x rows.
        public var geometry = LCDGeometry.lcd16x2
        /// `lcd.rom`: the character ROM, by the HD44780's part number suffix.
        public var rom = CharacterROM.a00
        /// `lcd.backlight`: whether the backlight is on.
        public var backlight = true
        /// `lcd.refreshSeconds`: repaint the whole screen this often, in seconds, to heal a display
        /// garbled by noise; nil: never (only after an I2C error).
        public var refreshSeconds: Int? = nil
        /// `lcd.wiring`: which PCF8574 port bit drives which LCD pin.
        public var wiring = PCF8574Wiring.common

        public init() {}

        /// The Pi header's I2C bus (GPIO2 = SDA, GPIO3 = SCL).
        public static let defaultBus = 1
        /// The common backpack (PCF8574T, all address jumpers open).
        public static let defaultAddress = I2CAddress(constant: 0x27)
        public static let busRange = 0...1_023
        public static let refreshRange = 1...86_400

        public enum Address: Hashable, Sendable {
            /// Probe 0x20-0x27 and 0x38-0x3F: for `check` only; `run` refuses it.
            case auto
            case fixed(I2CAddress)
        }
    }

    /// `cooldown`: how long the button stays disabled after a press.
    public struct Cooldown: Hashable, Sendable {
        /// `cooldown.seconds`: whole seconds.
        public var seconds = BehaviourSettings.defaultDuration

        public init() {}
    }

    /// `send`: the command that sends the code.
    public struct Send: CommandSection, Hashable, Sendable {
        /// `send.command`: program and arguments, run without a shell; nil: no command (the
        /// button only counts down).
        public var command: [String]? = nil
        /// `send.timeoutSeconds`: after this the command is stopped and the send counts as failed.
        public var timeoutSeconds = 10
        /// `send.environment`: variables added to the command's environment.
        public var environment: [String: String] = [:]
        /// `send.maxOutputBytes`: how much of the command's output is kept for the log (with
        /// `logOutput`).
        public var maxOutputBytes = 4_096
        /// `send.logOutput`: log the command's output (its first `maxOutputBytes`); false: only its
        /// length, since an SMS API's reply may echo the message, code included.
        public var logOutput = false

        public init() {}

        public static let timeoutRange = 1...3_600
        public static let maxOutputRange = 0...1_048_576
    }

    /// `policy`: the resend policy (off by default).
    public struct Policy: Hashable, Sendable {
        /// `policy.enabled`.
        public var enabled = false
        /// `policy.cooldowns`: the n-th send in a row cools down for the n-th entry, in seconds;
        /// the last entry repeats. Replaces `cooldown.seconds` while the policy is enabled.
        public var cooldowns = [60, 120, 300]
        /// `policy.resetAfterSeconds`: after this long without a send the escalation starts over.
        public var resetAfterSeconds = Int(ResendPolicy.defaultRunResetAfter.nanoseconds / 1_000_000_000)
        /// `policy.maxSends`: at most this many sends per `windowSeconds`; then a lockout.
        public var maxSends = 5
        /// `policy.windowSeconds`: the sliding window `maxSends` counts in, in seconds.
        public var windowSeconds = 3_600

        public init() {}

        public static let cooldownCountRange = 1...16
        public static let resetAfterRange = 1...604_800
        public static let maxSendsRange = 1...1_000
        /// One day at most, like a cooldown: the controller counts a lockout down from the window,
        /// and a countdown is at most `ControllerConfig.maximumDurationSeconds`. `--window` shares it.
        public static let windowRange = BehaviourSettings.durationRange
    }

    /// `log`: the event log on standard output.
    public struct Log: Hashable, Sendable {
        /// `log.format`: "plain" (for journald) or "json" (one object per line).
        public var format = Format.plain

        public init() {}

        public enum Format: String, Hashable, Sendable, CaseIterable {
            case plain
            case json
        }
    }

    /// The settings `simulate` and `run` share, read from and written to this configuration's own
    /// fields (`cooldown.seconds`, `lcd.geometry`, `button.debounceMs`, `button.debounceMode`,
    /// `texts`, `lcd.rom`): flags applied to it land in the file's fields.
    public var behaviour: BehaviourSettings {
        get {
            var settings = BehaviourSettings()
            settings.durationSeconds = cooldown.seconds
            settings.geometry = lcd.geometry
            settings.debounceMilliseconds = button.debounceMs
            settings.debounceMode = button.debounceMode
            settings.texts = texts
            settings.rom = lcd.rom
            return settings
        }
        set {
            cooldown.seconds = newValue.durationSeconds
            lcd.geometry = newValue.geometry
            button.debounceMs = newValue.debounceMilliseconds
            button.debounceMode = newValue.debounceMode
            texts = newValue.texts
            lcd.rom = newValue.rom
        }
    }

    /// The longest countdown the label must fit: `cooldown.seconds`, or the longest of
    /// `policy.cooldowns` when the policy is enabled.
    public var longestCooldownSeconds: Int {
        policy.enabled ? max(cooldown.seconds, policy.cooldowns.max() ?? 0) : cooldown.seconds
    }
}

extension DeviceConfig {
    /// `policy` as the controller takes it: off unless `policy.enabled`; then the escalating
    /// cooldowns, the run's idle reset and the cap of `maxSends` per `windowSeconds`.
    public var resendPolicy: ResendPolicy {
        guard policy.enabled else { return .off }
        return ResendPolicy(
            cooldowns: policy.cooldowns.map { .seconds(Int64($0)) },
            runResetAfter: .seconds(Int64(policy.resetAfterSeconds)),
            cap: ResendPolicy.Cap(maxSends: policy.maxSends, window: .seconds(Int64(policy.windowSeconds))))
    }

    /// The controller's configuration: the behaviour, whether there is a send command, the policy.
    public var controllerConfig: ControllerConfig {
        var config = behaviour.controllerConfig
        config.hasSendCommand = send.command != nil
        config.policy = resendPolicy
        return config
    }
}

/// A section of the file that names a program to run (`send`, `keypad.verify`): the keys they
/// share, read by one reader (`DeviceConfig.readCommandSection`).
public protocol CommandSection {
    /// `command`: program and arguments, run without a shell; nil: none.
    var command: [String]? { get set }
    /// `timeoutSeconds`: after this the command is stopped (`DeviceConfig.Send.timeoutRange`).
    var timeoutSeconds: Int { get set }
    /// `environment`: variables added to the command's environment.
    var environment: [String: String] { get set }
}
