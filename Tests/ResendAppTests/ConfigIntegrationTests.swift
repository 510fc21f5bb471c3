import CharacterLCD
import HAL
import HALLinux
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// `run` and `simulate` read the configuration file first; flags override it.
@Suite("Configuration file in run and simulate")
struct ConfigIntegrationTests {
    static let file = """
        {
          button: {line: "GPIO5", bias: "pull-down", activeLow: false, debounceMs: 30},
          led: {line: "GPIO6", activeLow: true},
          lcd: {bus: 3, address: 0x3f, geometry: "20x4", rom: "A02", backlight: false, refreshSeconds: 600},
          cooldown: {seconds: 90},
          texts: {title: "Anmeldung"},
          send: {command: ["/usr/local/bin/send-sms", "--to", "desk"], timeoutSeconds: 15, environment: {GATEWAY: "x"}},
          stateFile: "/srv/state.json",
          log: {format: "json"},
        }
        """

    static func read(_ path: String) -> ConfigFileContents { path == "/c.json5" ? .text(file) : .missing }

    @Test("run takes every setting from the file")
    func runFromFile() throws {
        let options = try RunOptions.parse(["--config", "/c.json5"], readConfig: Self.read)
        #expect(options.config.button.lineSpec == .named("GPIO5"))
        #expect(options.config.button.bias == .pullDown)
        #expect(!options.config.button.activeLow)
        #expect(options.config.led.lineSpec == .named("GPIO6"))
        #expect(options.config.led.activeLow)
        #expect(options.config.lcd.bus == 3)
        #expect(options.config.lcd.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.config.behaviour.geometry == .lcd20x4)
        #expect(options.config.lcd.rom == .a02)
        #expect(options.config.lcd.backlight == false)
        #expect(options.config.lcd.refreshSeconds == 600)
        #expect(options.config.behaviour.durationSeconds == 90)
        #expect(options.config.behaviour.debounceMilliseconds == 30)
        #expect(options.config.behaviour.texts.title == "Anmeldung")
        #expect(options.config.send.command == ["/usr/local/bin/send-sms", "--to", "desk"])
        #expect(options.config.send.timeoutSeconds == 15)
        #expect(options.config.send.environment == ["GATEWAY": "x"])
        #expect(options.config.stateFile == "/srv/state.json")
        #expect(options.config.log.format == .json)
        #expect(options.config.controllerConfig.hasSendCommand)
        #expect(options.configPath == "/c.json5")
    }

    @Test("flags override the file")
    func flagsOverride() throws {
        let options = try RunOptions.parse(
            ["--config", "/c.json5", "--duration", "30", "--button", "GPIO17", "--address", "0x3f", "--state-file", "off", "--log-format", "plain"],
            readConfig: Self.read)
        #expect(options.config.behaviour.durationSeconds == 30)
        #expect(options.config.button.lineSpec == .named("GPIO17"))
        #expect(options.config.lcd.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.config.stateFile == nil)
        #expect(options.config.log.format == .plain)
        #expect(options.config.behaviour.texts.title == "Anmeldung")  // not overridden: still the file's
    }

    @Test("every run flag is written over its own field of the file's configuration, and nothing else changes")
    func flagsLandInTheConfigFields() throws {
        let options = try RunOptions.parse(
            [
                "--config", "/c.json5", "--button", "gpiochip0:4", "--button-bias", "as-is", "--led", "GPIO27", "--i2c-bus", "2",
                "--address", "0x20", "--refresh", "60", "--log-format", "plain", "--state-file", "/run/s.json", "--duration", "45",
                "--geometry", "16x2", "--debounce", "40", "--debounce-mode", "prompt", "--title", "Login",
            ], readConfig: Self.read)
        var expected = try DeviceConfig.parse(text: Self.file, source: "/c.json5")
        expected.button.line = "gpiochip0:4"
        expected.button.bias = .asIs
        expected.led.line = "GPIO27"
        expected.lcd.bus = 2
        expected.lcd.address = .fixed(I2CAddress(0x20)!)
        expected.lcd.refreshSeconds = 60
        expected.log.format = .plain
        expected.stateFile = "/run/s.json"
        expected.cooldown.seconds = 45
        expected.lcd.geometry = .lcd16x2
        expected.button.debounceMs = 40
        expected.button.debounceMode = .prompt
        expected.texts.title = "Login"
        #expect(options.config == expected)
        #expect(options.stateFileFromFlag)
        #expect(options.config.controllerConfig.hasSendCommand)
    }

    @Test("--refresh off turns off the refresh the file sets")
    func refreshOffOverridesTheFile() throws {
        let read: (String) -> ConfigFileContents = { _ in .text("{lcd: {refreshSeconds: 600}}") }
        #expect(try RunOptions.parse(["--config", "/r.json5"], readConfig: read).config.lcd.refreshSeconds == 600)
        #expect(try RunOptions.parse(["--config", "/r.json5", "--refresh", "off"], readConfig: read).config.lcd.refreshSeconds == nil)
    }

    @Test("the file's led.activeLow without led.line is no LED, as config check says; --led-active-low alone is still refused")
    func activeLowWithoutALineInTheFile() throws {
        let read: (String) -> ConfigFileContents = { _ in .text("{led: {line: null, activeLow: true}}") }
        let options = try RunOptions.parse(["--config", "/a.json5"], readConfig: read)
        #expect(options.config.led.lineSpec == nil)
        let error = exitError { () throws(ExitError) in try RunOptions.parse(["--config", "/a.json5", "--led-active-low"], readConfig: read) }
        #expect(error?.code == .usage)
        #expect(error?.message == "run: --led-active-low needs --led LINE")
        #expect(try RunOptions.parse(["--config", "/a.json5", "--led", "GPIO27"], readConfig: read).config.led.activeLow)
    }

