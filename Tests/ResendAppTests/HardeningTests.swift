import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

// Issue 10: no input may crash the program; bad input gets one clear line and a sysexits code.

@Suite("Hostile input: one line and an exit code, never a trap")
struct HardeningTests {
    // MARK: Item 5: times near the ends of Int64 nanoseconds

    @Test(
        "a script time beyond 10 years is a usage error, not an overflow trap",
        arguments: [
            "press@9223372037", "press@9223372036854ms", "end@9223372036.855", "press@315360000.001", "bounce@99999999999999999999",
            "glitch@315360001s",
        ])
    func scriptTimeBeyondTheLimit(item: String) {
        let result = runCLI(["simulate", "--headless", "--script", "press@0 " + item])
        #expect(result.code == .usage)
        #expect(result.err == ["simulate: script item '\(item)': the time is after 315360000 s (10 years), the latest a script may use"])
    }

    @Test("a press at the 10-year limit runs its whole countdown (now + cooldown stays in range)")
    func pressAtTheLimit() {
        let result = runCLI(["simulate", "--headless", "--duration", "60", "--script", "press@315360000"])
        #expect(result.code == .ok)
        #expect(result.out.contains("315360000.020 screen |Verification    |Resend (60)     |"))
        #expect(result.out.contains("315360060.020 screen |Verification    |Resend          |"))
        #expect(result.out.last?.hasSuffix(" screen |Stopped         |                |") == true)
    }

    @Test("a --mock-send delay beyond 10 years is a usage error")
    func mockSendDelayBeyondTheLimit() {
        let result = runCLI(["simulate", "--headless", "--mock-send", "ok@9223372037", "--script", "press@0"])
        #expect(result.code == .usage)
        #expect(result.err == ["simulate: --mock-send: 'ok@9223372037': the time is after 315360000 s (10 years), the latest it may use"])
    }

    @Test(
        "a state file with times long before 1970 is moved aside and the device starts fresh",
        arguments: [
            "countdownEndsUnixMs", "runEndsUnixMs", "sendsUnixMs",
        ])
    func stateFileWithVeryNegativeTimes(key: String) {
        let directory = StateDirectory()
        var fields = ["countdownEndsUnixMs": "null", "runEndsUnixMs": "null", "sendsUnixMs": "[]"]
        fields[key] = key == "sendsUnixMs" ? "[-8000000000000]" : "-8000000000000"
        directory.write(
            "state.json",
            """
            {"version": 1, "status": "sent", "used": true, "countdownEndsUnixMs": \(fields["countdownEndsUnixMs"]!), "countdownSeconds": 60, \
            "run": 1, "runEndsUnixMs": \(fields["runEndsUnixMs"]!), "sendsUnixMs": \(fields["sendsUnixMs"]!)}
            """)
        let result = runCLI([
            "simulate", "--headless", "--events", "--state-file", directory.stateFile, "--max-sends", "2", "--window", "600", "--script", "end@1",
        ])
        #expect(result.code == .ok)
        let reason =
            key == "sendsUnixMs"
            ? "\\\"sendsUnixMs\\\" must hold Unix milliseconds from 0 to 7258118400000 (1970 to 2200)"
            : "\\\"\(key)\\\" must be Unix milliseconds from 0 to 7258118400000 (1970 to 2200) or null"
        #expect(result.out.first == "0.000 state unreadable reason=\"\(reason)\" moved_to=\(directory.path)/state.json.corrupt-1")
        #expect(result.out.contains("0.000 screen |Verification    |Send code       |"))
        #expect(directory.exists("state.json.corrupt-1"))
    }

    // MARK: Item 6: texts of several code points per character

    @Test(
        "a flag text with a character the ROM cannot show is refused like in the configuration file",
        arguments: [
            ("e\u{301}", "U+0301"), ("👩\u{200D}💻", "'👩'"), ("🇩🇪", "'🇩'"), ("a\r\nb", "U+000D"),
        ])
    func flagTextOfSeveralScalars(text: String, character: String) {
        let result = runCLI(["simulate", "--headless", "--title", text, "--script", "press@0"])
        #expect(result.code == .usage)
        #expect(result.err == ["simulate: --title \(jsonString(text)) has \(character), which the A00 ROM cannot show"])
        let config = runCLI(["config", "check", "c.json5"], files: ["c.json5": "{texts: {title: \(jsonString(text))}}"])
        #expect(config.code == .config)
        #expect(config.err == ["c.json5: texts.title: \(jsonString(text)) has \(character), which the A00 ROM cannot show"])
    }

