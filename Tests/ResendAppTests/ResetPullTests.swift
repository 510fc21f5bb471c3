import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// `config check` warns when the door strike's output is active at its pin's reset pull.
@Suite("config check: the output line against the pin's reset pull")
struct ResetPullTests {
    @Test(
        "the Pi's reset pulls by line name; other names are unknown",
        arguments: [
            ("GPIO0", Optional((0, ResetPull.up))), ("GPIO5", (5, .up)), ("GPIO8", (8, .up)),
            ("GPIO9", (9, .down)), ("GPIO17", (17, .down)), ("GPIO26", (26, .down)), ("GPIO27", (27, .down)),
            ("GPIO28", nil), ("GPIO05", nil), ("GPIO", nil), ("GPIO-1", nil), ("GPIO123", nil),
            ("gpiochip0:5", nil), ("door", nil), ("gpio5", nil),
        ])
    func table(line: String, expected: (Int, ResetPull)?) {
        let found = piResetPull(line: line)
        #expect(found?.pin == expected?.0)
        #expect(found?.pull == expected?.1)
    }

    static func keypad(line: String?, activeLow: Bool, enabled: Bool = true) -> DeviceConfig.Keypad {
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = enabled
        keypad.output.line = line
        keypad.output.activeLow = activeLow
        return keypad
    }

    @Test(
        "a warning only where the reset pull is the output's active level",
        arguments: [
            ("GPIO5", false, true), ("GPIO0", false, true), ("GPIO8", false, true),
            ("GPIO5", true, false),
            ("GPIO26", false, false), ("GPIO9", false, false),
            ("GPIO26", true, true), ("GPIO9", true, true), ("GPIO27", true, true),
            ("GPIO28", false, false), ("gpiochip0:5", false, false),
        ])
    func warns(line: String, activeLow: Bool, warned: Bool) {
        #expect((outputResetPullWarning(Self.keypad(line: line, activeLow: activeLow)) != nil) == warned)
    }

    @Test func noOutputOrNoKeypadNoWarning() {
        #expect(outputResetPullWarning(Self.keypad(line: nil, activeLow: false)) == nil)
        #expect(outputResetPullWarning(Self.keypad(line: "GPIO5", activeLow: false, enabled: false)) == nil)
    }

    static func file(_ output: String) -> String {
        "{keypad: {enabled: true, verify: {command: [\"/usr/local/bin/check-code\"]}, output: {\(output)}}}"
    }

    @Test func anActiveHighOutputOnAPullUpPinGetsOneWarningLineAfterOKAndExit0() {
        let outcome = checkConfig(Self.file(#"line: "GPIO4""#))
        #expect(outcome.code == .ok)
        #expect(outcome.err.isEmpty)
        #expect(outcome.out.count == 2)
        #expect(outcome.out.first?.hasPrefix("t.json5: OK; ") == true)
        #expect(
            outcome.out.last
                == "t.json5: warning: keypad.output.line: GPIO4 has a pull-up at reset, and the output is active-high: a strike or relay that follows the pull is energised from power-on until the service starts; choose a pin of GPIO9-27 (pull-down at reset) or an active-low stage (activeLow: true)"
        )
    }

    @Test func anActiveLowOutputOnAPullDownPinGetsTheMirrorAdvice() {
        let outcome = checkConfig(Self.file(#"line: "GPIO26", activeLow: true"#))
        #expect(outcome.code == .ok)
        #expect(
            outcome.out.last
                == "t.json5: warning: keypad.output.line: GPIO26 has a pull-down at reset, and the output is active-low (activeLow: true): a strike or relay that follows the pull is energised from power-on until the service starts; choose a pin of GPIO0-8 (pull-up at reset) or an active-high stage (activeLow: false)"
        )
    }

    @Test func anOutputWhosePullKeepsItInactiveIsJustOK() {
        let outcome = checkConfig(Self.file(#"line: "GPIO26""#))
        #expect(outcome.code == .ok)
        #expect(outcome.out.count == 1)
        #expect(outcome.out.first?.hasPrefix("t.json5: OK; ") == true)
    }
}
