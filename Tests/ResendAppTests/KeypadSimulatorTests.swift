import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// A keypad configuration (4x3 matrix defaults) with these extra `keypad` members and `lcd` members.
private func keypadConfig(_ keypad: String = "", lcd: String = "") -> [String: String] {
    ["kp.json5": "{ lcd: { \(lcd) }, keypad: { enabled: true, verify: { command: ['/usr/local/bin/check-code'] }, \(keypad) } }"]
}

private func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

/// `3.020 screen |Code: *_______  |Resend (07)     |` on a 16x2 display.
private func screen(_ time: String, _ lines: String...) -> String {
    let width = lines.count == 4 ? 20 : 16
    return "\(time) screen |" + lines.map { pad($0, width) }.joined(separator: "|") + "|"
}

private func simulate(_ arguments: [String], files: [String: String] = keypadConfig()) -> CommandResult {
    runCLI(["simulate", "--config", "kp.json5", "--headless"] + arguments, files: files)
}

@Suite("Simulator with a keypad")
struct KeypadSimulatorTests {
    @Test(
        "the button keeps its own debounce settings beside the keypad's: --debounce 20 with keypad.debounceMs 60 counts a press at +20 ms, a key at +60 ms"
    )
    func buttonKeepsItsDebounce() {
        let result = simulate(["--debounce", "20", "--script", "press@0 key@2:5 end@4"], files: keypadConfig("debounceMs: 60"))
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out.contains(screen("0.020", "Code: ________", "Resend (60)")))
        #expect(result.out.contains(screen("2.060", "Code: *_______", "Resend (58)")))
    }

    @Test("a send, a wrong code with the attempts left, then the right one: the screens on 16x2 and the output line pulsed")
    func wrongThenAccepted() {
        let result = simulate(
            [
                "--duration", "10", "--mock-send", "ok@1", "--mock-verify", "reject@0.5,accept@0.5", "--script",
                "press@0 keys@3:1234# keys@6:4321# end@20",
            ],
            files: keypadConfig("output: { line: 'GPIO26', pulseMs: 2000 }"))
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(
            result.out == [
                "0.000 led on",
                "0.000 output off",
                screen("0.000", "Verification", "Send code"),
                "0.020 led off",
                screen("0.020", "Sending...", "Resend (10)"),
                screen("1.020", "Code: ________", "Resend (09)"),
                screen("2.020", "Code: ________", "Resend (08)"),
                screen("3.020", "Code: *_______", "Resend (07)"),
                screen("3.320", "Code: **______", "Resend (07)"),
                screen("3.620", "Code: ***_____", "Resend (07)"),
                screen("3.920", "Code: ****____", "Resend (07)"),
                screen("4.020", "Code: ****____", "Resend (06)"),
                screen("4.220", "Checking...", "Resend (06)"),
                screen("4.720", "Wrong, 2 left", "Resend (06)"),
                screen("5.020", "Wrong, 2 left", "Resend (05)"),
                screen("6.020", "Code: *_______", "Resend (04)"),
                screen("6.320", "Code: **______", "Resend (04)"),
                screen("6.620", "Code: ***_____", "Resend (04)"),
                screen("6.920", "Code: ****____", "Resend (04)"),
                screen("7.020", "Code: ****____", "Resend (03)"),
                screen("7.220", "Checking...", "Resend (03)"),
                "7.720 output on",
                screen("7.720", "Code accepted", "Welcome"),
                "9.720 output off",
                "10.020 led on",
                screen("10.720", "Verification", "Resend"),
                "20.000 led off",
                screen("20.000", "Stopped", ""),
            ])
    }

    @Test("on 20x4 the countdown keeps its two lines; a lockout counts down, then the code expires")
    func lockoutAndExpiryOn20x4() {
        let result = simulate(
            ["--duration", "30", "--mock-send", "ok@1", "--mock-verify", "reject@0.5", "--script", "press@0 keys@2:1111# keys@4:2222# end@23"],
            files: keypadConfig("entry: { maxAttempts: 2, lockoutSeconds: [3], validitySeconds: 20 }", lcd: "geometry: '20x4'"))
        #expect(result.code == .ok)
        #expect(result.out.contains(screen("1.020", "Code sent", "Resend (29)", "Enter code", "Code: ________")))
        #expect(result.out.contains(screen("3.220", "Code sent", "Resend (27)", "Checking...", "Code: ****")))
        #expect(result.out.contains(screen("3.720", "Code sent", "Resend (27)", "Wrong, 1 left", "Code: ________")))
        #expect(result.out.contains(screen("5.720", "Code sent", "Resend (25)", "Too many tries", "Try again (03)")))
        #expect(result.out.contains(screen("7.720", "Code sent", "Resend (23)", "Too many tries", "Try again (01)")))
        #expect(result.out.contains(screen("8.720", "Code sent", "Resend (22)", "Enter code", "Code: ________")))
        #expect(result.out.contains(screen("21.020", "Code sent", "Resend (09)", "Code expired", "press Resend")))
    }

    @Test("holding * (down@/up@) for the hold-to-clear time clears the field; a tap of * deletes one digit")
    func holdStarClears() {
        let result = simulate(
            ["--mock-send", "ok@0.5", "--script", "press@0 keys@1:123* down@3:* up@4.5:* end@5"],
            files: keypadConfig("entry: { echo: 'shown' }"))
        #expect(result.code == .ok)
        #expect(result.out.contains(screen("1.620", "Code: 123_____", "Resend (59)")))
        #expect(result.out.contains(screen("1.920", "Code: 12______", "Resend (59)")))
        // Down at 3 s, debounced at 3.020 s, held 1 s (keypad.entry.holdToClearMs) more.
        #expect(result.out.contains(screen("4.020", "Code: ________", "Resend (56)")))
    }

    @Test("down@/up@ hold the single button, without a keypad too: one press however long it is held")
    func holdTheButton() {
        let result = runCLI(["simulate", "--headless", "--duration", "3", "--events", "--script", "down@0:button up@5:button end@6"])
        #expect(result.code == .ok)
        #expect(result.out.filter { $0.hasSuffix("press accepted") } == ["0.020 press accepted"])
        #expect(result.out.contains("3.020 countdown finished"))
    }

    @Test("--events logs each check's length and outcome and never a digit: the output is the same whatever the digits typed")
    func eventsNeverShowADigit() {
        func run(_ code: String) -> CommandResult {
            simulate(["--events", "--mock-send", "ok@1", "--mock-verify", "reject@0.2", "--script", "press@0 keys@2:\(code)# end@5"])
        }
        let first = run("918273")
        let second = run("000000")
        #expect(first.code == .ok)
        #expect(first.out == second.out)
        #expect(first.out.contains("3.820 code submitted length=6 check=1"))
        #expect(first.out.contains("4.020 verify finished result=rejected exit=1 ms=200"))
        #expect(first.out.contains("4.020 code rejected attempts_left=2"))
        #expect(!first.out.joined(separator: "\n").contains("918273"))
    }

    @Test(
        "a flood of # at the keypad is 10 'code too short' lines per 10 s and a summary counting the rest; the device's own 'code rejected' still logged"
    )
    func keyFloodIsRateLimited() {
        let flood = String(repeating: "#", count: 60)
        let result = simulate([
            "--events", "--mock-send", "ok@1", "--mock-verify", "reject@0.2", "--script", "press@0 keys@2:\(flood) keys@25:1234# end@40",
        ])
        #expect(result.code == .ok)
        let tooShort = result.out.filter { $0.hasSuffix(" code too short length=0") }
        #expect(tooShort.count == 20)
        #expect(result.out.contains("12.020 log suppressed event=\"code too short\" count=24 seconds=10"))
        #expect(result.out.contains("23.020 log suppressed event=\"code too short\" count=16 seconds=10"))
        #expect(result.out.contains("26.420 code rejected attempts_left=2"))
    }

    @Test("--headless --realtime --verify-command: a real command gets the code on its standard input (a wrong code, then the right one)")
    func realVerifyCommand() {
        let result = simulate(
            [
                "--realtime", "--events", "--duration", "1", "--verify-command", "grep -qx 4711", "--script",
                "press@0 keys@0.1:1234# keys@3.5:4711# end@7",  // 2 s and more for each check: a loaded machine starts grep late
            ],
            files: keypadConfig("output: { line: 'GPIO26', pulseMs: 5000 }"))
        #expect(result.code == .ok)
        #expect(result.err == [])
        let screens = result.out.filter { $0.contains(" screen |") }.map { String($0.drop { $0 != " " }) }
        let wrong = screens.firstIndex(of: " screen |Wrong, 2 left   |Resend          |")
        let accepted = screens.firstIndex(of: " screen |Code accepted   |Welcome         |")
        #expect(wrong != nil && accepted != nil && wrong! < accepted!)
        #expect(result.out.contains { $0.hasSuffix(" output on") })
        #expect(result.out.filter { $0.contains("verify finished") }.map { $0.split(separator: " ")[3] } == ["result=rejected", "result=accepted"])
        #expect(!result.out.joined().contains("4711") && !result.out.joined().contains("1234"))
    }

    @Test("--state-file: a lockout survives a restart of the simulator (the entry state on the wall clock)")
    func lockoutAcrossRestart() throws {
        let directory = StateDirectory()
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        var services = SimulationServices()
        services.keypad = keypad
        services.stateFile = directory.stateFile
        services.mockSend = [.succeeds(after: .seconds(1))]
        services.mockVerify = [.init(after: .milliseconds(500), .exited(code: 1))]
        let wall = WallTime(millisecondsSinceEpoch: 1_764_547_200_000)
        services.virtualWallStart = wall
        var first: [String] = []
        try runHeadless(
            settings: BehaviourSettings(), services: services,
            script: parseScript("press@0 keys@2:1111# keys@4:2222# keys@6:3333# end@9", command: "test"), events: true
        ) { first.append($0) }
        #expect(first.contains("7.720 entry lockout started seconds=30 round=1"))
        // Restarted 20 s (wall) after the first run started: 17.72 s of the 30 s lockout are left.
        services.virtualWallStart = wall + .seconds(20)
        var second: [String] = []
        try runHeadless(settings: BehaviourSettings(), services: services, script: parseScript("end@1", command: "test"), events: true) {
            second.append($0)
        }
        #expect(second.contains("0.000 entry lockout resumed seconds_left=18"))
        #expect(second.contains { $0.hasPrefix("0.000 screen |Try again (18)  |Resend (") })
    }

    @Test(
        "--mock-verify outcomes: an error exit and a command that cannot start are a failed check, a time-out a timed-out one, logged as such",
        arguments: [
            ("error@1", "3.220 verify finished result=failed exit=2 ms=1000", "3.220 screen |Check failed    |Resend (57)     |"),
            ("exit=7@1", "3.220 verify finished result=failed exit=7 ms=1000", "3.220 screen |Check failed    |Resend (57)     |"),
            (
                "timeout@10", "12.220 verify finished result=timeout after_ms=10000 killed=0 ms=10000",
                "12.220 screen |Check timed out |Resend (48)     |"
            ),
            (
                "notfound", "2.220 verify finished result=not_started reason=\"verify-command: ENOENT (2): no such file or directory\" ms=0",
                "2.220 screen |Check failed    |Resend (58)     |"
            ),
        ])
    func verifyErrors(outcome: String, logLine: String, screenLine: String) {
        let result = simulate(["--events", "--mock-verify", outcome, "--script", "press@0 keys@1:1234# end@15"])
        #expect(result.code == .ok)
        #expect(result.out.contains("2.220 code submitted length=4 check=1"))
        #expect(result.out.contains(logLine))
        #expect(result.out.contains(screenLine))
    }

    @Test(
        "bad key items, keypad flags and keypad keys without a keypad: one line naming the thing and what is allowed, exit 64",
        arguments: [
            (["--script", "key@1"], "simulate: script item 'key@1': give the key after the time, like key@1:5 (keys: 0-9, *, #, A-D)"),
            (
                ["--script", "key@1:12"],
                "simulate: script item 'key@1:12': one key per key@ item (allowed: 0-9, *, #, A-D); for several keys use keys@"
            ),
            (["--script", "key@1:x"], "simulate: script item 'key@1:x': 'x' is not a key (allowed: 0-9, *, #, A-D)"),
            (
                ["--script", "key@1:button"],
                "simulate: script item 'key@1:button': the button is no keypad key; allowed: 0-9, *, #, A-D (press@T, or down@T:button and up@T:button, for the button)"
            ),
            (["--script", "down@1:\u{1B}"], "simulate: script item 'down@1:\\u001b': '\\u001b' is not a key (allowed: 0-9, *, #, A-D or button)"),
            (["--script", "up@1:**"], "simulate: script item 'up@1:**': one key per up@ item (allowed: 0-9, *, #, A-D or button)"),
            (["--script", "keys@1:"], "simulate: script item 'keys@1:': give the key after the time, like keys@1:1234# (keys: 0-9, *, #, A-D)"),
            (
                ["--script", "keys@1:" + String(repeating: "1", count: 65)],
                "simulate: script item 'keys@1:" + String(repeating: "1", count: 65)
                    + "': more than 64 keys; allowed: 1 to 64 of 0-9, *, #, A-D (split longer input into several items)"
            ),
            (
                ["--script", "keys@99999999999:1"],
                "simulate: script item 'keys@99999999999:1': the time is after 315360000 s (10 years), the latest a script may use"
            ),
            (
                ["--script", "press@1:5"],
                "simulate: script item 'press@1:5' is not KIND@TIME or KIND@TIME:KEYS (kinds: press, bounce, glitch, end; with keys: key, keys, down, up; time like 12, 12.5s or 500ms)"
            ),
            (
                ["--mock-verify", "yes@1"],
                "simulate: --mock-verify: unknown outcome 'yes' (accept, reject, expired, tempfail, error, exit=N, timeout, notfound)"
            ),
            (
                ["--mock-verify", "accept"],
                "simulate: --mock-verify: 'accept' is not OUTCOME@TIME (accept, reject, expired, tempfail, error, exit=N, timeout) or notfound"
            ),
            (["--mock-verify", "exit=256@1"], "simulate: --mock-verify: 'exit=256@1': the exit status must be a whole number from 0 to 255"),
            (["--mock-verify", ","], "simulate: --mock-verify: give at least one outcome"),
            (["--mock-verify", "accept@1", "--verify-command", "/bin/true"], "simulate: give either --verify-command or --mock-verify, not both"),
            (
                ["--verify-command", "/bin/true"],
                "simulate: --verify-command runs a real process: use it with --headless --realtime (or --mock-verify on virtual time)"
            ),
        ])
    func badInput(arguments: [String], message: String) {
        let result = simulate(arguments)
        #expect(result.code == .usage)
        #expect(result.err == [message])
        #expect(result.out == [])
    }

    @Test(
        "without a keypad, key items and the verify flags say what they need, exit 64",
        arguments: [
            (
                ["--script", "key@1:5"],
                "simulate: the script's key items (key@, keys@, down@ and up@ of a key) need the keypad: set keypad.enabled to true in the configuration file (--config PATH); down@T:button and up@T:button hold the button without one"
            ),
            (
                ["--mock-verify", "accept@1"],
                "simulate: --mock-verify needs the keypad: set keypad.enabled to true in the configuration file (--config PATH)"
            ),
            (
                ["--verify-command", "/bin/true"],
                "simulate: --verify-command needs the keypad: set keypad.enabled to true in the configuration file (--config PATH)"
            ),
        ])
    func keypadMissing(arguments: [String], message: String) {
        let result = runCLI(["simulate", "--headless"] + arguments)
        #expect(result.code == .usage)
        #expect(result.err == [message])
    }

    @Test("a --geometry narrower than the keypad's field is refused before anything runs, exit 64")
    func geometryTooNarrow() {
        let result = simulate(
            ["--geometry", "16x2", "--script", "press@0"], files: keypadConfig("entry: { maxLength: 14 }", lcd: "geometry: '20x4'"))
        #expect(result.code == .usage)
        #expect(
            result.err == [
                "simulate: the keypad's entry rules do not fit the 16x2 LCD: fieldPrefix and maxLength need 20 columns; the display has 16 (keypad.entry in the configuration file, or --geometry)"
            ])
    }

    @Test("in the script, # inside a key item's keys is the # key; elsewhere it starts a comment")
    func poundIsAKey() throws {
        let items = try parseScript("press@0 # a comment\nkeys@1:12#  # submit\nkey@2:#,down@3:*\npress@4#y", command: "simulate")
        #expect(
            items == [
                .press(at: .zero), .keys(at: .seconds(1), [.digit1, .digit2, .pound]), .key(at: .seconds(2), .pound), .down(at: .seconds(3), .star),
                .press(at: .seconds(4)),
            ])
    }
}