    @Test("width counts one display cell per code point: a voiced katakana is two cells, not one")
    func widthInCells() {
        // "ｶﾞ" is one Character but two ROM glyphs (U+FF76 U+FF9E); 15 + 2 cells do not fit 16.
        let title = String(repeating: "A", count: 14) + "ｶﾞ"
        let fits = runCLI(["simulate", "--headless", "--title", title, "--script", "end@0"])
        #expect(fits.code == .ok)
        // Exactly 16 cells (the emulator renders katakana codes as "?"); the driver got no 17th.
        #expect(fits.out.contains("0.000 screen |AAAAAAAAAAAAAA??|Send code       |"), "\(fits.out)")
        let tooWide = runCLI(["simulate", "--headless", "--title", "A" + title, "--script", "end@0"])
        #expect(tooWide.code == .usage)
        #expect(tooWide.err == ["simulate: --title \"A\(title)\" is 17 characters wide; the display has 16 columns"])
    }

    // MARK: Item 10: messages and ranges of flags and script files

    @Test("a script file with CRLF line ends is read like one with LF")
    func crlfScript() {
        let lf = runCLI(["simulate", "--headless", "--script-file", "s"], files: ["s": "press@0\n# a comment\npress@1\nend@3\n"])
        let crlf = runCLI(["simulate", "--headless", "--script-file", "s"], files: ["s": "press@0\r\n# a comment\r\npress@1\r\nend@3\r\n"])
        #expect(crlf.code == .ok)
        #expect(crlf.err.isEmpty)
        #expect(crlf.out == lf.out)
        #expect(crlf.out.last == "3.000 screen |Stopped         |                |")
    }

    @Test(
        "an option followed by another option is missing its value, and says so",
        arguments: [
            (
                ["run", "--address", "--state-file", "off"],
                "run: option '--address' needs a value (ADDR), but the next argument '--state-file' is an option; to give a value starting with --, write --address=VALUE"
            ),
            (
                ["simulate", "--title", "--headless"],
                "simulate: option '--title' needs a value (TEXT), but the next argument '--headless' is an option; to give a value starting with --, write --title=VALUE"
            ),
            (["check", "--button"], "check: option '--button' needs a value (LINE)"),
        ])
    func optionAsValue(arguments: [String], message: String) {
        let result = runCLI(arguments)
        #expect(result.code == .usage)
        #expect(result.err == [message])
    }

    @Test("a value starting with -- can still be given with =")
    func dashedValueWithEquals() {
        let result = runCLI(["simulate", "--headless", "--title=--ok--", "--script", "end@0"])
        #expect(result.code == .ok)
        #expect(result.out.contains("0.000 screen |--ok--          |Send code       |"))
    }

    @Test(
        "new lines and escapes a user typed are escaped in the error line, never printed raw",
        arguments: [
            (
                ["simulate", "--headless", "--geometry", "16x2\n\u{1B}[2J"],
                "simulate: --geometry: '16x2\\n\\u001b[2J' is not a supported LCD size; use one of 16x2, 20x4, 40x2"
            ),
            (
                ["simulate", "--headless", "--script", "press@\u{1B}]0;pwned\u{07}"],
                "simulate: script item 'press@\\u001b]0;pwned\\u0007' is not KIND@TIME or KIND@TIME:KEYS (kinds: press, bounce, glitch, end; with keys: key, keys, down, up; time like 12, 12.5s or 500ms)"
            ),
            (["run", "--duration", "5\r"], "run: --duration: expected whole seconds from 1 to 86400, got '5\\r'"),
            (
                ["simulate\n"],
                "resend-button: unknown command 'simulate\\n'; did you mean 'simulate'? (commands: simulate, run, check, config, output)"
            ),
            (["run", "--x\u{1B}"], "run: unknown option '--x\\u001b'"),
        ])
    func controlCharactersEscaped(arguments: [String], message: String) {
        let result = runCLI(arguments)
        #expect(result.code == .usage)
        #expect(result.err == [message])
    }

    @Test(
        "line names and paths with control characters, and an empty path, are refused",
        arguments: [
            (["run", "--button", "GPIO\u{1B}[31m17"], "run: --button: 'GPIO\\u001b[31m17' contains a control character; a GPIO line name must not"),
            (["check", "--led", "GPIO27\n"], "check: --led: 'GPIO27\\n' contains a control character; a GPIO line name must not"),
            (
                ["simulate", "--headless", "--state-file", "/tmp/a\nb"],
                "simulate: --state-file: '/tmp/a\\nb' contains a control character; a path must not"
            ),
            (["run", "--state-file", ""], "run: --state-file: '' is empty; give a path to a file"),
            (["simulate", "--headless", "--state-file="], "simulate: --state-file: '' is empty; give a path to a file"),
            (["run", "--config", "/etc/\u{1B}x"], "run: --config: '/etc/\\u001bx' contains a control character; a path must not"),
            (["simulate", "--headless", "--script-file", ""], "simulate: --script-file: '' is empty; give a path to a file"),
        ])
    func controlCharactersInNamesAndPaths(arguments: [String], message: String) {
        let result = runCLI(arguments)
        #expect(result.code == .usage)
        #expect(result.err == [message])
    }

