import HAL
import HALMock
import ResendCore
import Testing

/// A code made on the device: the digits are exactly uniform, a resend never repeats the code and
/// the old one stops working, typed codes are compared in constant time, and a restart forgets it.
@Suite("Keypad: a code made on the device")
struct DeviceCodeTests {
    private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func everyDigitComesFromExactly25Of256BytesAndTheOther6AreDropped() {
        var counts = [Int](repeating: 0, count: 10)
        var dropped = 0
        for byte in UInt8.min...UInt8.max {
            if let digit = DeviceCode.digit(forByte: byte) { counts[Int(digit)] += 1 } else { dropped += 1 }
        }
        #expect(counts == [Int](repeating: 25, count: 10))
        #expect(dropped == 6)
    }

    @Test func bytesFrom250UpAreDroppedAndDrawnAgain() throws {
        var random = SequenceRandom(bytes: [250, 255, 13, 251, 249, 7, 42, 0, 199, 100, 252, 253])
        var code = DeviceCode(capacity: 8)
        let drawn = try code.draw(length: 6, from: &random)
        #expect(drawn.digits == ascii("397209"))
        #expect(code.matches(ascii("397209"), length: 6))
    }

    @Test func wipingTheSentCopyLeavesTheHeldCodeEvenWhenItFillsTheBuffer() throws {
        for capacity in [6, 8] {
            var random = SequenceRandom(bytes: [4, 7, 1, 1, 0, 8])
            var code = DeviceCode(capacity: capacity)
            var sent = try code.draw(length: 6, from: &random)
            sent.wipe()  // as the send command's runner does once the code is written
            #expect(code.matches(ascii("471108"), length: 6), "capacity \(capacity)")
        }
    }

    @Test func aNewCodeIsNeverTheOneItReplaces() throws {
        // The second draw yields 1234 again and is drawn once more.
        var random = SequenceRandom(bytes: [1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 9, 9, 9, 9, 0, 0, 0, 0])
        var code = DeviceCode(capacity: 4)
        #expect(try code.draw(length: 4, from: &random).digits == ascii("1234"))
        #expect(try code.draw(length: 4, from: &random).digits == ascii("9999"))
        #expect(!code.matches(ascii("1234"), length: 4), "the old code stops working")
        // Over many resends from a seeded source, no code equals the one before it.
        var seeded = SequenceRandom(seed: 7)
        var short = DeviceCode(capacity: 1)
        var previous: [UInt8] = []
        for _ in 0..<2_000 {
            let next = try short.draw(length: 1, from: &seeded).digits
            #expect(next != previous)
            previous = next
        }
    }

    @Test func theComparisonExaminesEveryPositionWhereverTheCodesDiffer() {
        let expected = ascii("48213576") + [UInt8](repeating: 0, count: 24)
        var counts: Set<Int> = []
        var results: [Bool] = []
        for position in -1..<8 {
            var typed = expected
            if position >= 0 { typed[position] = typed[position] == UInt8(ascii: "9") ? UInt8(ascii: "0") : UInt8(ascii: "9") }
            var examined = 0
            results.append(DeviceCode.equal(typed, length: 8, expected, length: 8, examined: &examined))
            counts.insert(examined)
        }
        for length in [0, 1, 7, 32] {
            var examined = 0
            results.append(DeviceCode.equal(expected, length: length, expected, length: 8, examined: &examined))
            counts.insert(examined)
        }
        #expect(counts == [32], "32 positions read for every input: no early exit")
        #expect(results == [true] + [Bool](repeating: false, count: 8) + [false, false, false, false])
        // Bytes beyond the length do not count (the field's buffer is zero there, the code's too).
        #expect(DeviceCode.equal(ascii("12349"), length: 4, ascii("1234"), length: 4))
    }

    private func deviceEntry() -> CodeEntry {
        var config = EntryConfig()
        config.codeMadeOnDevice = true
        config.codeLength = 6
        return CodeEntry(config: config)
    }

    private func type(_ digits: String, into entry: inout CodeEntry, at seconds: Double) -> [EntryAction] {
        var actions: [EntryAction] = []
        for (index, byte) in (digits + "#").utf8.enumerated() {
            let at = kt(seconds + Double(index) * 0.1)
            actions += entry.key(KeyEvent(Key(symbol: byte)!, .pressed, at: at), now: at)
            actions += entry.key(KeyEvent(Key(symbol: byte)!, .released, at: at + .milliseconds(50)), now: at + .milliseconds(50))
        }
        if actions.contains(where: { if case .persist = $0 { true } else { false } }) {
            actions += entry.stateWritten(true, now: kt(seconds + 1))
        }
        return actions
    }

    @Test func theRightCodeIsAcceptedWithoutAVerifyCommandAndOnlyOnce() throws {
        var entry = deviceEntry()
        _ = entry.start(now: kt(0))
        var random = SequenceRandom(bytes: [4, 7, 1, 1, 0, 8])
        var sent = try entry.issueCode(from: &random)
        #expect(String(decoding: sent.digits, as: UTF8.self) == "471108")
        sent.wipe()
        _ = entry.codeSent(now: kt(1))
        let actions = type("471108", into: &entry, at: 2)
        #expect(!actions.contains { if case .runVerify = $0 { true } else { false } })
        #expect(actions.contains(.log(.verified(.accepted, sequence: 1))))
        #expect(entry.view?.status == "Code accepted")
        #expect(!entry.holdsDeviceCode, "used once")
    }

    @Test func aResendMakesTheOldCodeAWrongOne() throws {
        var entry = deviceEntry()
        _ = entry.start(now: kt(0))
        var random = SequenceRandom(bytes: [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0])
        _ = try entry.issueCode(from: &random)
        _ = entry.codeSent(now: kt(1))
        _ = try entry.issueCode(from: &random)
        _ = entry.codeSent(now: kt(2))
        let old = type("123456", into: &entry, at: 3)
        #expect(old.contains(.log(.verified(.rejected, sequence: 1))))
        #expect(entry.view?.status == "Wrong, 2 left")
        let new = type("654321", into: &entry, at: 6)
        #expect(new.contains(.log(.verified(.accepted, sequence: 2))))
    }

    @Test func aRestartForgetsTheCodeAndSaysItExpired() throws {
        var entry = deviceEntry()
        _ = entry.start(now: kt(0))
        var random = SequenceRandom(bytes: [9, 8, 7, 6, 5, 4])
        _ = try entry.issueCode(from: &random)
        _ = entry.codeSent(now: kt(1))
        let snapshot = entry.snapshot
        #expect(snapshot.open)
        var restarted = deviceEntry()
        _ = restarted.start(now: kt(5), restoring: snapshot)
        #expect(restarted.view?.status == "Code expired")
        #expect(restarted.view?.field == "press Resend")
        #expect(!restarted.holdsDeviceCode)
        #expect(!restarted.snapshot.open)
    }

    @Test func aRandomSourceThatFailsLeavesNoCode() {
        var entry = deviceEntry()
        _ = entry.start(now: kt(0))
        var random = SequenceRandom(bytes: [1])
        random.failing = true
        #expect(throws: HALError.self) { _ = try entry.issueCode(from: &random) }
        #expect(!entry.holdsDeviceCode)
    }

    @Test func aDeviceCodeCannotGoWithOpeningWithoutASend() {
        var config = EntryConfig()
        config.codeMadeOnDevice = true
        config.opensWithoutSend = true
        config.codeLength = 9
        #expect(
            config.problems(columns: 40) == [
                "codeLength must be from minLength to maxLength",
                "opensWithoutSend cannot go with a code made on the device (it must be sent to be typed)",
            ])
    }
}