/// Terminal bytes typed at given instants on a virtual clock (the terminal blocks until the next).
private struct TypedBytes: KeySource {
    let clock: ManualClock
    var keys: [(Instant, UInt8)]
    mutating func waitForKeys(until deadline: Instant?) throws(HALError) -> [KeyInput] {
        if let next = keys.first, deadline == nil || next.0 <= deadline! {
            clock.set(to: max(clock.now(), next.0))
            keys.removeFirst()
            return [.key(next.1)]
        }
        if let deadline {
            clock.set(to: max(clock.now(), deadline))
            return []
        }
        return [.stop]
    }
}

private func typed(_ text: String, from start: Instant, every spacing: TimeSpan) -> [(Instant, UInt8)] {
    text.utf8.enumerated().map { (start + spacing * Int64($0.offset), $0.element) }
}

@Suite("Interactive simulator with a keypad")
struct InteractiveKeypadTests {
    @Test("0-9, *, # and upper-case A-D tap keypad keys for 100 ms; lower-case letters stay the simulator's; x holds * past the clear time")
    func keysBecomeKeypadKeys() throws {
        let clock = ManualClock()
        let t = Instant.origin + .seconds(1)
        let bytes: [(Instant, UInt8)] = [
            (t, UInt8(ascii: "4")), (t + .seconds(1), UInt8(ascii: "A")), (t + .seconds(2), UInt8(ascii: "a")),
            (t + .seconds(3), UInt8(ascii: "x")), (t + .seconds(6), UInt8(ascii: "#")), (t + .milliseconds(6_010), UInt8(ascii: "#")),
        ]
        var source = KeyboardButton(keys: TypedBytes(clock: clock, keys: bytes), clock: clock, bounceKey: "b", clearHold: .milliseconds(1_000))
        var events: [KeyEvent] = []
        while true {
            let inputs = try source.wait(until: nil)
            if inputs == [.stop] { break }
            for input in inputs {
                guard case .key(let event) = input else { Issue.record("unexpected \(input)"); return }
                events.append(event)
            }
        }
        #expect(
            events == [
                KeyEvent(.digit4, .pressed, at: t), KeyEvent(.digit4, .released, at: t + .milliseconds(100)),
                KeyEvent(.a, .pressed, at: t + .seconds(1)), KeyEvent(.a, .released, at: t + .milliseconds(1_100)),
                KeyEvent(.star, .pressed, at: t + .seconds(3)), KeyEvent(.star, .released, at: t + .milliseconds(4_100)),
                KeyEvent(.pound, .pressed, at: t + .seconds(6)), KeyEvent(.pound, .released, at: t + .milliseconds(6_100)),
                // Typed again while still down: pressed 30 ms after its release.
                KeyEvent(.pound, .pressed, at: t + .milliseconds(6_130)), KeyEvent(.pound, .released, at: t + .milliseconds(6_230)),
            ])
    }

    @Test("the drawing shows the typed field, x clears it, and the help names the keypad's keys")
    func drawingWithKeypad() throws {
        let clock = ManualClock()
        let settings = BehaviourSettings()
        let device = MockDevice(
            settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true))
        var started = device
        try started.startDisplay(now: clock.now())
        var drawings: [String] = []
        let output = RecordingLED(clock: clock)
        let renderer = TerminalRenderer(
            emulator: device.emulator, led: device.led, settings: settings, bounceKey: "b", keypad: true,
            outputLine: output
        ) { drawings.append($0) }
        let bytes =
            [(Instant.origin + .seconds(1), UInt8(ascii: " "))] + typed("123", from: .origin + .seconds(2), every: .milliseconds(300))
            + [(Instant.origin + .seconds(4), UInt8(ascii: "x")), (Instant.origin + .seconds(8), UInt8(ascii: "q"))]
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        let environment = LoopEnvironment(
            source: KeyboardButton(keys: TypedBytes(clock: clock, keys: bytes), clock: clock, bounceKey: "b", clearHold: .milliseconds(1_000)),
            display: started.display, outputs: Outputs(led: device.led, strike: output), commands: .device(send: .none, verify: .none), clock: clock,
            wallClock: ManualWallClock(WallTime(nanosecondsSinceEpoch: 0), following: clock), observer: renderer, store: NoStateStorage?.none,
            random: DeviceRandom.simulated)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: settings.controllerConfig, button: settings.makeDebouncer(), keypad: keypad))
        try loop.run()
        let typedField = try #require(drawings.firstIndex { $0.contains("│Code: ***_____  │") })
        #expect(drawings[typedField...].contains { $0.contains("│Code: ________  │") })
        #expect(renderer.frameLines().contains("  keypad: 0-9 * # A-D (upper case)   x hold * (clears)"))
        #expect(renderer.frameLines().contains { $0.hasSuffix("output ○ off") })
    }
}