    @Test(
        "--window, --max-sends and --cooldowns have the configuration file's ranges",
        arguments: [
            (["--max-sends", "2", "--window", "86401"], "simulate: --window: expected whole seconds from 1 to 86400, got '86401'"),
            (["--max-sends", "1001", "--window", "60"], "simulate: --max-sends: expected sends from 1 to 1000, got '1001'"),
            (
                ["--cooldowns", Array(repeating: "1", count: 17).joined(separator: ",")],
                "simulate: --cooldowns: 17 cooldowns; give 1 to 16, like 60,120,300"
            ),
        ])
    func policyRanges(flags: [String], message: String) {
        let result = runCLI(["simulate", "--headless"] + flags + ["--script", "press@0"])
        #expect(result.code == .usage)
        #expect(result.err == [message])
        #expect(DeviceConfig.Policy.windowRange == 1...86_400)
    }

    @Test("a window of a whole day is accepted on the command line and in the file alike")
    func windowOfADay() {
        #expect(runCLI(["simulate", "--headless", "--max-sends", "2", "--window", "86400", "--script", "press@0"]).code == .ok)
        let config = runCLI(["config", "check", "c.json5"], files: ["c.json5": "{policy: {enabled: true, windowSeconds: 86400}}"])
        #expect(config.code == .ok)
    }

    @Test("--mock-send exit codes are 0-255", arguments: ["exit=256@1", "exit=300@1", "exit=-1@1", "exit=@1"])
    func mockSendExitCode(outcome: String) {
        let result = runCLI(["simulate", "--headless", "--mock-send", outcome, "--script", "press@0"])
        #expect(result.code == .usage)
        #expect(result.err == ["simulate: --mock-send: '\(outcome)': the exit status must be a whole number from 0 to 255"])
    }

    @Test("--mock-send exit=255 is accepted and reported")
    func mockSendExit255() {
        let result = runCLI(["simulate", "--headless", "--events", "--mock-send", "exit=255@1", "--script", "press@0 end@2"])
        #expect(result.code == .ok)
        #expect(result.out.contains { $0.hasPrefix("1.020 send finished result=failed exit=255") })
    }
}

@Suite("Virtual event source at scale")
struct VirtualEventSourceScaleTests {
    @Test("unsorted inputs come back in time order, ties in the order scheduled, also when scheduled while running")
    func orderOfManyInputs() throws {
        let clock = ManualClock()
        var inputs: [(time: Instant, input: LoopInput)] = []
        for index in 0..<2_000 {
            // Times 0-999 ms, scrambled, each twice; the edge's own time carries its index.
            let time = Instant(nanoseconds: Int64((index * 7_919) % 1_000) * 1_000_000)
            inputs.append((time, .button(ButtonEdge(pressed: index % 2 == 0, time: Instant(nanoseconds: Int64(index))))))
        }
        var source = VirtualEventSource(clock: clock, inputs: Array(inputs[..<1_000]))
        var order: [Int64] = []
        var times: [Instant] = []
        func collect(_ batch: [LoopInput]) {
            for edge in batch.compactMap(\.buttonEdge) {
                order.append(edge.time.nanoseconds)
                times.append(clock.now())
            }
        }
        collect(try source.wait(until: nil))
        source.schedule(Array(inputs[1_000...]))
        while true {
            let batch = try source.wait(until: nil)
            if batch == [.stop] { break }
            collect(batch)
        }
        #expect(times == times.sorted())
        let expected = inputs.indices.sorted { a, b in inputs[a].time != inputs[b].time ? inputs[a].time < inputs[b].time : a < b }
        #expect(order == expected.map { Int64($0) })
        #expect(source.pending.isEmpty)
    }
}

@Suite("Fuzz finds, kept as tests")
struct FuzzRegressionTests {
    @Test(
        "config: a subcommand or FILE with control characters is escaped or refused (fuzz-cli crasher)",
        arguments: [
            (["config", "che\u{FFFD}\u{04}n5"], "config: unknown subcommand 'che\u{FFFD}\\u0004n5'\nusage: resend-button config check FILE"),
            (
                ["config", "check", "a\u{1B}b.json5"],
                "config check: FILE 'a\\u001bb.json5' contains a control character; a path must not\nusage: resend-button config check FILE"
            ),
            (["config", "check", ""], "config check: FILE '' is empty; give a path to a file\nusage: resend-button config check FILE"),
        ])
    func configArguments(arguments: [String], message: String) {
        let result = runCLI(arguments)
        #expect(result.code == .usage)
        #expect(result.err.joined(separator: "\n") == message, "two lines: the reason, then the usage")
    }
}
