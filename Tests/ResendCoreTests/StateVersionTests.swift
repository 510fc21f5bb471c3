import HAL
import HALMock
import ResendCore
import Testing

private let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)

/// A state file with `head` first (the version keys), a 30 s lockout of round 1 ending 20 s after
/// `wall0` with 3 wrong codes, and `extra` keys after the entry's.
private func stateFile(head: String, extra: String = "") -> [UInt8] {
    Array(
        (#"{"# + head
            + #","status":"title","used":true,"countdownEndsUnixMs":null,"countdownSeconds":0,"run":0,"runEndsUnixMs":null,"sendsUnixMs":[],"#
            + #""entry":{"failures":3,"rounds":1,"lockoutEndsUnixMs":1718000020000,"lockoutSeconds":30,"open":true,"validUntilUnixMs":null"#
            + extra + "}}\n").utf8)
}

@Suite("State file versions")
struct StateVersionTests {
    @Test("a file written now is format 2 and keeps version 1, the only version programs of format 1 read")
    func writtenForOlderPrograms() {
        let text = String(decoding: PersistedState().encoded(), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"version\": 1,\n  \"format\": 2,\n  \"status\": \"title\",\n"))
        #expect(PersistedState.formatVersion == 2)
        #expect(PersistedState.oldestReadingFormat == 1)
    }

    @Test("a newer format that only adds keys (version 1) is read: its keys of format 1 count, the new ones are ignored")
    func newerButCompatible() throws {
        let state = try PersistedState(
            decoding: stateFile(head: #""version":1,"format":7,"newTop":{"x":[1]}"#, extra: #","newInEntry":"y""#))
        #expect(state.controller.used)
        #expect(state.entry == PersistedEntryState(failures: 3, rounds: 1, lockoutEnd: wall0 + .seconds(20), lockoutSeconds: 30, open: true))
    }

    @Test(
        "a file that needs a newer program is refused as such, naming its format, the oldest that reads it, and this program's",
        arguments: [
            (#""version":3"#, Int64(3), Int64(3), "format 3, readable from format 3 on; this program reads up to format 2"),
            (#""version":3,"format":4"#, Int64(4), Int64(3), "format 4, readable from format 3 on; this program reads up to format 2"),
        ])
    func needsANewerProgram(head: String, format: Int64, readableFrom: Int64, message: String) {
        let versions = StateFormatVersions(format: format, readableFrom: readableFrom)
        #expect(throws: StateFormatError(newer: versions)) { try PersistedState(decoding: stateFile(head: head)) }
        #expect(StateFormatError(newer: versions).message == message)
        // Only the head is read: a newer format may have dropped every other key.
        #expect(throws: StateFormatError(newer: versions)) { try PersistedState(decoding: Array(("{" + head + "}").utf8)) }
    }

    @Test("a damaged file is not taken for a newer one")
    func damagedIsNotNewer() {
        #expect(throws: StateFormatError("missing key \"status\"")) { try PersistedState(decoding: Array(#"{"version":2}"#.utf8)) }
        #expect(MemoryStateStorage(Array("not json".utf8)).storedNewerFormat() == nil)
        #expect(MemoryStateStorage().storedNewerFormat() == nil)
        #expect(
            MemoryStateStorage(stateFile(head: #""version":5"#)).storedNewerFormat() == StateFormatVersions(format: 5, readableFrom: 5))
    }

    @Test("with a keypad, a newer but readable file resumes the lockout and the wrong codes after a downgrade")
    func keypadResumesFromACompatibleNewerFile() throws {
        var device = KeypadDevice(storage: MemoryStateStorage(stateFile(head: #""version":1,"format":3"#, extra: #","newInEntry":1"#)))
        device.type("1234#", at: kt(3))
        device.stop(at: kt(25))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(0)) == ["Try again (20)", "Resend"])
        #expect(loop.display.screen(at: kt(4)) == ["Try again (16)", "Resend"])
        #expect(loop.verifier.codes.isEmpty, "keys during the lockout check nothing")
        let events = loop.observer.events.map(\.event)
        #expect(events.contains(.entry(.lockoutResumed(until: kt(20), secondsLeft: 20))))
        // The lockout ends on time (the code sent before it is past the default validity).
        #expect(loop.display.screen(at: kt(21)) == ["Verification", "Resend"])
        #expect(events.contains(.entry(.lockoutFinished(at: kt(20)))))
    }

    @Test(
        "with a keypad, a file that needs a newer program is kept byte for byte and never written; code entry is closed from the first frame, no code is checked, the countdown works"
    )
    func keypadKeepsAnIncompatibleFileAndStaysClosed() throws {
        let newer = stateFile(head: #""version":3,"format":3"#)
        var device = KeypadDevice(storage: MemoryStateStorage(newer))
        device.tap(.button, at: kt(1))
        device.type("1234#", at: kt(3))
        device.stop(at: kt(70))
        var loop = device.loop(verifier: ScriptedVerifier([.exited(code: 0)]))
        try loop.run()
        #expect(loop.display.screen(at: kt(0)) == ["Entry closed", "Send code"])
        #expect(loop.display.screen(at: kt(5)) == ["Entry closed", "Resend (57)"])
        #expect(loop.display.screen(at: kt(62)) == ["Entry closed", "Resend"])
        #expect(loop.verifier.codes.isEmpty)
        #expect(device.output.levels.allSatisfy { !$0 }, "the door never opened")
        #expect(device.storage.bytes == newer)
        #expect(device.storage.writes.isEmpty && device.storage.movedAside.isEmpty)
        let events = loop.observer.events.map(\.event)
        #expect(events.first == .state(.newerFormat(StateFormatVersions(format: 3, readableFrom: 3), movedTo: nil)))
        #expect(!events.contains { if case .state(.writeFailed) = $0 { true } else { false } }, "said once, at start")
    }

    @Test("without a keypad, a file that needs a newer program is moved aside whole and the countdown starts fresh and is persisted")
    func countdownMovesAnIncompatibleFileAside() throws {
        let newer = stateFile(head: #""version":3"#)
        let storage = MemoryStateStorage(newer)
        var loop = buttonLoop(storage: storage)
        try loop.run()
        let events = loop.observer.events.map(\.event)
        #expect(events.first == .state(.newerFormat(StateFormatVersions(format: 3, readableFrom: 3), movedTo: "memory.corrupt-1")))
        #expect(storage.movedAside == [newer])
        #expect(loop.display.screen(at: kt(0)) == ["Verification", "Send code"])
        #expect(try PersistedState(decoding: try #require(storage.bytes)).controller.used, "the press was written")
    }

    @Test("a file that needs a newer program and cannot be moved aside is never written over, keypad or not")
    func anIncompatibleFileThatCannotMoveIsKept() throws {
        let newer = stateFile(head: #""version":3"#)
        let storage = StuckStorage(bytes: newer)
        var loop = buttonLoop(storage: storage)
        try loop.run()
        let events = loop.observer.events.map(\.event)
        #expect(events.first == .state(.moveAsideFailed(StuckStorage.failure)))
        #expect(events.dropFirst().first == .state(.newerFormat(StateFormatVersions(format: 3, readableFrom: 3), movedTo: nil)))
        #expect(storage.bytes == newer && storage.writes == 0)
        #expect(loop.display.screen(at: kt(2.5)) == ["Code sent", "Resend (59)"], "the countdown works unpersisted")
    }
}

/// Storage whose file cannot be moved aside (1000 copies there already, say); it counts writes.
private final class StuckStorage: StateStorage {
    static let failure = HALError(.io, operation: "move state.json aside", errno: 17)
    var bytes: [UInt8]?
    var writes = 0
    init(bytes: [UInt8]?) { self.bytes = bytes }
    func read() throws(HALError) -> [UInt8]? { bytes }
    func write(_ bytes: [UInt8]) throws(HALError) {
        self.bytes = bytes
        writes += 1
    }
    func moveAside() throws(HALError) -> String { throw StuckStorage.failure }
}

private typealias ButtonEnvironment<Store: StateStorage> = LoopEnvironment<
    VirtualEventSource, FrameLog, NoLine, ScriptedCommandRunner, NoCodeVerifier, ManualClock, ManualWallClock, EventRecorder, Store, NoRandomSource
>

/// The single button (no keypad), pressed at 1 s, a 60 s countdown, stopped at 3 s.
private func buttonLoop<Store: StateStorage>(storage: Store) -> EventLoop<ButtonEnvironment<Store>> {
    let clock = ManualClock(kt(0))
    var source = VirtualEventSource(clock: clock)
    source.schedule(.key(KeyEvent(.button, .pressed, at: kt(1))), at: kt(1))
    source.schedule(.key(KeyEvent(.button, .released, at: kt(1.1))), at: kt(1.1))
    source.schedule(.stop, at: kt(3))
    let environment = ButtonEnvironment(
        source: source, display: FrameLog(), outputs: .none, commands: .send(ScriptedCommandRunner([.succeeds(after: .milliseconds(500))])),
        clock: clock, wallClock: ManualWallClock(wall0, following: clock), observer: EventRecorder(), store: storage)
    return EventLoop(
        environment: environment,
        coordinator: buttonCoordinator(
            ControllerConfig(duration: .seconds(60), hasSendCommand: true), button: Debouncer(window: .milliseconds(20))))
}
