import CharacterLCD
import HAL
import HALLinux
import ResendApp
import ResendConfig
import ResendDevice
import ResendSimulator
import Testing

/// Runs `body`; returns the ExitError it threw, or nil.
func exitError<T>(_ body: () throws(ExitError) -> T) -> ExitError? {
    do throws(ExitError) {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

struct FlagCase: Sendable, CustomTestStringConvertible {
    var arguments: [String]
    var message: String
    var testDescription: String { arguments.joined(separator: " ") }
}

struct DeviceOptionsTests {
    static let badRunFlags: [FlagCase] = [
        FlagCase(
            arguments: ["--button", "gpiochip0:x"],
            message: "run: --button: 'gpiochip0:x' is not a GPIO line; use a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17"),
        FlagCase(
            arguments: ["--button", "chip0:17"],
            message: "run: --button: 'chip0:17' is not a GPIO line; use a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17"),
        FlagCase(arguments: ["--button", "GPIO 17"], message: "run: --button: 'GPIO 17' contains a space; a GPIO line name has none (see gpioinfo)"),
        FlagCase(arguments: ["--button="], message: "run: --button: '' is empty; give a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17"),
        FlagCase(arguments: ["--button-bias", "up"], message: "run: --button-bias: 'up' is not a bias; use pull-up, pull-down, disabled, as-is"),
        FlagCase(arguments: ["--kernel-debounce", "0"], message: "run: --kernel-debounce: expected milliseconds from 1 to 1000, got '0'"),
        FlagCase(arguments: ["--led", "GPIO17"], message: "run: --led: GPIO17 is the button's line; the LED needs a line of its own"),
        FlagCase(arguments: ["--led-active-low"], message: "run: --led-active-low needs --led LINE"),
        FlagCase(
            arguments: ["--led", "gpiochip0:"],
            message: "run: --led: 'gpiochip0:' is not a GPIO line; use a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17"),
        FlagCase(arguments: ["--i2c-bus", "-1"], message: "run: --i2c-bus: expected a bus number from 0 to 1023, got '-1'"),
        FlagCase(
            arguments: ["--address", "0x78"],
            message:
                "run: --address: '0x78' is outside 0x08-0x77, the 7-bit I2C addresses a device may use (PCF8574 backpacks: 0x20-0x27, PCF8574A: 0x38-0x3f)"
        ),
        FlagCase(
            arguments: ["--address", "0x07"],
            message:
                "run: --address: '0x07' is outside 0x08-0x77, the 7-bit I2C addresses a device may use (PCF8574 backpacks: 0x20-0x27, PCF8574A: 0x38-0x3f)"
        ),
        FlagCase(
            arguments: ["--address", "lcd"],
            message: "run: --address: 'lcd' is not an address; use auto, 0xNN (hex) or a decimal number, within 0x08-0x77"),
        FlagCase(arguments: ["--refresh", "0"], message: "run: --refresh: expected whole seconds (or off) from 1 to 86400, got '0'"),
        FlagCase(arguments: ["--log-format", "xml"], message: "run: --log-format: 'xml' is not a format; use plain or json"),
        FlagCase(arguments: ["--duration", "0"], message: "run: --duration: expected whole seconds from 1 to 86400, got '0'"),
        FlagCase(arguments: ["--geometry", "17x2"], message: "run: --geometry: '17x2' is not a supported LCD size; use one of 16x2, 20x4, 40x2"),
        FlagCase(arguments: ["--adress", "0x27"], message: "run: unknown option '--adress'; did you mean '--address'?"),
        FlagCase(arguments: ["--address"], message: "run: option '--address' needs a value (ADDR)"),
        FlagCase(arguments: ["--button-active-high=yes"], message: "run: option '--button-active-high' takes no value"),
        FlagCase(arguments: ["GPIO17"], message: "run: unexpected argument 'GPIO17' (options start with --)"),
    ]

    @Test("run rejects a bad flag before any I/O with exit 64 and one line naming the flag and what is allowed", arguments: badRunFlags)
    func badRunFlag(_ flagCase: FlagCase) {
        let error = exitError { () throws(ExitError) in try RunOptions.parse(flagCase.arguments, supportsKernelDebounce: true) }
        #expect(error?.code == .usage)
        #expect(error?.message == flagCase.message)
    }

    @Test("run --kernel-debounce on a libgpiod v1 build is a usage error that says v2 is needed")
    func kernelDebounceNeedsV2() {
        let error = exitError { () throws(ExitError) in
            try RunOptions.parse(["--kernel-debounce", "5"], supportsKernelDebounce: false, libgpiodVersion: "1.6.3")
        }
        #expect(error?.code == .usage)
        #expect(
            error?.message
                == "run: --kernel-debounce needs libgpiod v2; this build uses libgpiod 1.6.3 (v1): leave it out, --debounce does the debouncing")
        let accepted = exitError { () throws(ExitError) in try RunOptions.parse(["--kernel-debounce", "5"], supportsKernelDebounce: true) }
        #expect(accepted == nil)
    }

    @Test("run defaults: GPIO17 pulled up, active-low, bus 1, address 0x27, no LED, no refresh, plain log")
    func runDefaults() throws {
        let options = try RunOptions.parse([])
        #expect(options.button == .named("GPIO17"))
        #expect(options.buttonBias == .pullUp)
        #expect(!options.buttonActiveHigh)
        #expect(options.kernelDebounceMilliseconds == nil)
        #expect(options.led == nil)
        #expect(options.i2cBus == 1)
        #expect(options.address == .fixed(I2CAddress(0x27)!))
        #expect(options.refreshSeconds == nil)
        #expect(options.logFormat == .plain)
        #expect(options.settings.durationSeconds == 60)
        #expect(options.settings.geometry == .lcd16x2)
    }

    @Test("run takes every flag")
    func runAllFlags() throws {
        let options = try RunOptions.parse(
            [
                "--button", "gpiochip4:17", "--button-bias", "as-is", "--button-active-high", "--kernel-debounce", "5",
                "--led", "GPIO27", "--led-active-low", "--i2c-bus", "3", "--address", "0x3f", "--refresh", "30",
                "--log-format", "json", "--duration", "90", "--geometry", "20x4", "--debounce", "30", "--debounce-mode", "prompt",
            ], supportsKernelDebounce: true)
        #expect(options.button == .chipOffset(chip: 4, offset: 17))
        #expect(options.buttonBias == .asIs)
        #expect(options.buttonActiveHigh)
        #expect(options.kernelDebounceMilliseconds == 5)
        #expect(options.led == .named("GPIO27"))
        #expect(options.ledActiveLow)
        #expect(options.i2cBus == 3)
        #expect(options.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.refreshSeconds == 30)
        #expect(options.logFormat == .json)
        #expect(options.settings.durationSeconds == 90)
        #expect(options.settings.geometry == .lcd20x4)
        #expect(options.settings.debounceMilliseconds == 30)
        #expect(options.settings.debounceMode == .prompt)
        #expect(try RunOptions.parse(["--refresh", "off"]).refreshSeconds == nil)
    }

    @Test("bias names", arguments: [("pull-up", GPIOBias.pullUp), ("pull-down", .pullDown), ("disabled", .disabled), ("as-is", .asIs)])
    func biasNames(name: String, bias: GPIOBias) throws {
        let options = try RunOptions.parse(["--button-bias", name])
        #expect(options.buttonBias == bias)
        #expect(options.biasName == name)
    }

    static let addresses: [(String, UInt8?)] = [
        ("auto", nil), ("0x27", 0x27), ("39", 0x27), ("0X3F", 0x3F), ("0x3f", 0x3F), ("0x08", 0x08), ("0x77", 0x77), ("8", 0x08), ("119", 0x77),
    ]

    @Test("--address accepts auto, hex and decimal within 0x08-0x77", arguments: addresses)
    func goodAddress(text: String, expected: UInt8?) throws {
        let choice = try AddressChoice.parse(text, command: "run")
        #expect(choice == (expected.map { .fixed(I2CAddress($0)!) } ?? .auto))
    }

    @Test(
        "--address rejects reserved, 8-bit and malformed addresses",
        arguments: [
            "0x07", "0x78", "0x7f", "0x00", "7", "120", "255", "256", "0x", "0x12345", "-1", "+39", "0x-1", "", "Auto", "0x2g", " 39",
        ])
    func badAddress(text: String) {
        let error = exitError { () throws(ExitError) in try AddressChoice.parse(text, command: "run") }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("run: --address: '\(text)' is ") == true)
        #expect(error?.message.contains("0x08-0x77") == true)
    }

    @Test(
        "line specs: a name, or gpiochipN:OFFSET",
        arguments: [
            ("GPIO17", LineSpec.named("GPIO17")), ("gpiochip0:17", .chipOffset(chip: 0, offset: 17)),
            ("gpiochip12:0", .chipOffset(chip: 12, offset: 0)),
            ("PIN_11", .named("PIN_11")),
        ])
    func lineSpecs(text: String, expected: LineSpec) {
        #expect(LineSpec(parsing: text) == expected)
        #expect(LineSpec(parsing: text)?.text == text)
    }

    @Test("a chip-and-offset line is at /dev/gpiochipN")
    func lineLocation() {
        #expect(LineSpec.chipOffset(chip: 4, offset: 17).location() == GPIOLineLocation(chipPath: "/dev/gpiochip4", offset: 17))
        #expect(LineSpec.named("GPIO17").location() == nil)
    }

    static let badCheckFlags: [FlagCase] = [
        FlagCase(
            arguments: ["--geometry", "17x2"], message: "check: --geometry: '17x2' is not a supported LCD size; use one of 8x1, 16x2, 20x4, 40x2"),
        FlagCase(
            arguments: ["--address", "0x78"],
            message:
                "check: --address: '0x78' is outside 0x08-0x77, the 7-bit I2C addresses a device may use (PCF8574 backpacks: 0x20-0x27, PCF8574A: 0x38-0x3f)"
        ),
        FlagCase(arguments: ["--button", "a b"], message: "check: --button: 'a b' contains a space; a GPIO line name has none (see gpioinfo)"),
        FlagCase(arguments: ["--led", "GPIO17"], message: "check: --led: GPIO17 is the button's line; the LED needs a line of its own"),
        FlagCase(arguments: ["--test-pattern=yes"], message: "check: option '--test-pattern' takes no value"),
        FlagCase(arguments: ["--i2c-bus", "x"], message: "check: --i2c-bus: expected a bus number from 0 to 1023, got 'x'"),
        FlagCase(arguments: ["--duration", "5"], message: "check: unknown option '--duration'"),
        FlagCase(arguments: ["now"], message: "check: unexpected argument 'now' (options start with --)"),
    ]

    @Test("check rejects a bad flag with exit 64 and one line naming it", arguments: badCheckFlags)
    func badCheckFlag(_ flagCase: FlagCase) {
        let error = exitError { () throws(ExitError) in try CheckOptions.parse(flagCase.arguments) }
        #expect(error?.code == .usage)
        #expect(error?.message == flagCase.message)
    }

    @Test("check takes every flag")
    func checkAllFlags() throws {
        let options = try CheckOptions.parse([
            "--button", "GPIO5", "--led", "gpiochip0:6", "--i2c-bus", "0", "--address", "0x3f", "--geometry", "20x4", "--test-pattern",
        ])
        #expect(options.button == .named("GPIO5"))
        #expect(options.led == .chipOffset(chip: 0, offset: 6))
        #expect(options.i2cBus == 0)
        #expect(options.address == .fixed(I2CAddress(0x3F)!))
        #expect(options.geometry == .lcd20x4)
        #expect(options.testPattern)
    }

    @Test(
        "the command line dispatches run and check: a bad flag prints one line and returns 64",
        arguments: [
            (["run", "--address", "0x78"], "run: --address: '0x78' is outside"),
            (["check", "--geometry", "1x1"], "check: --geometry: '1x1' is not"),
        ])
    func dispatch(arguments: [String], prefix: String) {
        let captured = CapturedConsole()
        let code = runCommandLine(arguments, console: captured.console) { _ throws(ExitError) in }
        #expect(code == .usage)
        #expect(captured.err.count == 1)
        #expect(captured.err.first?.hasPrefix(prefix) == true)
        #expect(captured.out.isEmpty)
    }

    @Test("run --help and check --help list their flags")
    func help() {
        let captured = CapturedConsole()
        #expect(runCommandLine(["run", "--help"], console: captured.console) { _ throws(ExitError) in } == .ok)
        #expect(runCommandLine(["check", "--help"], console: captured.console) { _ throws(ExitError) in } == .ok)
        let text = captured.out.joined(separator: "\n")
        for flag in [
            "--button LINE", "--button-bias BIAS", "--button-active-high", "--kernel-debounce MS", "--led LINE", "--led-active-low",
            "--i2c-bus N", "--address ADDR", "--refresh SECONDS", "--log-format FORMAT", "--duration SECONDS", "--test-pattern",
        ] {
            #expect(text.contains(flag), "\(flag)")
        }
    }
}