/// The blocks of the keypad page's example (docs/keypad.md): the configuration file, the command line (split
/// like a shell splits it: spaces, double quotes) and the output.
private func keypadPageExample() throws -> (config: String, arguments: [String], output: [String]) {
    let page = try #require(readRepositoryFile("docs/keypad.md"))
    let start = try #require(page.firstRange(of: "### Example: a headless run with the keypad"))
    var rest = page[start.upperBound...]
    func block(after fence: String) throws -> String {
        let open = try #require(rest.firstRange(of: fence))
        let body = rest[open.upperBound...]
        let close = try #require(body.firstRange(of: "\n```"))
        rest = body[close.upperBound...]
        return String(body[..<close.lowerBound])
    }
    let config = try block(after: "```json5\n")
    let command = try block(after: "```sh\n")
    let output = try block(after: "```\n")
    var arguments: [String] = []
    var word = ""
    var quoted = false
    for character in command {
        if character == "\"" {
            quoted.toggle()
        } else if character == " " && !quoted {
            if !word.isEmpty { arguments.append(word) }
            word = ""
        } else {
            word.append(character)
        }
    }
    if !word.isEmpty { arguments.append(word) }
    return (config, arguments, output.split(separator: "\n").map(String.init))
}

@Suite("docs/keypad.md: the keypad example")
struct KeypadPageTests {
    @Test("the keypad page's headless keypad run prints exactly what the page shows")
    func pageExampleIsTrue() throws {
        let example = try keypadPageExample()
        #expect(example.arguments.first == "resend-button")
        #expect(example.output.count > 20)
        let result = runCLI(Array(example.arguments.dropFirst()), files: ["keypad.json5": example.config])
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out == example.output)
    }
}

