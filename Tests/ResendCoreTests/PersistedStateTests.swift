import HAL
import ResendCore
import Testing

private let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
private let mono0 = Instant(nanoseconds: 5_000_000_000)

private func text(_ state: PersistedState) -> String { String(decoding: state.encoded(), as: UTF8.self) }

@Suite("Persisted state")
struct PersistedStateTests {
    @Test("the state file is the documented JSON, and reads back to the same state")
    func roundTrip() throws {
        let state = PersistedState(
            ControllerRecord(
                status: .sent, used: true, countdownEnd: WallTime(millisecondsSinceEpoch: 1_718_000_060_000), countdownSeconds: 60,
                run: 2, runEnds: WallTime(millisecondsSinceEpoch: 1_718_000_660_000),
                sends: [WallTime(millisecondsSinceEpoch: 1_717_999_000_000), WallTime(millisecondsSinceEpoch: 1_718_000_000_000)]))
        #expect(
            text(state) == """
                {
                  "version": 1,
                  "format": 2,
                  "status": "sent",
                  "used": true,
                  "countdownEndsUnixMs": 1718000060000,
                  "countdownSeconds": 60,
                  "run": 2,
                  "runEndsUnixMs": 1718000660000,
                  "sendsUnixMs": [1717999000000, 1718000000000]
                }

                """)
        #expect(try PersistedState(decoding: state.encoded()) == state)
        let idle = PersistedState()
        #expect(try PersistedState(decoding: idle.encoded()) == idle)
        #expect(text(idle).contains("\"countdownEndsUnixMs\": null,"))
    }

    @Test("unknown keys are ignored, whitespace is free")
    func unknownKeys() throws {
        let json =
            #"{"future": {"a": [1, "x\n", null, false]}, "version":1,"status":"failed","used":false,"countdownEndsUnixMs":null,"countdownSeconds":0,"run":0,"runEndsUnixMs":null,"sendsUnixMs":[]}"#
        let state = try PersistedState(decoding: Array(json.utf8))
        #expect(state == PersistedState(ControllerRecord(status: .failed)))
    }

    @Test(
        "a broken state says what is wrong",
        arguments: [
            ("", "not valid JSON at byte 0: unexpected end of the text"),
            ("{\"version\": 1", "not valid JSON at byte 13: unterminated object"),
            ("[1, 2]", "the state is not a JSON object"),
            ("{\"version\": 0}", "\"version\" must be an integer of at least 1"),
            ("{\"version\": 2, \"format\": 1}", "\"format\" must be an integer of at least 2"),
            ("{\"version\": 1, \"format\": \"2\"}", "\"format\" must be an integer of at least 1"),
            ("{\"version\": 1}", "missing key \"status\""),
            ("{\"version\": 1, \"status\": \"busy\"}", "\"status\" must be \"title\", \"sending\", \"sent\", \"failed\" or \"tryLater\""),
            ("{\"version\": 1.5}", "not valid JSON at byte 13: only whole numbers are allowed"),
            ("{\"version\": 99999999999999999999}", "not valid JSON at byte 30: number too large"),
            ("{\"version\": 1} x", "not valid JSON at byte 15: unexpected text after the JSON value"),
            ("\u{0}\u{0}\u{0}", "not valid JSON at byte 0: unexpected character"),
        ])
    func broken(json: String, message: String) {
        #expect(throws: StateFormatError(message)) { try PersistedState(decoding: Array(json.utf8)) }
    }

    @Test("a wrong type names the key")
    func wrongType() {
        var state = text(PersistedState(ControllerRecord(countdownEnd: wall0, countdownSeconds: 60)))
        state = state.replacing("\"used\": false", with: "\"used\": 0")
        #expect(throws: StateFormatError("\"used\" must be true or false")) { try PersistedState(decoding: Array(state.utf8)) }
        let negative = text(PersistedState()).replacing("\"run\": 0", with: "\"run\": -1")
        #expect(throws: StateFormatError("\"run\" must be an integer of at least 0")) { try PersistedState(decoding: Array(negative.utf8)) }
    }

    @Test(
        "a time outside 1970-2200 is refused (the file is unreadable), not wrapped or trapped on",
        arguments: [
            ("countdownEndsUnixMs", "null", "\"countdownEndsUnixMs\" must be Unix milliseconds from 0 to 7258118400000 (1970 to 2200) or null"),
            ("runEndsUnixMs", "null", "\"runEndsUnixMs\" must be Unix milliseconds from 0 to 7258118400000 (1970 to 2200) or null"),
            ("sendsUnixMs", "[]", "\"sendsUnixMs\" must hold Unix milliseconds from 0 to 7258118400000 (1970 to 2200)"),
        ])
    func timeOutOfRange(key: String, empty: String, message: String) {
        func state(_ value: String) -> [UInt8] {
            let json = text(PersistedState(ControllerRecord(run: 1))).replacing(
                "\"\(key)\": \(empty)", with: "\"\(key)\": " + (empty == "[]" ? "[\(value)]" : value))
            return Array(json.utf8)
        }
        // -8000000000000 once crashed every start (wallNow - time overflowed); 9300000000000 does
        // not fit nanoseconds since 1970 at all.
        for value in ["-8000000000000", "-1", "7258118400001", "9300000000000", "-9223372036854775807"] {
            #expect(throws: StateFormatError(message)) { try PersistedState(decoding: state(value)) }
        }
        for value in ["0", "1718000000000", "7258118400000"] {
            #expect(throws: Never.self) { try PersistedState(decoding: state(value)) }
        }
    }

    @Test("a state resumed at any wall time, however far off, gives a countdown no longer than its length")
    func resumeAtExtremeWallTimes() throws {
        let policy = ResendPolicy(cooldowns: [.seconds(60)], cap: .init(maxSends: 2, window: .seconds(600)))
        let config = ControllerConfig(duration: .seconds(60), policy: policy)
        let state = PersistedState(
            ControllerRecord(
                countdownEnd: WallTime(millisecondsSinceEpoch: 7_258_118_400_000), countdownSeconds: 60, run: 1,
                runEnds: WallTime(millisecondsSinceEpoch: 0),
                sends: [WallTime(millisecondsSinceEpoch: 0), WallTime(millisecondsSinceEpoch: 7_258_118_400_000)]))
        for wall in [Int64.min, -1, 0, Int64.max] {
            for now in [Instant.origin, Instant(nanoseconds: Int64.max)] {
                let snapshot = state.resumed(monotonicNow: now, wallNow: WallTime(nanosecondsSinceEpoch: wall), config: config)
                #expect(snapshot.countdownSeconds <= 60)
                if let end = snapshot.countdownEnd { #expect(end - now <= .seconds(60)) }
            }
        }
    }

    @Test("a snapshot goes to wall time and back through a restart without losing time")
    func wallConversion() {
        let snapshot = ControllerSnapshot(
            status: .sent, used: true, countdownEnd: mono0 + .seconds(40), countdownSeconds: 60, run: 1,
            runEnds: mono0 + .seconds(640))
        let state = PersistedState(snapshot, monotonicNow: mono0, wallNow: wall0)
        #expect(state.controller.countdownEnd == wall0 + .seconds(40))
        // The next process: its monotonic clock starts elsewhere; 10 s of wall time passed.
        let later = Instant(nanoseconds: 1_000)
        let resumed = state.resumed(monotonicNow: later, wallNow: wall0 + .seconds(10), config: ControllerConfig())
        #expect(resumed.countdownEnd == later + .seconds(30))
        #expect(resumed.countdownSeconds == 60)
        #expect(resumed.status == .sent)
        #expect(resumed.runEnds == later + .seconds(630))
        #expect(resumed.run == 1)
    }

    @Test(
        "across a restart the remaining time is clamped to [0, duration] whatever the wall clock did",
        arguments: [
            // (wall-clock change between the two processes, seconds left expected)
            (Int64(0), Int64(40)),  // a quick restart: 40 s left
            (Int64(25), Int64(15)),  // 25 s later: 15 s left
            (Int64(-30), Int64(60)),  // set back 30 s: would be 70 s, clamped to the 60 s duration
            (Int64(-86_400), Int64(60)),  // set back a day: still 60 s at most
            (Int64(40), Int64(0)),  // exactly at the end: over
            (Int64(3_600), Int64(0)),  // set forward an hour: over
        ])
    func clamp(wallChange: Int64, secondsLeft: Int64) {
        let state = PersistedState(ControllerRecord(status: .title, used: true, countdownEnd: wall0 + .seconds(40), countdownSeconds: 60, run: 1))
        let resumed = state.resumed(monotonicNow: mono0, wallNow: wall0 + .seconds(wallChange), config: ControllerConfig())
        if secondsLeft == 0 {
            #expect(resumed.countdownEnd == nil)
            #expect(resumed.countdownSeconds == 0)
        } else {
            #expect(resumed.countdownEnd == mono0 + .seconds(secondsLeft))
            #expect(resumed.countdownSeconds == 60)
        }
    }

    @Test("a countdown longer than the configuration now allows is cut to the longest cooldown")
    func clampToConfig() {
        let state = PersistedState(ControllerRecord(status: .title, used: true, countdownEnd: wall0 + .seconds(250), countdownSeconds: 300))
        let resumed = state.resumed(monotonicNow: mono0, wallNow: wall0, config: ControllerConfig(duration: .seconds(60)))
        #expect(resumed.countdownEnd == mono0 + .seconds(60))
        #expect(resumed.countdownSeconds == 60)
    }

    @Test("a send still running when the old process died resumes with the plain title", arguments: [true, false])
    func sendingResumesPlain(countdownLeft: Bool) {
        let end = countdownLeft ? wall0 + .seconds(10) : wall0 - .seconds(1)
        let state = PersistedState(ControllerRecord(status: .sending, used: true, countdownEnd: end, countdownSeconds: 60))
        #expect(state.resumed(monotonicNow: mono0, wallNow: wall0, config: ControllerConfig()).status == .title)
    }

    @Test("sends count against the cap for at most its window; a send time in the future counts as now")
    func sendsClamped() {
        var config = ControllerConfig()
        config.policy.cap = ResendPolicy.Cap(maxSends: 3, window: .seconds(600))
        let state = PersistedState(
            ControllerRecord(
                used: true,
                sends: [
                    wall0 - .seconds(700), wall0 - .seconds(600), wall0 - .seconds(599), wall0 - .seconds(10), wall0 + .seconds(3_600),
                ]))
        let resumed = state.resumed(monotonicNow: mono0, wallNow: wall0, config: config)
        #expect(resumed.sends == [mono0 - .seconds(599), mono0 - .seconds(10), mono0])
        #expect(state.resumed(monotonicNow: mono0, wallNow: wall0, config: ControllerConfig()).sends == [])
    }

    @Test(
        "a run of sends that ended while the program was down starts over",
        arguments: [
            (Int64(100), 2), (Int64(-1), 0),
        ])
    func runExpiry(runEndsIn: Int64, run: Int) {
        let state = PersistedState(ControllerRecord(used: true, run: 2, runEnds: wall0 + .seconds(runEndsIn)))
        #expect(state.resumed(monotonicNow: mono0, wallNow: wall0, config: ControllerConfig()).run == run)
    }
}
