import CharacterLCD
import HAL
import HALLinux
import ResendCore
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

@Suite("Config file validation: every problem names the key, the value and what is allowed")
struct ConfigValidationTests {
    @Test(
        "a broken file gives its message and exit code 78",
        arguments: [
            // Wrong type: expected vs got.
            (
                "{cooldown: {seconds: \"60\"}}",
                "cooldown.seconds: expected whole seconds from 1 to 86400, got the string \"60\""
            ),
            ("{lcd: {backlight: \"yes\"}}", "lcd.backlight: expected true or false, got the string \"yes\""),
            ("{lcd: {bus: null}}", "lcd.bus: expected an I2C bus number (N of /dev/i2c-N) from 0 to 1023, got null"),
            (
                "{lcd: 5}",
                "lcd: expected an object { ... } with the keys bus, address, geometry, rom, backlight, refreshSeconds, wiring; got the number 5"
            ),
            ("[]", "expected an object { ... } at the top level, got an empty list"),
            ("{button: {line: \"\"}}", "button.line: must not be empty; allowed: a GPIO line name such as \"GPIO17\" (see gpioinfo)"),
            (
                "{button: {bias: \"pullup\"}}",
                "button.bias: \"pullup\" is not allowed; use one of \"pull-up\", \"pull-down\", \"disabled\", \"as-is\" (did you mean \"pull-up\"?)"
            ),
            ("{lcd: {rom: \"a02\"}}", "lcd.rom: \"a02\" is not allowed; use one of \"A00\", \"A02\" (did you mean \"A02\"?)"),
            ("{log: {format: 1}}", "log.format: expected one of \"plain\", \"json\", got the number 1"),
            // Out of range: the range.
            ("{cooldown: {seconds: 0}}", "cooldown.seconds: 0 is out of range; allowed: whole seconds from 1 to 86400"),
            ("{cooldown: {seconds: 90000}}", "cooldown.seconds: 90000 is out of range; allowed: whole seconds from 1 to 86400"),
            ("{cooldown: {seconds: 1.5}}", "cooldown.seconds: 1.5 is not a whole number; allowed: whole seconds from 1 to 86400"),
            ("{button: {debounceMs: 5000}}", "button.debounceMs: 5000 is out of range; allowed: whole milliseconds from 1 to 1000"),
            ("{button: {debounceMs: 0}}", "button.debounceMs: 0 is out of range; allowed: whole milliseconds from 1 to 1000"),
            ("{button: {kernelDebounceMs: 0}}", "button.kernelDebounceMs: 0 is out of range; allowed: null or whole milliseconds from 1 to 1000"),
            (
                "{lcd: {wiring: {rs: 9, rw: 0, enable: 1, backlight: 2, d4: 3, d5: 4, d6: 5, d7: 6}}}",
                "lcd.wiring.rs: 9 is out of range; allowed: a PCF8574 port bit from 0 to 7"
            ),
            ("{send: {timeoutSeconds: 0}}", "send.timeoutSeconds: 0 is out of range; allowed: whole seconds from 1 to 3600"),
            ("{send: {maxOutputBytes: -1}}", "send.maxOutputBytes: -1 is out of range; allowed: bytes from 0 to 1048576"),
            // I2C addresses.
            (
                "{lcd: {address: 0x07}}",
                "lcd.address: 0x07 is reserved by the I2C specification; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0x78}}",
                "lcd.address: 0x78 is reserved by the I2C specification; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: \"0x07\"}}",
                "lcd.address: 0x07 is reserved by the I2C specification; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0x7E}}",
                "lcd.address: 0x7E is reserved by the I2C specification; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0x4E0}}",
                "lcd.address: 0x4E0 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0xFE}}",
                "lcd.address: 0xFE is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F) (0xFE looks like an 8-bit address; the 7-bit one would be 0x7F)"
            ),
            // Numbers beyond 32 bits or negative: a message, never a trap (issue 10, item 5).
            (
                "{lcd: {address: 0x100000000}}",
                "lcd.address: 0x100000000 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 99999999999999999999}}",
                "lcd.address: 99999999999999999999 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0x10000000000000000}}",
                "lcd.address: 0x10000000000000000 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: -1}}",
                "lcd.address: -1 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 0x7FFFFFFF}}",
                "lcd.address: 0x7FFFFFFF is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: \"0x100000000\"}}",
                "lcd.address: 0x100000000 is not a 7-bit address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: 1.5}}",
                "lcd.address: expected \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F), got the number 1.5"
            ),
            (
                "{lcd: {bus: 99999999999999999999}}",
                "lcd.bus: 99999999999999999999 is out of range; allowed: an I2C bus number (N of /dev/i2c-N) from 0 to 1023"
            ),
            (
                "{cooldown: {seconds: -0x8000000000000001}}",
                "cooldown.seconds: -0x8000000000000001 is out of range; allowed: whole seconds from 1 to 86400"
            ),
            ("{cooldown: {seconds: 4294967356}}", "cooldown.seconds: 4294967356 is out of range; allowed: whole seconds from 1 to 86400"),
            ("{cooldown: {seconds: Infinity}}", "cooldown.seconds: Infinity is not a whole number; allowed: whole seconds from 1 to 86400"),
            ("{cooldown: {seconds: 6e-1}}", "cooldown.seconds: 6e-1 is not a whole number; allowed: whole seconds from 1 to 86400"),
            (
                "{lcd: {address: \"automatic\"}}",
                "lcd.address: \"automatic\" is not an address; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)"
            ),
            (
                "{lcd: {address: true}}",
                "lcd.address: expected \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F), got true"
            ),
            // Geometry.
            ("{lcd: {geometry: \"17x2\"}}", "lcd.geometry: \"17x2\" is not a supported LCD size; use one of \"16x2\", \"20x4\", \"40x2\""),
            // Unknown keys: the closest known key at the right path, or the section it belongs in.
            ("{cooldown: {durtion: 60}}", "cooldown.durtion: unknown key; allowed in cooldown: seconds"),
            ("{cooldown: {secnds: 60}}", "cooldown.secnds: unknown key (did you mean 'seconds'?); allowed in cooldown: seconds"),
            (
                "{cooldwn: {seconds: 60}}",
                "cooldwn: unknown key (did you mean 'cooldown'?); allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
            ),
            (
                "{button: {activelow: true}}",
                "button.activelow: unknown key (did you mean 'activeLow'?); allowed in button: line, bias, activeLow, debounceMs, debounceMode, kernelDebounceMs"
            ),
            (
                "{lcd: {wiring: {d8: 7}}}",
                "lcd.wiring.d8: unknown key (did you mean 'd4'?); allowed in lcd.wiring: rs, rw, enable, backlight, d4, d5, d6, d7, backlightActiveHigh"
            ),
            (
                "{geometry: \"20x4\"}",
                "geometry: unknown key (did you mean 'lcd.geometry'?); allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
            ),
            (
                "{\"lcd address\": 1}",
                "[\"lcd address\"]: unknown key (did you mean 'lcd'?); allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
            ),
            // Keys given twice.
            ("{cooldown: {seconds: 60,\n  seconds: 30}}", "cooldown.seconds: given twice (at 1:13 and 2:3); give each key once"),
            // Texts against the display's width and {s}.
            (
                "{texts: {countdownLabel: \"Please resend ({s})\"}}",
                "texts.countdownLabel: \"Please resend ({s})\" is 18 characters wide at 60 s (cooldown.seconds); the display has 16 columns (lcd.geometry \"16x2\")"
            ),
            (
                "{lcd: {geometry: \"8x1\"}}",
                "lcd.geometry: \"8x1\" has 1 row; the button needs 2 (status and label): use one of \"16x2\", \"20x4\", \"40x2\""
            ),
            (
                "{texts: {title: \"Verification code\"}}",
                "texts.title: \"Verification code\" is 17 characters wide; the display has 16 columns (lcd.geometry \"16x2\")"
            ),
            ("{texts: {countdownLabel: \"Resend\"}}", "texts.countdownLabel: \"Resend\" needs exactly one {s} for the seconds, found 0"),
            (
                "{texts: {title: \"Wait {s}\"}}",
                "texts.title: \"Wait {s}\" must not contain {s}: only texts.countdownLabel and texts.lockoutLabel show the seconds"
            ),
            (
                "{texts: {lockoutLabel: \"Locked out ({s})\"}, policy: {windowSeconds: 86400}}",
                "texts.lockoutLabel: \"Locked out ({s})\" is 18 characters wide at 86400 s (policy.windowSeconds); the display has 16 columns (lcd.geometry \"16x2\")"
            ),
            // One range with --window: a day at most (a window of 100000 s once crashed simulate and run).
            ("{policy: {windowSeconds: 100000}}", "policy.windowSeconds: 100000 is out of range; allowed: whole seconds from 1 to 86400"),
            // The rules of --button, --led and --state-file: no control characters, no spaces in a line name.
            ("{button: {line: \"GPIO\\u001b[2J17\"}}", "button.line: \"GPIO\\u001b[2J17\" contains a control character; a GPIO line name must not"),
            ("{led: {line: \"GPIO 27\"}}", "led.line: \"GPIO 27\" contains a space; a GPIO line name has none (see gpioinfo)"),
            ("{stateFile: \"/var/lib/a\\nb\"}", "stateFile: \"/var/lib/a\\nb\" contains a control character; a path must not"),
            (
                "{policy: {enabled: true, cooldowns: [60, 120, 12000]}, texts: {countdownLabel: \"Resend in ({s})\"}}",
                "texts.countdownLabel: \"Resend in ({s})\" is 17 characters wide at 12000 s (the longest cooldown); the display has 16 columns (lcd.geometry \"16x2\")"
            ),
            // Characters the ROM cannot show.
            (
                "{texts: {title: \"Grüße\"}}",
                "texts.title: \"Grüße\" has 'ß', which the A00 ROM cannot show (the A02 ROM can: set lcd.rom to \"A02\" if the module has it)"
            ),
            (
                "{texts: {resendLabel: \"~Resend~\"}}",
                "texts.resendLabel: \"~Resend~\" has '~', which the A00 ROM cannot show (the A02 ROM can: set lcd.rom to \"A02\" if the module has it)"
            ),
            (
                "{texts: {title: \"C:\\\\code\"}}",
                "texts.title: \"C:\\\\code\" has '\\', which the A00 ROM cannot show (the A02 ROM can: set lcd.rom to \"A02\" if the module has it)"
            ),
            (
                "{lcd: {rom: \"A02\"}, texts: {title: \"25°C\"}}",
                "texts.title: \"25°C\" has '°', which the A02 ROM cannot show (the A00 ROM can: set lcd.rom to \"A00\" if the module has it)"
            ),
            ("{texts: {title: \"Ω → 😀\"}}", "texts.title: \"Ω → 😀\" has '😀', which the A00 ROM cannot show"),
            (
                "{texts: {title: \"Cafe\\u0301\"}}",
                "texts.title: \"Café\" has U+0301, which the A00 ROM cannot show"
            ),
            // Duplicate wiring bits.
            (
                "{lcd: {wiring: {rs: 0, rw: 1, enable: 2, backlight: 3, d4: 4, d5: 5, d6: 6, d7: 4}}}",
                "lcd.wiring.d7: bit 4 is also used by lcd.wiring.d4; rs, rw, enable, backlight, d4, d5, d6 and d7 each need a bit of their own (0-7)"
            ),
            (
                "{lcd: {wiring: {rs: 4}}}",
                "lcd.wiring.rs: bit 4 is also used by lcd.wiring.d4 (its default; a wiring other than the common one must give all eight bits); rs, rw, enable, backlight, d4, d5, d6 and d7 each need a bit of their own (0-7)"
            ),
            // The policy.
            (
                "{policy: {cooldowns: []}}",
                "policy.cooldowns: the list is empty; allowed: a list of 1 to 16 cooldowns in whole seconds from 1 to 86400, e.g. [60, 120, 300]"
            ),
            ("{policy: {cooldowns: [60, -120]}}", "policy.cooldowns[1]: -120 is out of range; allowed: whole seconds from 1 to 86400"),
            (
                "{policy: {cooldowns: 60}}",
                "policy.cooldowns: expected a list of 1 to 16 cooldowns in whole seconds from 1 to 86400, e.g. [60, 120, 300], got the number 60"
            ),
            ("{policy: {maxSends: 0}}", "policy.maxSends: 0 is out of range; allowed: a number of sends from 1 to 1000"),
            ("{policy: {windowSeconds: -1}}", "policy.windowSeconds: -1 is out of range; allowed: whole seconds from 1 to 86400"),
            ("{policy: {resetAfterSeconds: 0}}", "policy.resetAfterSeconds: 0 is out of range; allowed: whole seconds from 1 to 604800"),
            // The send command: a list, never a shell line.
            (
                "{send: {command: \"send-code --to 123\"}}",
                "send.command: expected null or a list of strings, the program and its arguments, run without a shell, e.g. [\"/usr/local/bin/send-code\", \"--to\", \"+491701234567\"], got the string \"send-code --to 123\""
            ),
            (
                "{send: {command: []}}",
                "send.command: the list is empty; allowed: null or a list of strings, the program and its arguments, run without a shell, e.g. [\"/usr/local/bin/send-code\", \"--to\", \"+491701234567\"]"
            ),
            ("{send: {command: [\"/bin/send\", 5]}}", "send.command[1]: expected an argument (a string), got the number 5"),
            (
                "{send: {environment: {\"1X\": \"a\"}}}",
                "send.environment[\"1X\"]: \"1X\" is not an environment variable name; allowed: letters, digits and _, not starting with a digit"
            ),
            ("{send: {environment: {PORT: 5}}}", "send.environment.PORT: expected a string (write numbers in quotes), got the number 5"),
            (
                "{stateFile: \"state.json\"}",
                "stateFile: \"state.json\" is not an absolute path to a file; allowed: a path such as \"/var/lib/resend-button/state.json\""
            ),
        ])
    func brokenFile(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == ["t.json5: " + expected])
        #expect(outcome.out == [])
    }

    @Test("every problem of a file is listed, one line each, in the order of the schema")
    func allErrorsCollected() {
        let text = """
            {
              button: { debounceMs: 5000, bias: "up" },
              lcd: { address: 0x07, wiring: { d7: 9 } },
              cooldown: { seconds: 0 },
              texts: { title: "Grüße" },
              colour: "red",
            }
            """
        #expect(
            configProblems(text) == [
                ": button.bias: \"up\" is not allowed; use one of \"pull-up\", \"pull-down\", \"disabled\", \"as-is\"",
                ": button.debounceMs: 5000 is out of range; allowed: whole milliseconds from 1 to 1000",
                ": lcd.address: 0x07 is reserved by the I2C specification; allowed: \"auto\" or a 7-bit address from 0x08 to 0x77 (PCF8574: 0x20-0x27, PCF8574A: 0x38-0x3F)",
                ": lcd.wiring.d7: 9 is out of range; allowed: a PCF8574 port bit from 0 to 7",
                ": cooldown.seconds: 0 is out of range; allowed: whole seconds from 1 to 86400",
                ": colour: unknown key; allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt",
                ": texts.title: \"Grüße\" has 'ß', which the A00 ROM cannot show (the A02 ROM can: set lcd.rom to \"A02\" if the module has it)",
            ])
    }

    @Test("texts are not judged against a geometry or ROM the file got wrong: one mistake, one message")
    func noCascade() {
        #expect(
            configProblems("{lcd: {geometry: \"17x2\"}, texts: {title: \"A title far too long for any of them\"}}") == [
                ": lcd.geometry: \"17x2\" is not a supported LCD size; use one of \"16x2\", \"20x4\", \"40x2\""
            ])
        #expect(
            configProblems("{lcd: {rom: \"B00\"}, texts: {title: \"Grüße\"}}") == [
                ": lcd.rom: \"B00\" is not allowed; use one of \"A00\", \"A02\" (did you mean \"A00\"?)"
            ])
    }

    @Test(
        "the ROMs differ: a text one ROM shows is an error only for the other",
        arguments: [
            ("~", CharacterROM.a02, CharacterROM.a00),
            ("\\", .a02, .a00),
            ("ß", .a02, .a00),
            ("é", .a02, .a00),
            ("Ж", .a02, .a00),
            ("°", .a00, .a02),
            ("ｱ", .a00, .a02),
            ("円", .a00, .a02),
        ])
    func romDifference(character: String, shows: CharacterROM, refuses: CharacterROM) {
        func file(_ rom: CharacterROM) -> String {
            "{lcd: {rom: \"\(rom.rawValue)\"}, texts: {resendLabel: \"\(character == "\\" ? "\\\\" : character)\"}}"
        }
        #expect(configProblems(file(shows)) == [])
        let problems = configProblems(file(refuses))
        #expect(problems.count == 1)
        #expect(
            problems.first?.hasPrefix(
                ": texts.resendLabel: \"\(character == "\\" ? "\\\\" : character)\" has '\(character)', which the \(refuses.rawValue) ROM cannot show"
            ) == true)
    }

    @Test("'ä' and 'ö' are in both ROMs")
    func umlautsInBoth() {
        #expect(configProblems("{lcd: {rom: \"A00\"}, texts: {title: \"Bestätigung\", sentTitle: \"Code gesendet\"}}") == [])
        #expect(configProblems("{lcd: {rom: \"A02\"}, texts: {title: \"Bestätigung\", sentTitle: \"Code gesendet\"}}") == [])
    }

    @Test("an absent key keeps its default; null means none for the optional keys")
    func defaults() throws {
        #expect(try DeviceConfig.parse(text: "{}", source: "t") == DeviceConfig())
        #expect(
            try DeviceConfig.parse(
                text: "{button: {}, led: {}, lcd: {wiring: {}}, cooldown: {}, texts: {}, send: {}, policy: {}, log: {}}", source: "t")
                == DeviceConfig())
        #expect(
            try DeviceConfig.parse(
                text: "{led: {line: null}, send: {command: null, environment: null}, lcd: {refreshSeconds: null}, button: {kernelDebounceMs: null}}",
                source: "t") == DeviceConfig())
        let defaults = DeviceConfig()
        #expect(defaults.button.line == "GPIO17")
        #expect(defaults.button.bias == .pullUp)
        #expect(defaults.button.activeLow)
        #expect(defaults.button.debounceMs == BehaviourSettings.defaultDebounceMilliseconds)
        #expect(defaults.button.debounceMs == 20)
        #expect(defaults.button.debounceMode == .stable)
        #expect(defaults.led.line == nil)
        #expect(defaults.lcd.bus == 1)
        #expect(defaults.lcd.address == .fixed(I2CAddress(0x27)!))
        #expect(defaults.lcd.geometry == .lcd16x2)
        #expect(defaults.lcd.rom == .a00)
        #expect(defaults.lcd.wiring == .common)
        #expect(defaults.cooldown.seconds == BehaviourSettings.defaultDuration)
        #expect(defaults.cooldown.seconds == 60)
        #expect(defaults.texts == Texts())
        #expect(defaults.send.command == nil)
        #expect(defaults.send.timeoutSeconds == 10)
        #expect(defaults.send.maxOutputBytes == 4_096)
        #expect(defaults.stateFile == "/var/lib/resend-button/state.json")
        #expect(defaults.policy.enabled == false)
        #expect(defaults.policy.cooldowns == [60, 120, 300])
        #expect(defaults.log.format == .plain)
    }

    @Test("a file that sets every key round-trips into the struct")
    func fullFile() throws {
        let text = """
            {
              button: { line: "GPIO5", bias: "as-is", activeLow: false, debounceMs: 35, debounceMode: "prompt", kernelDebounceMs: 5 },
              led: { line: "GPIO6", activeLow: true },
              lcd: {
                bus: 3, address: "0x3f", geometry: "20x4", rom: "A02", backlight: false, refreshSeconds: 300,
                wiring: { rs: 6, rw: 5, enable: 4, backlight: 7, d4: 0, d5: 1, d6: 2, d7: 3, backlightActiveHigh: false },
              },
              cooldown: { seconds: 90 },
              texts: {
                title: "Bestätigung", sendLabel: "Code senden", sendingTitle: "Sende...", sentTitle: "Gesendet",
                countdownLabel: "Erneut ({s})", resendLabel: "Erneut senden", failedTitle: "Fehler", stoppedTitle: "Aus",
                stoppedLabel: "-", lockoutLabel: "Gesperrt {s}",
              },
              send: {
                command: ["/usr/local/bin/send-code", "--to", "+491701234567", ""],
                timeoutSeconds: 30,
                environment: { SMS_GATEWAY: "https://sms.example", RETRIES: "3" },
                maxOutputBytes: 0,
              },
              stateFile: "/run/resend/state.json",
              policy: { enabled: true, cooldowns: [30, 60, 600], resetAfterSeconds: 7200, maxSends: 3, windowSeconds: 1800 },
              log: { format: "json" },
            }
            """
        var expected = DeviceConfig()
        expected.button.line = "GPIO5"
        expected.button.bias = .asIs
        expected.button.activeLow = false
        expected.button.debounceMs = 35
        expected.button.debounceMode = .prompt
        expected.button.kernelDebounceMs = 5
        expected.led.line = "GPIO6"
        expected.led.activeLow = true
        expected.lcd.bus = 3
        expected.lcd.address = .fixed(try #require(I2CAddress(0x3F)))
        expected.lcd.geometry = .lcd20x4
        expected.lcd.rom = .a02
        expected.lcd.backlight = false
        expected.lcd.refreshSeconds = 300
        expected.lcd.wiring = try #require(
            PCF8574Wiring(rs: 6, rw: 5, enable: 4, backlight: 7, d4: 0, d5: 1, d6: 2, d7: 3, backlightActiveHigh: false))
        expected.cooldown.seconds = 90
        expected.texts.title = "Bestätigung"
        expected.texts.sendLabel = "Code senden"
        expected.texts.sendingTitle = "Sende..."
        expected.texts.sentTitle = "Gesendet"
        expected.texts.countdownLabel = "Erneut ({s})"
        expected.texts.resendLabel = "Erneut senden"
        expected.texts.failedTitle = "Fehler"
        expected.texts.stoppedTitle = "Aus"
        expected.texts.stoppedLabel = "-"
        expected.texts.lockoutLabel = "Gesperrt {s}"
        expected.send.command = ["/usr/local/bin/send-code", "--to", "+491701234567", ""]
        expected.send.timeoutSeconds = 30
        expected.send.environment = ["SMS_GATEWAY": "https://sms.example", "RETRIES": "3"]
        expected.send.maxOutputBytes = 0
        expected.stateFile = "/run/resend/state.json"
        expected.policy = DeviceConfig.Policy()
        expected.policy.enabled = true
        expected.policy.cooldowns = [30, 60, 600]
        expected.policy.resetAfterSeconds = 7200
        expected.policy.maxSends = 3
        expected.policy.windowSeconds = 1800
        expected.log.format = .json
        let config = try DeviceConfig.parse(text: text, source: "t.json5")
        #expect(config == expected)

        let settings = config.behaviour
        #expect(settings.durationSeconds == 90)
        #expect(settings.geometry == .lcd20x4)
        #expect(settings.debounceMilliseconds == 35)
        #expect(settings.debounceMode == .prompt)
        #expect(settings.texts == expected.texts)
    }

    @Test("the file's settings are the base; flags override them")
    func flagsOverrideFile() throws {
        let config = try DeviceConfig.parse(text: "{cooldown: {seconds: 90}, lcd: {geometry: \"20x4\"}, texts: {title: \"Hello\"}}", source: "t")
        var settings = config.behaviour
        let flags = try parseArguments(["--duration", "30"], specs: BehaviourSettings.optionSpecs, command: "simulate")
        try settings.apply(flags, command: "simulate")
        #expect(settings.durationSeconds == 30)
        #expect(settings.geometry == .lcd20x4)
        #expect(settings.texts.title == "Hello")
    }

    @Test(
        "the I2C address accepts a number, a hex string or auto",
        arguments: [
            ("0x27", 0x27), ("39", 0x27), ("\"0x27\"", 0x27), ("\"0X3F\"", 0x3F), ("0x08", 0x08), ("0x77", 0x77),
        ])
    func addresses(written: String, value: UInt8) throws {
        let config = try DeviceConfig.parse(text: "{lcd: {address: \(written)}}", source: "t")
        #expect(config.lcd.address == .fixed(try #require(I2CAddress(value))))
        #expect(try DeviceConfig.parse(text: "{lcd: {address: 'auto'}}", source: "t").lcd.address == .auto)
    }
}

