import HAL
import HALLinux
import Testing

@testable import ResendApp
@testable import ResendDevice
@testable import ResendSimulator

/// `resend-button output off`: the systemd unit's stop hook that drives the door strike inactive.
@Suite("output off: the door strike's stop hook")
struct OutputCommandTests {
    static let path = "/etc/resend-button/config.json5"

    /// A configuration with an enabled matrix keypad and `output` inside its `output` section.
    static func config(output: String, enabled: Bool = true) -> String {
        "{keypad: {enabled: \(enabled), verify: {command: [\"/usr/local/bin/check-code\"]}, output: {\(output)}}}"
    }

    /// Runs the command line with the configuration `text` at `path` (nil: no such file) and
    /// `drive` standing in for the GPIO request; returns the exit code, what was printed and
    /// every line the driver was asked to drive.
    static func run(
        _ arguments: [String], text: String?, at configPath: String = path,
        drive: @escaping OutputLineDriver = { target throws(HALError) in
            GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 26, name: target.spec.text)
        }
    ) -> (code: ExitCode, out: [String], err: [String], driven: [OutputLineTarget]) {
        var out: [String] = []
        var err: [String] = []
        var driven: [OutputLineTarget] = []
        let console = Console(
            out: { out.append($0) }, err: { err.append($0) }, readFile: { _ in nil },
            readConfig: { path in path == configPath ? (text.map(ConfigFileContents.text) ?? .missing) : .missing })
        let code: ExitCode
        do throws(ExitError) {
            guard case .output(let rest) = try parseCommandLine(arguments, console: console) else {
                Issue.record("\(arguments) is not the output command")
                return (.software, out, err, driven)
            }
            try runOutputCommand(
                rest, console: console,
                drive: { target throws(HALError) in
                    driven.append(target)
                    return try drive(target)
                }, facts: { StartupFacts(gpioChipCount: 1, i2cBusNumbers: [1]) })
            code = .ok
        } catch {
            err.append(error.message)
            code = error.code
        }
        return (code, out, err, driven)
    }

    @Test func theConfiguredOutputIsDrivenInactiveAndTheLineSaysWhereAndWhichLevel() {
        let result = Self.run(["output", "off", "--config", Self.path], text: Self.config(output: #"line: "GPIO26""#))
        #expect(result.code == .ok)
        #expect(result.driven == [OutputLineTarget(spec: .named("GPIO26"), activeLow: false)])
        #expect(result.out == ["output off: keypad output GPIO26 (line 26 of /dev/gpiochip0) driven inactive (low)"])
        #expect(result.err.isEmpty)
    }

    @Test func anActiveLowStrikeIsDrivenHigh() {
        let result = Self.run(["output", "off", "--config", Self.path], text: Self.config(output: #"line: "gpiochip0:26", activeLow: true"#))
        #expect(result.driven == [OutputLineTarget(spec: .chipOffset(chip: 0, offset: 26), activeLow: true)])
        #expect(result.out == ["output off: keypad output gpiochip0:26 (line 26 of /dev/gpiochip0) driven inactive (high)"])
    }

    @Test func withoutConfigFlagTheDefaultFileIsRead() {
        let result = Self.run(["output", "off"], text: Self.config(output: #"line: "GPIO26""#))
        #expect(result.code == .ok)
        #expect(result.driven.count == 1)
    }

    @Test(
        "no output line: exit 0, nothing driven, and the line says why",
        arguments: [
            (Optional<String>.none, "output off: nothing to drive: no keypad.output.line in /etc/resend-button/config.json5"),
            ("{}", "output off: nothing to drive: no keypad.output.line in /etc/resend-button/config.json5"),
            (OutputCommandTests.config(output: ""), "output off: nothing to drive: no keypad.output.line in /etc/resend-button/config.json5"),
            (
                OutputCommandTests.config(output: #"line: "GPIO26""#, enabled: false),
                "output off: nothing to drive: keypad.enabled is not true, so run does not drive keypad.output.line 'GPIO26' in /etc/resend-button/config.json5"
            ),
        ])
    func nothingToDrive(text: String?, message: String) {
        let result = Self.run(["output", "off"], text: text)
        #expect(result.code == .ok)
        #expect(result.driven.isEmpty)
        #expect(result.out == [message])
    }

    @Test(
        "a line that cannot be driven: run's exit code and advice",
        arguments: [
            (
                HALError(.notFound, operation: "find GPIO line \"GPIO26\": searched gpiochip0 [pinctrl-bcm2711] (58 lines)", errno: 2),
                ExitCode.unavailable,
                "output off: keypad output GPIO26: find GPIO line \"GPIO26\": searched gpiochip0 [pinctrl-bcm2711] (58 lines)"
            ),
            (
                HALError(.busy, operation: "request output GPIO26 (line 26 of /dev/gpiochip0): held by \"resend-button\"", errno: 16), .unavailable,
                "output off: keypad output GPIO26: request output GPIO26 (line 26 of /dev/gpiochip0): held by \"resend-button\""
            ),
            (
                HALError(.permission, operation: "open /dev/gpiochip0", errno: 13), .noPermission,
                "output off: keypad output GPIO26: open /dev/gpiochip0"
            ),
        ])
    func driveFails(error: HALError, code: ExitCode, prefix: String) {
        let result = Self.run(["output", "off"], text: Self.config(output: #"line: "GPIO26""#)) { _ throws(HALError) in throw error }
        #expect(result.code == code)
        #expect(result.out.isEmpty)
        #expect(result.err.count == 1)
        #expect(result.err.first?.hasPrefix(prefix) == true, "\(result.err)")
        #expect(result.err.first?.contains("\n") == false)
    }

    @Test func aBrokenConfigurationIsExit78NamingTheKey() {
        let result = Self.run(["output", "off", "--config", Self.path], text: Self.config(output: #"line: "GPIO26", activeLow: "yes""#))
        #expect(result.code == .config)
        #expect(result.driven.isEmpty)
        #expect(result.err.first?.contains("keypad.output.activeLow") == true, "\(result.err)")
    }

    @Test(
        "a mistake elsewhere in the file (an unknown key, a bad lcd.address, a bad keypad.verify) does not stop output off: the strike is driven inactive, exit 0, and it says the file has problems",
        arguments: [
            #"{lcd: {address: "0x99"}, keypad: {enabled: true, verify: {command: ["/usr/local/bin/check-code"]}, output: {line: "GPIO26", activeLow: true}}}"#,
            #"{typo: 1, keypad: {enabled: true, verify: {command: "not a list"}, output: {line: "GPIO26", activeLow: true, pulseMs: -5}}}"#,
        ])
    func otherMistakesStillDriveTheOutput(text: String) {
        let result = Self.run(["output", "off", "--config", Self.path], text: text)
        #expect(result.code == .ok, "\(result.err)")
        #expect(result.driven == [OutputLineTarget(spec: .named("GPIO26"), activeLow: true)])
        #expect(result.out == ["output off: keypad output GPIO26 (line 26 of /dev/gpiochip0) driven inactive (high)"])
        #expect(
            result.err == ["output off: \(Self.path) has problems (resend-button config check lists them); keypad.output is valid, so it is driven"])
    }

    @Test func aMistakeElsewhereWithNoOutputLineSaysNothingIsDrivenNotThatItIs() {
        let result = Self.run(["output", "off", "--config", Self.path], text: #"{cooldown: {seconds: "soon"}}"#)
        #expect(result.code == .ok, "\(result.err)")
        #expect(result.driven.isEmpty)
        #expect(result.out == ["output off: nothing to drive: no keypad.output.line in \(Self.path)"])
        #expect(result.err == ["output off: \(Self.path) has problems (resend-button config check lists them)"])
    }

    @Test(
        "a mistake in the output's own keys, keypad.enabled or the file's syntax is still exit 78, nothing driven",
        arguments: [
            #"{keypad: {enabled: "yes", output: {line: "GPIO26"}}}"#, #"{keypad: {enabled: true, output: {line: 26}}}"#,
            #"{keypad: {enabled: true, output: "GPIO26"}}"#, #"{keypad: {enabled: true, output: {line: "GPIO26"}"#,
            #"{keypad: {enabled: true, output: {line: "GPIO26", line: "GPIO5"}}}"#,
        ])
    func ownMistakesAreStillExit78(text: String) {
        let result = Self.run(["output", "off", "--config", Self.path], text: text)
        #expect(result.code == .config)
        #expect(result.driven.isEmpty)
    }

    @Test func aMissingExplicitConfigurationIsExit78() {
        let result = Self.run(["output", "off", "--config", "/etc/other.json5"], text: nil)
        #expect(result.code == .config)
        #expect(result.err == ["/etc/other.json5: no such configuration file"])
        #expect(result.driven.isEmpty)
    }

    @Test(
        "bad command lines: exit 64 naming the word",
        arguments: [
            (["output"], "output: missing subcommand (off)"),
            (["output", "of"], "output: unknown subcommand 'of'; did you mean 'off'? (subcommands: off)"),
            (["output", "on"], "output: unknown subcommand 'on'; did you mean 'off'? (subcommands: off)"),
            (["output", "off", "GPIO26"], "output off: unexpected argument 'GPIO26' (options start with --)"),
            (["output", "off", "--line", "GPIO26"], "output off: unknown option '--line'"),
        ])
    func badUsage(arguments: [String], firstLine: String) {
        let result = Self.run(arguments, text: Self.config(output: #"line: "GPIO26""#))
        #expect(result.code == .usage)
        #expect(result.driven.isEmpty)
        #expect(result.err.first?.split(separator: "\n").first.map(String.init) == firstLine)
    }

    @Test func helpNamesTheStopHookAndTheExitCodes() {
        let result = Self.run(["output", "off", "--help"], text: nil)
        #expect(result.code == .ok)
        #expect(result.driven.isEmpty)
        let help = result.out.joined(separator: "\n")
        #expect(help.hasPrefix("usage: resend-button output off [options]"))
        #expect(help.contains("--config PATH"))
        #expect(help.contains("69"))
        #expect(help.contains("78"))
    }

    @Test func theTopLevelUsageListsTheCommand() {
        let captured = CapturedConsole()
        let code = runCommandLine(["--help"], console: captured.console) { _ throws(ExitError) in }
        #expect(code == .ok)
        #expect(captured.out.joined().contains("output     output off: drive the keypad's output line (door strike) inactive"))
    }
}
