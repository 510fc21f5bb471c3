import HAL
import ResendCore
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// An enabled matrix keypad with a verify command, plus `extra` keys inside `keypad`.
private func keypad(_ extra: String = "", top: String = "") -> String {
    "{\(top) keypad: {enabled: true, verify: {command: [\"/usr/local/bin/check-code\"]}, \(extra)}}"
}

@Suite("Config file: the keypad section")
struct KeypadConfigTests {
    @Test("without a keypad section the keypad is off and the summary says nothing of it: existing files behave as before")
    func offByDefault() throws {
        let config = try DeviceConfig.parse(text: "{}", source: "t.json5")
        #expect(config.keypad == DeviceConfig.Keypad())
        #expect(!config.keypad.enabled)
        let outcome = checkConfig("{}")
        #expect(outcome.code == .ok)
        #expect(!outcome.out.joined().contains("keypad"))
    }

    @Test("a valid keypad: config check says OK with a keypad summary, and the rules reach the entry flow")
    func valid() throws {
        let text = keypad(
            #"columns: ["GPIO12", "GPIO16", "GPIO20", "GPIO21"], sendKey: "A", entry: {minLength: 6, maxLength: 6, submitAtMaxLength: true, echo: "brief", echoMs: 500, maxAttempts: "unlimited", validitySeconds: null, lockoutSeconds: [60]}, output: {line: "GPIO26", pulseMs: 2500}"#
        )
        let outcome = checkConfig(text)
        #expect(outcome.code == .ok)
        #expect(
            outcome.out.contains {
                $0.hasSuffix(
                    "keypad matrix 4x4, settle 10 us, send key A, verify /usr/local/bin/check-code (timeout 10 s), output GPIO26 2500 ms, code 6 digits (10^6 codes), UNLIMITED wrong codes (no lockout)"
                )
            })
        #expect(!outcome.out.joined().contains("yet"), "run and simulate drive the keypad now")
        let config = try DeviceConfig.parse(text: text, source: "t.json5")
        #expect(config.keypad.layout == .fourByFour)
        #expect(config.keypad.keyBindings == KeyBindings(send: [.a]))
        let entry = config.keypad.entryConfig(texts: EntryTexts())
        #expect(entry.minLength == 6 && entry.maxLength == 6 && entry.submitAtMaxLength)
        #expect(entry.echo == .shownBriefly(.milliseconds(500)))
        #expect(entry.maxAttempts == nil && entry.validity == nil)
        #expect(entry.lockouts == [.seconds(60)])
        #expect(entry.pulse == .milliseconds(2_500))
        #expect(entry.problems(columns: 16).isEmpty)
        // No output line: no pulse.
        #expect(DeviceConfig.Keypad().entryConfig(texts: EntryTexts()).pulse == nil)
    }

    @Test("the matrix scan's settle time: 10 us unless keypad.settleMicroseconds says otherwise, and config check names it")
    func settleTime() throws {
        #expect(try DeviceConfig.parse(text: keypad(), source: "t.json5").keypad.settle == .microseconds(10))
        let text = keypad("settleMicroseconds: 40")
        #expect(try DeviceConfig.parse(text: text, source: "t.json5").keypad.settle == .microseconds(40))
        let outcome = checkConfig(text)
        #expect(outcome.code == .ok)
        #expect(
            outcome.out.contains {
                $0.contains("keypad matrix 4x3, settle 40 us, send key button, verify /usr/local/bin/check-code (timeout 10 s), output none,")
            })
    }

    @Test("config check's summary states what a guesser faces: the code space, the attempts and the lockouts")
    func guessingSummary() {
        let outcome = checkConfig(keypad(#"entry: {minLength: 4, maxLength: 8, maxAttempts: 5, lockoutSeconds: [60, 3600]}"#))
        #expect(outcome.code == .ok)
        #expect(
            outcome.out.contains { $0.hasSuffix(", output none, code 4-8 digits (10^4 to 10^8 codes), 5 wrong codes then lockouts of 60/3600 s") },
            "\(outcome.out)")
    }

    @Test(
        "each bad keypad value: exit 78 and one line naming the key, the value and what is allowed",
        arguments: [
            (keypad(#"backend: "usb""#), #"keypad.backend: "usb" is not allowed; use one of "matrix", "evdev""#),
            (
                keypad(#"rows: []"#),
                #"keypad.rows: the list is empty; allowed: a list of 1 to 8 GPIO line names, e.g. ["GPIO5", "GPIO6", "GPIO13", "GPIO19"]"#
            ),
            (
                keypad(#"rows: ["GPIO5", "GPIO6", "GPIO5", "GPIO19"]"#),
                #"keypad.rows[2]: "GPIO5" is also [0]; allowed: each row on a line of its own"#
            ),
            (
                keypad(#"keys: ["123", "456", "789", "*0"]"#),
                #"keypad.keys[3]: "*0" has 2 keys, keypad.columns has 3; allowed: null or one string per row (4), each with one key per column (3) of 0-9, *, #, A-D, e.g. ["123", "456", "789", "*0#"]"#
            ),
            (keypad(#"keys: ["123", "456", "789", "*0X"]"#), #"keypad.keys[3]: "*0X" has "X", which is no key; allowed: 0-9, *, #, A-D"#),
            (keypad(#"keys: ["123", "456", "789", "*01"]"#), #"keypad.keys[3]: "*01" repeats "1"; allowed: every key once"#),
            (keypad(#"debounceMs: 0"#), "keypad.debounceMs: 0 is out of range; allowed: whole milliseconds from 1 to 1000"),
            (keypad(#"settleMicroseconds: 0"#), "keypad.settleMicroseconds: 0 is out of range; allowed: whole microseconds from 1 to 1000"),
            (keypad(#"settleMicroseconds: 1001"#), "keypad.settleMicroseconds: 1001 is out of range; allowed: whole microseconds from 1 to 1000"),
            (keypad(#"settleMicroseconds: 2.5"#), "keypad.settleMicroseconds: 2.5 is not a whole number; allowed: whole microseconds from 1 to 1000"),
            (keypad(##"sendKey: "#""##), ##"keypad.sendKey: "#" is not allowed; use one of "button", "A", "B", "C", "D" (did you mean "A"?)"##),
            (keypad(#"sendKey: "D""#), #"keypad.sendKey: "D" is not on the keypad (keypad.keys); allowed: "button" or a letter key the keypad has"#),
            (
                keypad(#"rows: ["GPIO5", "GPIO6", "GPIO13"]"#),
                #"keypad.keys: is null, but the common layouts are 4 rows of 3 or 4 columns, not 3x3; allowed: a key map with one string per row, e.g. ["123", "456", "789", "*0#"]"#
            ),
            (
                keypad(#"columns: ["GPIO12", "GPIO17", "GPIO20"]"#),
                #"keypad.columns[1]: "GPIO17" is also button.line; allowed: a GPIO line of its own"#
            ),
            (keypad(#"output: {line: "GPIO5"}"#), #"keypad.output.line: "GPIO5" is also keypad.rows[0]; allowed: a GPIO line of its own"#),
            (
                keypad(#"backend: "evdev""#),
                #"keypad.device: is null, but keypad.backend is "evdev"; allowed: the input device's path, e.g. "/dev/input/by-id/usb-...-event-kbd" (see ls -l /dev/input/by-id /dev/input/by-path)"#
            ),
            (
                keypad(#"device: "event0""#),
                #"keypad.device: "event0" is not an absolute path; allowed: null or a path such as "/dev/input/by-id/usb-...-event-kbd""#
            ),
            (
                keypad(#"entry: {maxAttempts: null}"#),
                #"keypad.entry.maxAttempts: is null; allowed: a number of wrong codes from 1 to 1000 before a lockout, or "unlimited" to allow unlimited guesses on purpose"#
            ),
            (
                keypad(#"entry: {maxAttempts: "lots"}"#),
                #"keypad.entry.maxAttempts: expected a number of wrong codes from 1 to 1000 or "unlimited", got the string "lots""#
            ),
            (
                keypad(#"entry: {minLength: 9}"#),
                "keypad.entry.minLength: 9 is more than keypad.entry.maxLength (8); allowed: 1 to keypad.entry.maxLength"
            ),
            (
                keypad(#"entry: {maxLength: 12}"#),
                #"keypad.entry.maxLength: 12 digits and the field's prefix need 18 columns; the display has 16 (lcd.geometry "16x2"); allowed: 1 to 10"#
            ),
            (keypad(#"entry: {maxLength: 33}"#), "keypad.entry.maxLength: 33 is out of range; allowed: a number of digits from 1 to 32"),
            (keypad(#"entry: {echo: "stars"}"#), #"keypad.entry.echo: "stars" is not allowed; use one of "masked", "shown", "brief""#),
            (keypad(#"entry: {maxAttempts: 0}"#), "keypad.entry.maxAttempts: 0 is out of range; allowed: a number of wrong codes from 1 to 1000"),
            (
                keypad(#"entry: {lockoutSeconds: []}"#),
                "keypad.entry.lockoutSeconds: the list is empty; allowed: a list of 1 to 16 lockouts in whole seconds from 1 to 86400, e.g. [30, 120, 600]"
            ),
            (
                keypad(#"entry: {lockoutSeconds: [30, 90000]}"#),
                "keypad.entry.lockoutSeconds[1]: 90000 is out of range; allowed: whole seconds from 1 to 86400"
            ),
            (
                keypad(#"entry: {timeoutSeconds: -1}"#),
                "keypad.entry.timeoutSeconds: -1 is out of range; allowed: null or whole seconds from 1 to 86400"
            ),
            (
                keypad(#"output: {pulseMs: 99999999999}"#),
                "keypad.output.pulseMs: 99999999999 is out of range; allowed: whole milliseconds from 1 to 600000"
            ),
            (
                #"{keypad: {enabled: true}}"#,
                #"keypad.verify.command: is null, but keypad.enabled is true: a keypad needs a command that checks the code; allowed: a list of strings, e.g. ["/usr/local/bin/check-code"] (the code arrives on its standard input), or keypad.code.source "device""#
            ),
            (
                #"{keypad: {enabled: true, verify: {command: []}}}"#,
                #"keypad.verify.command: the list is empty; allowed: null or a list of strings, the program and its arguments, run without a shell, e.g. ["/usr/local/bin/send-code", "--to", "+491701234567"]"#
            ),
            (
                keypad(#"entry: {minLenght: 4}"#),
                "keypad.entry.minLenght: unknown key (did you mean 'minLength'?); allowed in keypad.entry: minLength, maxLength, submitAtMaxLength, echo, echoMs, holdToClearMs, timeoutSeconds, validitySeconds, maxAttempts, lockoutSeconds, successSeconds, opensWithoutSend"
            ),
            (
                keypad(#"verfy: {}"#),
                "keypad.verfy: unknown key (did you mean 'verify'?); allowed in keypad: enabled, backend, rows, columns, keys, diodes, settleMicroseconds, device, debounceMs, sendKey, allowForgetfulState, entry, code, texts, verify, output"
            ),
            (
                #"{keypd: {}}"#,
                "keypd: unknown key (did you mean 'keypad'?); allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
            ),
            (
                #"{pulseMs: 3000}"#,
                "pulseMs: unknown key (did you mean 'keypad.output.pulseMs'?); allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
            ),
        ])
    func bad(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == ["t.json5: " + expected])
    }

    @Test("a disabled keypad's values are still checked, but what only matters when enabled is not required")
    func disabledStillValidated() {
        #expect(
            checkConfig(#"{keypad: {entry: {maxLength: 0}}}"#).err == [
                "t.json5: keypad.entry.maxLength: 0 is out of range; allowed: a number of digits from 1 to 32"
            ])
        #expect(checkConfig(#"{keypad: {backend: "evdev", entry: {maxLength: 12}}}"#).code == .ok)
    }

    @Test("a control character in a line name is escaped in the message")
    func escaped() {
        let outcome = checkConfig(keypad(#"output: {line: "GPIO5\u0007"}, rows: ["GPIO5\u0007", "GPIO6", "GPIO13", "GPIO19"]"#))
        #expect(outcome.err == [#"t.json5: keypad.output.line: "GPIO5\u0007" is also keypad.rows[0]; allowed: a GPIO line of its own"#])
    }
}

@Suite("Config file: the keypad's texts")
struct KeypadTextsConfigTests {
    private func keypad(_ extra: String, top: String = "") -> String {
        "{\(top) keypad: {enabled: true, verify: {command: [\"/usr/local/bin/check-code\"]}, \(extra)}}"
    }

    @Test("keypad.texts reach the entry flow; a day-long lockout fits 16x2 in its compact form")
    func textsReachTheFlow() throws {
        let text = keypad(
            #"entry: {lockoutSeconds: [86400]}, texts: {lockedLabel: "Wait {s}", closedTitle: "Out of order", tooLong: "Only {n} digits"}"#)
        #expect(checkConfig(text).code == .ok)
        let config = try DeviceConfig.parse(text: text, source: "t.json5")
        let pad = deviceCoordinator(controller: ControllerConfig(duration: .seconds(60)), button: Debouncer(), keypad: config.keypad)
        #expect(pad.entry?.config.texts.lockedLabel == "Wait {s}")
        #expect(pad.entry?.config.texts.closedTitle == "Out of order")
        #expect(pad.entry?.config.lockedLabel(seconds: 86_400, columns: 16) == "Wait 24:00:00")
        #expect(checkConfig(keypad(#"entry: {lockoutSeconds: [86400]}"#)).code == .ok, "Try again (24h) fits 16 columns")
    }

    @Test(
        "each bad keypad text: exit 78 and one line naming it",
        arguments: [
            (#"texts: {wrongCode: "Wrong"}"#, #"keypad.texts.wrongCode: "Wrong" needs exactly one {n}, found 0"#),
            (#"texts: {lockedLabel: "{s} {s}"}"#, #"keypad.texts.lockedLabel: "{s} {s}" needs exactly one {s}, found 2"#),
            (
                #"texts: {promptTitle: "Code ~"}"#,
                #"keypad.texts.promptTitle: "Code ~" has '~', which the A00 ROM cannot show (the A02 ROM can: set lcd.rom to "A02" if the module has it)"#
            ),
            (#"texts: {promptTitle: 7}"#, "keypad.texts.promptTitle: expected a text for the display, got the number 7"),
            (
                #"texts: {acceptedLabel: "Welcome to the house"}"#,
                #"keypad.entry: acceptedLabel "Welcome to the house" is 20 characters wide; the display has 16 columns (lcd.geometry "16x2")"#
            ),
        ])
    func badText(extra: String, message: String) {
        let outcome = checkConfig(keypad(extra))
        #expect(outcome.code == .config)
        #expect(outcome.err == ["t.json5: " + message])
    }
}