extension KeypadPageTests {
    /// The screens drawn in the keypad page's code block after `heading`: every box's rows.
    private func pageScreens(after heading: String) throws -> [[String]] {
        let page = try #require(readRepositoryFile("docs/keypad.md"))
        let start = try #require(page.firstRange(of: heading))
        let rest = page[start.upperBound...]
        let open = try #require(rest.firstRange(of: "```\n"))
        let body = rest[open.upperBound...]
        let close = try #require(body.firstRange(of: "\n```"))
        var screens: [[String]] = []
        var group: [[String]] = []
        for line in body[..<close.lowerBound].split(separator: "\n") {
            if line.hasPrefix("│") {
                let cells = line.split(separator: "│", omittingEmptySubsequences: false)
                let rows = stride(from: 1, to: cells.count, by: 2).map { String(cells[$0]) }
                if group.isEmpty { group = rows.map { [$0] } } else { for (index, row) in rows.enumerated() { group[index].append(row) } }
            } else if line.hasPrefix("└") {
                screens += group
                group = []
            }
        }
        return screens
    }

    @Test(
        "the keypad page's flow screens (16x2 and 20x4) are what the simulator shows",
        arguments: [
            ("The flow on 16x2", ""), ("On 20x4 the resend screen", "geometry: '20x4'"),
        ])
    func pageScreensAreTrue(heading: String, lcd: String) throws {
        let screens = try pageScreens(after: heading)
        #expect(screens.count == 7)
        let files = keypadConfig("entry: { validitySeconds: 40 }", lcd: lcd)
        var shown: Set<[String]> = []
        for (verify, script) in [
            ("reject@0.5", "press@0 keys@2:1111# keys@4:2222# keys@6:3333# end@45"), ("accept@0.5", "press@0 keys@2:1111# end@9"),
        ] {
            let result = simulate(["--mock-send", "ok@1", "--mock-verify", verify, "--script", script], files: files)
            #expect(result.code == .ok)
            for line in result.out where line.contains(" screen |") {
                shown.insert(line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map(String.init))
            }
        }
        for screen in screens {
            #expect(shown.contains(screen), "docs/keypad.md shows \(screen), the simulator never did")
        }
    }
}
