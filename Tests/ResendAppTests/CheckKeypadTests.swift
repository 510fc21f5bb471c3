import HAL
import HALLinux
import HALMock
import Testing

@testable import ResendApp
@testable import ResendDevice
@testable import ResendSimulator

/// `check` with a matrix keypad in the configuration: the row and column lines, the key test.
@Suite("check: the matrix keypad")
struct CheckKeypadTests {
    static func options(keys: Int? = nil) -> CheckOptions {
        var options = CheckOptions()
        options.keypad.enabled = true
        options.keypad.verify.command = ["/usr/local/bin/check-code"]
        options.keySeconds = keys
        return options
    }

    static var silent: Console { Console(out: { _ in }, err: { _ in }, readFile: { _ in nil }) }

    @Test func everyRowAndColumnIsListedWithItsChipOffsetAndHolder() {
        var facts = piFacts()
        holdLine(&facts, offset: 16, consumer: "pigpiod")
        let findings = matrixKeypadCheck(Self.options(), facts, console: Self.silent)
        #expect(
            findings.map(\.line) == [
                "OK keypad row 1 GPIO5: line 5 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO5, free",
                "OK keypad row 2 GPIO6: line 6 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO6, free",
                "OK keypad row 3 GPIO13: line 13 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO13, free",
                "OK keypad row 4 GPIO19: line 19 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO19, free",
                "OK keypad column 1 GPIO12: line 12 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO12, free",
                "PROBLEM keypad column 2 GPIO16: line 16 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO16 is held by \"pigpiod\"; stop the program holding it or choose another line",
                "OK keypad column 3 GPIO20: line 20 of /dev/gpiochip0 [pinctrl-bcm2711] named GPIO20, free",
            ])
        #expect(checkExitCode(findings) == .unavailable)
    }

    @Test func allLinesFreeSuggestsTheKeyTest() {
        let findings = matrixKeypadCheck(Self.options(), piFacts(), console: Self.silent)
        #expect(findings.last?.line == "NOTE add --keys 10 to test the keypad's keys")
        #expect(checkExitCode(findings) == .ok)
    }

    @Test func aMissingLineIsAProblemAndTheKeyTestDoesNotRun() {
        var options = Self.options(keys: 5)
        options.keypad.rows[3] = "GPIO99"
        let findings = matrixKeypadCheck(options, piFacts(), console: Self.silent)
        #expect(
            findings.contains {
                $0.line
                    == "PROBLEM keypad row 4 GPIO99: no such line; searched gpiochip0 [pinctrl-bcm2711] (28 lines); list the lines with gpioinfo and name one in the configuration's keypad section"
            })
        #expect(findings.last?.line == "NOTE keypad key test not run: a line is missing or held (see above)")
    }

    @Test func noKeypadNoFindingsAndKeysSaysWhy() {
        var options = CheckOptions()
        #expect(matrixKeypadCheck(options, piFacts(), console: Self.silent).isEmpty)
        options.keySeconds = 10
        options.configPath = "/etc/x.json5"
        #expect(
            matrixKeypadCheck(options, piFacts(), console: Self.silent).map(\.line) == [
                "NOTE --keys: no keypad to test: keypad.enabled is not true in /etc/x.json5 (an input device can be named with --keypad-device)"
            ])
    }

    @Test func anUnreadableConfigurationIsAConfigProblem() throws {
        let options = try CheckOptions.parse(["--config", "/c.json5"]) { _ in .text("{keypad: {enabled: tru}}") }
        let problem = try #require(options.configProblem)
        let findings = matrixKeypadCheck(options, piFacts(), console: Self.silent)
        #expect(findings.map(\.line) == ["PROBLEM configuration: \(problem); the keypad is not checked"])
        #expect(checkExitCode(findings) == .config)
    }

    @Test func keysAndConfigAreParsed() throws {
        let options = try CheckOptions.parse(["--config", "/c.json5", "--keys", "15"]) { path in
            path == "/c.json5" ? .text(#"{keypad: {enabled: true, verify: {command: ["/bin/true"]}, diodes: true}}"#) : .missing
        }
        #expect(options.keySeconds == 15)
        #expect(options.keypad.enabled && options.keypad.diodes)
        #expect(options.configProblem == nil)
        EquivalenceCorpus.record(["check", "--keys", "0"], files: [:], usageError: true)
        let error = exitError { () throws(ExitError) in _ = try CheckOptions.parse(["--keys", "0"]) { _ in .missing } }
        #expect(error?.code == .usage)
        #expect(error?.message == "check: --keys: expected whole seconds from 1 to 300, got '0'")
    }

    @Test func theKeyTestPrintsEachDebouncedPressOnce() throws {
        let clock = ManualClock(Instant(nanoseconds: 1_000_000_000))
        func at(_ ms: Int64) -> Instant { Instant(nanoseconds: 1_000_000_000) + .milliseconds(ms) }
        var source = VirtualEventSource(
            clock: clock,
            inputs: [
                // 5 bounces, then is held; released at 300 ms; # pressed at 500 ms.
                (at(100), .key(KeyEvent(.digit5, .pressed, at: at(100)))),
                (at(102), .key(KeyEvent(.digit5, .released, at: at(102)))),
                (at(104), .key(KeyEvent(.digit5, .pressed, at: at(104)))),
                (at(300), .key(KeyEvent(.digit5, .released, at: at(300)))),
                (at(500), .key(KeyEvent(.pound, .pressed, at: at(500)))),
                (at(600), .key(KeyEvent(.pound, .released, at: at(600)))),
            ])
        var printed: [String] = []
        let result = try keyTest(source: &source, clock: clock, seconds: 2, debounceMs: 20) { printed.append($0) }
        #expect(printed == ["key 5", "key #"])
        #expect(result == KeyTestResult(pressed: [.digit5, .pound], stoppedEarly: false))
        #expect(clock.now() == at(2_000), "runs the whole time")
        #expect(keyTestFinding(result, seconds: 2, ambiguousScans: 0).line == "OK keypad key test (2 s): 2 keys pressed: 5 #")
    }

    @Test func ctrlCEndsTheKeyTestEarly() throws {
        let clock = ManualClock(Instant(nanoseconds: 1_000_000_000))
        var source = VirtualEventSource(clock: clock, inputs: [(Instant(nanoseconds: 1_500_000_000), .stop)])
        let result = try keyTest(source: &source, clock: clock, seconds: 10, debounceMs: 20) { _ in }
        #expect(result == KeyTestResult(pressed: [], stoppedEarly: true))
        #expect(
            keyTestFinding(result, seconds: 10, ambiguousScans: 2).line
                == "NOTE keypad key test (stopped early): no key seen; if you pressed some, check the wiring: the rows on keypad.rows and the columns on keypad.columns, in order; 2 scans were ambiguous (three keys held on the corners of a rectangle without diodes): those presses were ignored"
        )
    }
}
