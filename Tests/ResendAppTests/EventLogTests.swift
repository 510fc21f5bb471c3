import HAL
import HALLinux
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

struct LogCase: Sendable, CustomTestStringConvertible {
    var event: LoopEvent
    var at: Double
    var plain: String
    var json: String
    var testDescription: String { plain }
}

let remoteIO = HALError(.noDevice, operation: "write /dev/i2c-1", errno: 121)

struct EventLogTests {
    static let cases: [LogCase] = [
        LogCase(
            event: .controller(.pressAccepted(at: at(12.345))), at: 12.345,
            plain: "12.345 press accepted", json: #"{"t":12.345,"event":"press_accepted"}"#),
        LogCase(
            event: .controller(.countdownStarted(until: at(72.345), seconds: 60)), at: 12.345,
            plain: "12.345 countdown started seconds=60", json: #"{"t":12.345,"event":"countdown_started","seconds":60}"#),
        LogCase(
            event: .controller(.countdownResumed(until: at(20), secondsLeft: 8)), at: 12.5,
            plain: "12.500 countdown resumed seconds_left=8", json: #"{"t":12.500,"event":"countdown_resumed","seconds_left":8}"#),
        LogCase(
            event: .controller(.countdownCancelled(at: at(3))), at: 3,
            plain: "3.000 countdown cancelled", json: #"{"t":3.000,"event":"countdown_cancelled"}"#),
        LogCase(
            event: .controller(.pressLockedOut(at: at(5), secondsLeft: 300)), at: 5,
            plain: "5.000 press locked out seconds_left=300", json: #"{"t":5.000,"event":"press_locked_out","seconds_left":300}"#),
        LogCase(
            event: .controller(.sendStarted(attempt: 2, sequence: 7, cooldownSeconds: 120)), at: 1,
            plain: "1.000 send started attempt=2 cooldown_seconds=120",
            json: #"{"t":1.000,"event":"send_started","attempt":2,"cooldown_seconds":120}"#),
        LogCase(
            event: .controller(
                .sendFinished(CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: .milliseconds(120)), at: at(1.12), superseded: false)),
            at: 1.12, plain: "1.120 send finished result=ok exit=0 ms=120",
            json: #"{"t":1.120,"event":"send_finished","result":"ok","exit":0,"ms":120}"#),
        LogCase(
            event: .controller(
                .sendFinished(
                    CommandOutcome(
                        sequence: 1, ending: .exited(code: 3), duration: .seconds(1), output: Array("no route\n".utf8), droppedOutputBytes: 10),
                    at: at(2), superseded: false)),
            at: 2, plain: #"2.000 send finished result=failed exit=3 ms=1000 output_bytes=19"#,
            json: #"{"t":2.000,"event":"send_finished","result":"failed","exit":3,"ms":1000,"output_bytes":19}"#),
        LogCase(
            event: .controller(
                .sendFinished(
                    CommandOutcome(sequence: 1, ending: .timedOut(after: .seconds(10), killed: true), duration: .seconds(12)), at: at(12),
                    superseded: false)),
            at: 12, plain: "12.000 send finished result=timeout after_ms=10000 killed=1 ms=12000",
            json: #"{"t":12.000,"event":"send_finished","result":"timeout","after_ms":10000,"killed":1,"ms":12000}"#),
        LogCase(
            event: .controller(
                .sendFinished(
                    CommandOutcome(sequence: 1, ending: .couldNotStart(reason: "sendsms: not found", errno: 2), duration: .zero), at: at(1),
                    superseded: false)),
            at: 1, plain: #"1.000 send finished result=not_started reason="sendsms: not found" ms=0"#,
            json: #"{"t":1.000,"event":"send_finished","result":"not_started","reason":"sendsms: not found","ms":0}"#),
        LogCase(
            event: .state(.unreadable(reason: "not JSON", movedTo: "/var/lib/resend-button/state.json.corrupt-1")), at: 0,
            plain: #"0.000 state unreadable reason="not JSON" moved_to=/var/lib/resend-button/state.json.corrupt-1"#,
            json: #"{"t":0.000,"event":"state_unreadable","reason":"not JSON","moved_to":"/var/lib/resend-button/state.json.corrupt-1"}"#),
        LogCase(
            event: .state(.newerFormat(StateFormatVersions(format: 3, readableFrom: 3), movedTo: "/var/lib/resend-button/state.json.corrupt-1")),
            at: 0, plain: "0.000 state newer format=3 readable_from=3 reads_up_to=2 moved_to=/var/lib/resend-button/state.json.corrupt-1",
            json:
                #"{"t":0.000,"event":"state_newer","format":3,"readable_from":3,"reads_up_to":2,"moved_to":"/var/lib/resend-button/state.json.corrupt-1"}"#
        ),
        LogCase(
            event: .state(.newerFormat(StateFormatVersions(format: 4, readableFrom: 3), movedTo: nil)), at: 0,
            plain:
                #"0.000 state newer format=4 readable_from=3 reads_up_to=2 kept="left as it is and not written (a keypad stays closed); install a resend-button that reads it, or remove the file to start afresh""#,
            json:
                #"{"t":0.000,"event":"state_newer","format":4,"readable_from":3,"reads_up_to":2,"kept":"left as it is and not written (a keypad stays closed); install a resend-button that reads it, or remove the file to start afresh"}"#
        ),
        LogCase(
            event: .state(.freshStart), at: 0,
            plain: "0.000 state fresh start", json: #"{"t":0.000,"event":"state_fresh_start"}"#),
        LogCase(
            event: .controller(.countdownFinished(at: at(72.345))), at: 72.345,
            plain: "72.345 countdown finished", json: #"{"t":72.345,"event":"countdown_finished"}"#),
        LogCase(
            event: .controller(.pressIgnored(at: at(15.001), secondsLeft: 57)), at: 15.001,
            plain: "15.001 press ignored seconds_left=57", json: #"{"t":15.001,"event":"press_ignored","seconds_left":57}"#),
        LogCase(
            event: .controller(.stopped), at: 80.5,
            plain: "80.500 stopped", json: #"{"t":80.500,"event":"stopped"}"#),
        LogCase(
            event: .display(.offline(remoteIO)), at: 20,
            plain: #"20.000 display offline op="write /dev/i2c-1" error="EREMOTEIO (121): no device answered""#,
            json: #"{"t":20.000,"event":"display_offline","op":"write /dev/i2c-1","error":"EREMOTEIO (121): no device answered"}"#),
        LogCase(
            event: .display(.online), at: 21.5,
            plain: "21.500 display online", json: #"{"t":21.500,"event":"display_online"}"#),
        LogCase(
            event: .display(.refreshed), at: 3600,
            plain: "3600.000 display refreshed", json: #"{"t":3600.000,"event":"display_refreshed"}"#),
        LogCase(
            event: .ledFailed(HALError(.io, operation: "set line 27 of /dev/gpiochip0", errno: 5)), at: 1.05,
            plain: #"1.050 led failed op="set line 27 of /dev/gpiochip0" error="EIO (5): input/output error on the bus or device""#,
            json: #"{"t":1.050,"event":"led_failed","op":"set line 27 of /dev/gpiochip0","error":"EIO (5): input/output error on the bus or device"}"#
        ),
    ]

    @Test("each loop event is one plain line and one JSON object with the same content", arguments: cases)
    func lines(_ logCase: LogCase) throws {
        let record = try #require(logRecord(for: logCase.event, at: at(logCase.at)))
        #expect(LogFormat.plain.line(record, seconds: at(logCase.at) - .origin) == logCase.plain)
        #expect(LogFormat.json.line(record, seconds: at(logCase.at) - .origin) == logCase.json)
    }

    @Test(
        "the send command's output is only counted by default (an SMS API's reply may echo the code); send.logOutput logs the kept bytes and the count dropped"
    )
    func sendOutputOptIn() throws {
        let event = LoopEvent.controller(
            .sendFinished(
                CommandOutcome(
                    sequence: 1, ending: .exited(code: 0), duration: .seconds(1), output: Array("{\"body\":\"Your code is 482913\"}".utf8),
                    droppedOutputBytes: 3),
                at: at(2), superseded: false))
        var lines: [String] = []
        EventLogger(format: .plain) { lines.append($0) }.record(event, at: at(2))
        EventLogger(format: .plain, logSendOutput: true) { lines.append($0) }.record(event, at: at(2))
        #expect(
            lines == [
                "2.000 send finished result=ok exit=0 ms=1000 output_bytes=33",
                #"2.000 send finished result=ok exit=0 ms=1000 output="{\"body\":\"Your code is 482913\"}" dropped_output_bytes=3"#,
            ])
    }

    @Test(
        "raw edges, debounced levels and LED changes are not logged",
        arguments: [
            LoopEvent.edge(ButtonEdge(pressed: true, time: .origin)), .debounced(DebouncedChange(pressed: true, time: .origin)), .led(true),
        ])
    func quiet(event: LoopEvent) {
        #expect(logRecord(for: event, at: .origin) == nil)
    }

    @Test(
        "JSON strings escape quotes, backslashes and control characters, and keep other text",
        arguments: [
            ("plain", #""plain""#), ("", #""""#), (#"say "hi""#, #""say \"hi\"""#), (#"C:\path"#, #""C:\\path""#),
            ("two\nlines", #""two\nlines""#), ("tab\there", #""tab\there""#), ("cr\r", #""cr\r""#), ("\u{08}\u{0C}", #""\b\f""#),
            ("bell\u{07}", #""bell\u0007""#), ("\u{1B}[2J", #""\u001b[2J""#), ("del\u{7F}", #""del\u007f""#), ("Grüße ¥", #""Grüße ¥""#),
        ])
    func jsonEscaping(text: String, expected: String) {
        #expect(jsonString(text) == expected)
    }

    @Test(
        "plain values are bare when they can be, else quoted and escaped: one event is one line",
        arguments: [
            (LogValue.string("GPIO17"), "GPIO17"), (.string("pull-up"), "pull-up"), (.string("a b"), #""a b""#), (.string(""), #""""#),
            (.string("k=v"), #""k=v""#), (.string(#"q"uote"#), #""q\"uote""#), (.string("line\nbreak"), #""line\nbreak""#),
            (.int(-3), "-3"), (.int(60), "60"),
        ])
    func plainValues(value: LogValue, expected: String) {
        let line = LogFormat.plain.line(LogRecord("e", [LogField("k", value)]), seconds: .zero)
        #expect(line == "0.000 e k=" + expected)
        #expect(!line.contains("\n"))
    }

    @Test("a display outage is logged once, however often it is reported, until the display is back")
    func offlineOnce() {
        var lines: [String] = []
        let logger = EventLogger(format: .plain) { lines.append($0) }
        logger.record(.display(.offline(remoteIO)), at: at(1))
        logger.record(.display(.offline(remoteIO)), at: at(2))
        logger.record(.display(.online), at: at(3))
        logger.record(.display(.offline(remoteIO)), at: at(4))
        #expect(lines.map { String($0.prefix(22)) } == ["1.000 display offline ", "3.000 display online", "4.000 display offline "])
    }

    @Test("a state file write failure is logged once while it stays the same, again when it changes")
    func stateWriteFailureOnce() {
        var lines: [String] = []
        let logger = EventLogger(format: .plain) { lines.append($0) }
        let missing = HALError(.notFound, operation: "open /var/lib/resend-button/state.json.tmp", errno: 2)
        let full = HALError(.io, operation: "write /var/lib/resend-button/state.json.tmp", errno: 28)
        for second in 1...3 { logger.record(.state(.writeFailed(missing)), at: at(Double(second))) }
        logger.record(.state(.writeFailed(full)), at: at(4))
        logger.record(.state(.writeFailed(missing)), at: at(5))
        #expect(
            lines.map { String($0.prefix(24)) } == [
                "1.000 state write failed", "4.000 state write failed", "5.000 state write failed",
            ])
        #expect(lines.first?.contains("ENOENT (2): no such file or directory") == true)
    }

    @Test("kernel-dropped edges are logged once per step with the new count")
    func droppedEdges() {
        var lines: [String] = []
        var dropped: UInt64 = 0
        let logger = EventLogger(format: .json, droppedEdgeEvents: { dropped }, output: { lines.append($0) })
        logger.stepFinished(at: at(1))
        dropped = 3
        logger.stepFinished(at: at(2))
        logger.stepFinished(at: at(3))
        dropped = 5
        logger.stepFinished(at: at(4))
        #expect(lines == [#"{"t":2.000,"event":"dropped_edge_events","count":3}"#, #"{"t":4.000,"event":"dropped_edge_events","count":2}"#])
    }

    @Test("the origin is subtracted: the simulator logs seconds since its start")
    func origin() {
        var lines: [String] = []
        let logger = EventLogger(format: .plain, origin: at(100)) { lines.append($0) }
        logger.log(LogRecord("started", [.string("i2c", "/dev/i2c-1")]), at: at(100.25))
        #expect(lines == ["0.250 started i2c=/dev/i2c-1"])
    }

    /// Raw edges and when the loop gets them (`delivered` later than their kernel time models a
    /// loop busy elsewhere, e.g. re-initialising the LCD).
    struct BounceScenario: Sendable, CustomTestStringConvertible {
        var name: String
        var mode: DebounceMode
        var edges: [(delivered: Double, edge: ButtonEdge)]
        var expected: [String]
        var testDescription: String { name }
    }

    /// A bouncy press at `start` (`bounces` bounces 0.5 ms apart, released `hold` after it settled);
    /// with `late`, every edge before `start + late` reaches the loop only then.
    static func burst(at start: Double, bounces: Int, hold: Double = 0.2, deliveredLateBy late: Double = 0) -> [(delivered: Double, edge: ButtonEdge)]
    {
        ButtonScript.bouncyPress(at: at(start), bounces: bounces, spacing: .microseconds(500), holdFor: .milliseconds(Int64(hold * 1000))).map {
            edge in
            let kernelTime = Double(edge.time.nanoseconds) / 1e9
            return (delivered: max(kernelTime, start + late), edge: edge)
        }
    }

    static let bounceScenarios = [
        BounceScenario(
            name: "stable: a glitch and a 4-bounce press", mode: .stable,
            edges: [(0.5, ButtonEdge(pressed: true, time: at(0.5))), (0.505, ButtonEdge(pressed: false, time: at(0.505)))]
                + burst(at: 1, bounces: 4) + burst(at: 5, bounces: 0) + burst(at: 8.5, bounces: 0),
            expected: [
                "1.024 press accepted", "1.024 bounces suppressed count=10", "1.024 countdown started seconds=3",
                "4.024 countdown finished", "5.020 press accepted", "5.020 countdown started seconds=3", "8.020 countdown finished",
                "8.520 press accepted", "8.520 countdown started seconds=3", "11.520 countdown finished", "12.000 stopped",
            ]),
        // The loop was busy for 100 ms: press and release bursts arrive together; the press is
        // settled by the first release edge (inside the debouncer's feed), the release by the advance.
        BounceScenario(
            name: "stable: a short bouncy press handed to a loop 100 ms late; an ignored press's bounces counted at the next accepted one",
            mode: .stable,
            edges: burst(at: 1, bounces: 3, hold: 0.05, deliveredLateBy: 0.1)
                // The release bounces too (released at 1.053, so a 1.0535 press and a 1.054 release).
                + [(1.1, ButtonEdge(pressed: true, time: at(1.0535))), (1.1, ButtonEdge(pressed: false, time: at(1.054)))]
                + burst(at: 2, bounces: 2) + burst(at: 5, bounces: 0) + burst(at: 8.5, bounces: 0),
            expected: [
                "1.100 press accepted", "1.100 bounces suppressed count=6", "1.100 countdown started seconds=3",
                "2.022 press ignored seconds_left=3", "4.023 countdown finished",
                "5.020 press accepted", "5.020 bounces suppressed count=6", "5.020 countdown started seconds=3", "8.020 countdown finished",
                "8.520 press accepted", "8.520 countdown started seconds=3", "11.520 countdown finished", "12.000 stopped",
            ]),
        // The kernel lost the release between two pressed edges: the repeat is a bounce, known
        // only when the debouncer's window ends (inside the loop's advance, not its feed).
        BounceScenario(
            name: "stable: a press whose opposite edge was lost", mode: .stable,
            edges: [
                (1, ButtonEdge(pressed: true, time: at(1))), (1.002, ButtonEdge(pressed: true, time: at(1.002))),
                (1.2, ButtonEdge(pressed: false, time: at(1.2))),
            ] + burst(at: 5, bounces: 0) + burst(at: 8.5, bounces: 0),
            expected: [
                "1.022 press accepted", "1.022 bounces suppressed count=1", "1.022 countdown started seconds=3",
                "4.022 countdown finished", "5.020 press accepted", "5.020 countdown started seconds=3", "8.020 countdown finished",
                "8.520 press accepted", "8.520 countdown started seconds=3", "11.520 countdown finished", "12.000 stopped",
            ]),
        // Prompt mode takes the first edge; the bounces after it are known only later.
        BounceScenario(
            name: "prompt: bounces after the first edge, reported with the next accepted press", mode: .prompt,
            edges: burst(at: 1, bounces: 4) + burst(at: 5, bounces: 1) + burst(at: 8.5, bounces: 0),
            expected: [
                "1.000 press accepted", "1.000 countdown started seconds=3", "4.000 countdown finished",
                "5.000 press accepted", "5.000 bounces suppressed count=8", "5.000 countdown started seconds=3", "8.000 countdown finished",
                "8.500 press accepted", "8.500 bounces suppressed count=2", "8.500 countdown started seconds=3", "11.500 countdown finished",
                "12.000 stopped",
            ]),
    ]

    @Test("bounces suppressed: logged with an accepted press, counted as the loop's own debouncer counts them", arguments: bounceScenarios)
    func bounces(_ scenario: BounceScenario) throws {
        let clock = ManualClock()
        let debouncer = Debouncer(window: .milliseconds(20), mode: scenario.mode)
        var lines: [String] = []
        let logger = EventLogger(format: .plain) { lines.append($0) }
        var inputs = scenario.edges.map { (time: at($0.delivered), input: LoopInput.button($0.edge)) }
        inputs.append((at(12), .stop))
        let environment = LoopEnvironment(
            source: VirtualEventSource(clock: clock, inputs: inputs), display: NullDisplay(), outputs: .none, commands: .none, clock: clock,
            wallClock: NoWallClock(), observer: logger, store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: ControllerConfig(duration: .seconds(3)), button: debouncer, keypad: nil))
        try loop.run()
        #expect(lines == scenario.expected)
        // The last press is clean: every edge the loop's debouncer suppressed was reported, no more, no less.
        let reported = lines.compactMap { $0.split(separator: "count=").dropFirst().first.flatMap { Int($0) } }.reduce(0, +)
        #expect(reported == loop.coordinator.keys.suppressedEdges(of: .button))
    }
}

/// A display that shows nothing and never fails.
struct NullDisplay: FrameDisplay {
    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] { [] }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [DisplayEvent] { [] }
}

struct StartedLineTests {
    @Test("the started line carries the configuration in force")
    func startedLine() throws {
        var options = try RunOptions.parse(
            ["--led", "gpiochip0:27", "--led-active-low", "--refresh", "600", "--duration", "90"], readConfig: { _ in .missing })
        options.config.log.format = .json
        let record = startedRecord(
            options, button: GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 17, name: "GPIO17"),
            led: GPIOLineLocation(chipPath: "/dev/gpiochip0", offset: 27), busPath: "/dev/i2c-1", writes: false, address: I2CAddress(0x3F)!)
        #expect(
            LogFormat.plain.line(record, seconds: .seconds(5))
                == "5.000 started version=\(programVersion) libgpiod=\(LibGPIOD.version) button=\"GPIO17 (line 17 of /dev/gpiochip0)\" bias=pull-up active=low"
                + " kernel_debounce_ms=off led=\"line 27 of /dev/gpiochip0 active-low\" i2c=/dev/i2c-1 i2c_writes=smbus-byte address=0x3f geometry=16x2"
                + " duration=90 debounce_ms=20 debounce_mode=stable refresh=600s log_format=json"
                + " config=/etc/resend-button/config.json5 state_file=/var/lib/resend-button/state.json send=none rom=A00")
    }
}

struct HeadlessEventsTests {
    @Test("simulate --headless --events prints the loop's events in the words run logs them")
    func headlessEvents() throws {
        var lines: [String] = []
        try runHeadless(settings: BehaviourSettings(), script: try parseScript("bounce@1 press@2 end@3", command: "simulate"), events: true) {
            lines.append($0)
        }
        let events = lines.filter { !$0.contains(" screen |") && !$0.contains(" led ") }
        #expect(
            events == [
                "1.024 press accepted", "1.024 bounces suppressed count=8", "1.024 countdown started seconds=60",
                "2.020 press ignored seconds_left=60", "3.000 stopped",
            ])
    }
}