    @Test("an LED on the button's line is refused by config check and by run alike: exit 78 at led.line, not a flag's usage error")
    func ledOnTheButtonsLineInTheFile() {
        let file = #"{button: {line: "GPIO17"}, led: {line: "GPIO17"}}"#
        let message = #"t.json5: led.line: "GPIO17" is also button.line; allowed: a GPIO line of its own"#
        let checked = checkConfig(file)
        #expect(checked.code == .config)
        #expect(checked.err == [message])
        let error = exitError { () throws(ExitError) in try RunOptions.parse(["--config", "t.json5"], readConfig: { _ in .text(file) }) }
        #expect(error?.code == .config)
        #expect(error?.message.hasSuffix(#"led.line: "GPIO17" is also button.line; allowed: a GPIO line of its own"#) == true)
        let flags = exitError { () throws(ExitError) in try RunOptions.parse(["--button", "GPIO5", "--led", "GPIO5"], readConfig: { _ in .missing }) }
        #expect(flags?.code == .usage)
        #expect(flags?.message == "run: --led: GPIO5 is the button's line; the LED needs a line of its own")
    }

    @Test("the file's button and LED lines read back as the same specs the flags give")
    func configuredLinesAreSpecs() throws {
        let options = try RunOptions.parse(["--config", "/l.json5"]) { _ in .text("{button: {line: \"gpiochip1:7\"}, led: {line: \"GPIO6\"}}") }
        #expect(options.config.button.lineSpec == .chipOffset(chip: 1, offset: 7))
        #expect(options.config.led.lineSpec == .named("GPIO6"))
        #expect(try RunOptions.parse(["--button", "gpiochip1:7"], readConfig: { _ in .missing }).config.button == options.config.button)
    }

    @Test("without --config a missing default file means the defaults; a missing --config file is exit 78")
    func missingFiles() throws {
        let defaults = try RunOptions.parse([], readConfig: { _ in .missing })
        #expect(defaults.config.button.lineSpec == .named("GPIO17"))
        #expect(defaults.config.stateFile == DeviceConfig.defaultStateFile)
        #expect(defaults.config.behaviour.durationSeconds == 60)
        #expect(throws: ExitError.self) { try RunOptions.parse(["--config", "/nope.json5"], readConfig: { _ in .missing }) }
        do {
            _ = try RunOptions.parse(["--config", "/nope.json5"], readConfig: { _ in .missing })
        } catch {
            #expect(error.code == .config)
            #expect(error.message == "/nope.json5: no such configuration file")
        }
    }

    @Test("a broken default file is exit 78 naming the key, for run and simulate alike")
    func brokenFile() {
        let read: (String) -> ConfigFileContents = { _ in .text("{cooldown: {secnds: 5}}") }
        for arguments in [["run"], ["simulate", "--headless"]] {
            let result = runCaptured(arguments, readConfig: read)
            #expect(result.code == .config)
            #expect(
                result.err == [
                    "/etc/resend-button/config.json5: cooldown.secnds: unknown key (did you mean 'seconds'?); allowed in cooldown: seconds"
                ])
        }
    }

    @Test("kernel debounce in the file on a libgpiod v1 build is exit 78 and says why")
    func kernelDebounceOnV1() {
        let read: (String) -> ConfigFileContents = { _ in .text("{button: {kernelDebounceMs: 5}}") }
        do {
            _ = try RunOptions.parse(["--config", "/k.json5"], supportsKernelDebounce: false, libgpiodVersion: "1.6.3", readConfig: read)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .config)
            #expect(error.message.hasPrefix("/k.json5: button.kernelDebounceMs needs libgpiod v2"))
        }
    }

    @Test("an enabled policy checks the countdown label at the longest cooldown")
    func policyWidth() {
        let read: (String) -> ConfigFileContents = { _ in
            .text("{policy: {enabled: true, cooldowns: [60, 600]}, texts: {countdownLabel: \"Please wait ({s})\"}}")
        }
        do {
            _ = try RunOptions.parse(["--config", "/p.json5"], readConfig: read)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .config)
            #expect(error.message.contains("texts.countdownLabel"))
            #expect(error.message.contains("600 s"))
        }
    }

    @Test("simulate shows the file's texts and cooldown, and a flag overrides the cooldown")
    func simulateFromFile() {
        let file = "{cooldown: {seconds: 5}, texts: {title: \"Sign in\", countdownLabel: \"Again in {s}\"}}"
        let fromFile = runCLI(["simulate", "--headless", "--config", "c.json5", "--script", "press@0"], files: ["c.json5": file])
        #expect(fromFile.code == .ok)
        #expect(fromFile.out.contains("0.020 screen |Sign in         |Again in 05     |"))
        #expect(fromFile.out.contains("5.020 screen |Sign in         |Resend          |"))
        let overridden = runCLI(
            ["simulate", "--headless", "--config", "c.json5", "--duration", "3", "--script", "press@0"], files: ["c.json5": file])
        #expect(overridden.out.contains("0.020 screen |Sign in         |Again in 03     |"))
    }

    @Test("simulate takes the file's resend policy: escalating cooldowns")
    func simulatePolicy() {
        let file = "{policy: {enabled: true, cooldowns: [2, 4], maxSends: 10, windowSeconds: 3600}}"
        let result = runCLI(["simulate", "--headless", "--config", "c.json5", "--script", "press@0 press@3"], files: ["c.json5": file])
        #expect(result.code == .ok)
        #expect(result.out.contains { $0.hasSuffix("|Resend (02)     |") })
        #expect(result.out.contains("3.020 screen |Verification    |Resend (04)     |"))
    }
}
