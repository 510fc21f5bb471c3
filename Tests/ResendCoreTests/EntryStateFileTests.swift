import HAL
import ResendCore
import Testing

private let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)

private func base(_ entry: String) -> [UInt8] {
    Array(
        (#"{"version":1,"status":"sent","used":true,"countdownEndsUnixMs":null,"countdownSeconds":0,"run":0,"runEndsUnixMs":null,"sendsUnixMs":[]"#
            + entry + "}").utf8)
}

@Suite("State file: the entry object")
struct EntryStateFileTests {
    @Test("the entry object is written after the controller's keys and reads back to the same state; never the code")
    func roundTrip() throws {
        let entry = PersistedEntryState(
            failures: 1, rounds: 2, lockoutEnd: WallTime(millisecondsSinceEpoch: 1_718_000_090_000), lockoutSeconds: 120, open: true,
            validUntil: WallTime(millisecondsSinceEpoch: 1_718_000_600_000))
        let state = PersistedState(ControllerRecord(status: .sent, used: true), entry: entry)
        let text = String(decoding: state.encoded(), as: UTF8.self)
        #expect(
            text.hasSuffix(
                """
                  "sendsUnixMs": [],
                  "entry": {"failures": 1, "rounds": 2, "lockoutEndsUnixMs": 1718000090000, "lockoutSeconds": 120, "open": true, "validUntilUnixMs": 1718000600000}
                }

                """))
        #expect(try PersistedState(decoding: state.encoded()) == state)
        let idle = PersistedState(entry: PersistedEntryState())
        #expect(try PersistedState(decoding: idle.encoded()) == idle)
    }

    @Test("a state file without the entry object (written before the keypad, or without one) reads as no entry state")
    func absent() throws {
        #expect(try PersistedState(decoding: base("")).entry == nil)
        #expect(!String(decoding: PersistedState().encoded(), as: UTF8.self).contains("entry"))
    }

    @Test(
        "a broken entry object names the key",
        arguments: [
            (#","entry":[]"#, #""entry" must be an object"#),
            (#","entry":{}"#, #"missing key "entry.failures""#),
            (#","entry":{"failures":-1}"#, #""entry.failures" must be an integer of at least 0"#),
            (
                #","entry":{"failures":0,"rounds":0,"lockoutEndsUnixMs":"soon"}"#,
                #""entry.lockoutEndsUnixMs" must be Unix milliseconds from 0 to 7258118400000 (1970 to 2200) or null"#
            ),
            (#","entry":{"failures":0,"rounds":0,"lockoutEndsUnixMs":null,"lockoutSeconds":0,"open":1}"#, #""entry.open" must be true or false"#),
            (
                #","entry":{"failures":0,"rounds":0,"lockoutEndsUnixMs":99999999999999999,"lockoutSeconds":0,"open":true,"validUntilUnixMs":null}"#,
                #""entry.lockoutEndsUnixMs" must be Unix milliseconds from 0 to 7258118400000 (1970 to 2200) or null"#
            ),
        ])
    func broken(entry: String, message: String) {
        #expect(throws: StateFormatError(message)) { try PersistedState(decoding: base(entry)) }
    }

    @Test("huge counts are capped when read, then clamped to the configuration: no trap, no endless lockout")
    func hugeCounts() throws {
        let state = try PersistedState(
            decoding: base(
                #","entry":{"failures":9223372036854775807,"rounds":9223372036854775807,"lockoutEndsUnixMs":1718999999000,"lockoutSeconds":9223372036854775807,"open":false,"validUntilUnixMs":null}"#
            ))
        let entry = try #require(state.entry)
        #expect(entry.lockoutSeconds == EntryConfig.maximumSeconds)
        let resumed = entry.resumed(monotonicNow: Instant(nanoseconds: 1_000), wallNow: wall0, config: EntryConfig())
        #expect(resumed.failures == 3)  // maxAttempts: a last try recorded before its check (CodeEntry locks at start)
        #expect(resumed.rounds == 3)  // three lockouts configured
        #expect(resumed.lockoutSeconds == 600)
        #expect(resumed.lockoutEnd == Instant(nanoseconds: 1_000) + .seconds(600))
    }
}