@Suite("send and keypad.verify: one reader for a command section")
struct CommandSectionTests {
    @Test("a wrong command, timeout or environment is refused in the same words in send and in keypad.verify")
    func sameRules() {
        let section = "{command: [], timeoutSeconds: 0, environment: {\"1x\": \"v\"}}"
        let text = "{send: \(section), keypad: {verify: \(section)}}"
        var messages: [String] = []
        do throws(ConfigErrors) {
            _ = try DeviceConfig.parse(text: text, source: "c.json5")
        } catch {
            messages = error.errors.map { "\($0.path): \($0.message)" }
        }
        let send = messages.filter { $0.hasPrefix("send.") }.map { String($0.dropFirst("send.".count)) }
        let verify = messages.filter { $0.hasPrefix("keypad.verify.") }.map { String($0.dropFirst("keypad.verify.".count)) }
        #expect(send.count == 3)
        #expect(send == verify)
    }

    @Test("a valid command section is read into send and keypad.verify alike")
    func sameValues() throws {
        let section = "{command: [\"/bin/x\", \"-v\"], timeoutSeconds: 7, environment: {A: \"b\"}}"
        let config = try DeviceConfig.parse(text: "{send: \(section), keypad: {verify: \(section)}}", source: "c.json5")
        #expect(config.send.command == ["/bin/x", "-v"] && config.keypad.verify.command == ["/bin/x", "-v"])
        #expect(config.send.timeoutSeconds == 7 && config.keypad.verify.timeoutSeconds == 7)
        #expect(config.send.environment == ["A": "b"] && config.keypad.verify.environment == ["A": "b"])
    }
}
