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
        #expect(options.button == .named("GPIO5"))
        #expect(options.buttonBias == .pullDown)
        #expect(options.buttonActiveHigh)
        #expect(options.led == .named("GPIO6"))
        #expect(options.ledActiveLow)
        #expect(options.i2cBus == 3)
        #expect(options.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.settings.geometry == .lcd20x4)
        #expect(options.rom == .a02)
        #expect(options.backlight == false)
        #expect(options.refreshSeconds == 600)
        #expect(options.settings.durationSeconds == 90)
        #expect(options.settings.debounceMilliseconds == 30)
        #expect(options.settings.texts.title == "Anmeldung")
        #expect(options.send.command == ["/usr/local/bin/send-sms", "--to", "desk"])
        #expect(options.send.timeoutSeconds == 15)
        #expect(options.send.environment == ["GATEWAY": "x"])
        #expect(options.stateFile == "/srv/state.json")
        #expect(options.logFormat == .json)
        #expect(options.controllerConfig.hasSendCommand)
        #expect(options.configPath == "/c.json5")
    }

    @Test("flags override the file")
    func flagsOverride() throws {
        let options = try RunOptions.parse(
            ["--config", "/c.json5", "--duration", "30", "--button", "GPIO17", "--address", "0x3f", "--state-file", "off", "--log-format", "plain"],
            readConfig: Self.read)
        #expect(options.settings.durationSeconds == 30)
        #expect(options.button == .named("GPIO17"))
        #expect(options.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.stateFile == nil)
        #expect(options.logFormat == .plain)
        #expect(options.settings.texts.title == "Anmeldung")  // not overridden: still the file's
    }

    @Test("without --config a missing default file means the defaults; a missing --config file is exit 78")
    func missingFiles() throws {
        let defaults = try RunOptions.parse([], readConfig: { _ in .missing })
        #expect(defaults.button == .named("GPIO17"))
        #expect(defaults.stateFile == DeviceConfig.defaultStateFile)
        #expect(defaults.settings.durationSeconds == 60)
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
