import HAL
import HALMock
import ResendCore
import Testing

/// The verify command's exit statuses as the code-entry flow answers them (the contract of
/// docs/exit-codes.md), on virtual time on a 16x2 display.
@Suite("Keypad: the verify command's exit-code contract")
struct EntryContractTests {
    @Test func theExitStatusesMapToTheirTypedResults() {
        #expect(VerifyResult(.exited(code: 0)) == .accepted)
        #expect(VerifyResult(.exited(code: 1)) == .rejected)
        #expect(VerifyResult(.exited(code: 3)) == .expired)
        #expect(VerifyResult(.exited(code: 75)) == .temporaryFailure)
        #expect(VerifyResult(.exited(code: 2)) == .failed)
        #expect(VerifyResult(.signalled(signal: 9)) == .failed)
        #expect(VerifyResult(.timedOut(after: .seconds(10), killed: false)) == .timedOut)
        #expect(SendResult(.exited(code: 0)) == .sent)
        #expect(SendResult(.exited(code: 75)) == .temporaryFailure)
        #expect(SendResult(.exited(code: 3)) == .failed)
        #expect(SendResult(.timedOut(after: .seconds(10), killed: true)) == .failed)
    }

    @Test func aTemporaryFailureGivesTheTryBackByWritingTheStateAgain() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        #expect(rig.entryPersisted.last?.failures == 1, "the try is on disk during the check (a power cut keeps it)")
        rig.answer(.temporaryFailure, at: kt(4))
        #expect(rig.entryPersisted.last?.failures == 0, "the try is given back, on disk")
        #expect(rig.line1 == "Try again later")
        rig.type("1234#", at: kt(5))
        #expect(rig.verifies.count == 2, "the field takes a code again")
    }

    @Test func whenGivingTheTryBackCannotBeWrittenEntryCloses() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.stateWritable = false
        rig.answer(.temporaryFailure, at: kt(4))
        #expect(rig.line1 == "Entry closed")
        #expect(rig.entryLog.contains(.closed(at: kt(4), droppedCheck: nil)))
    }

    @Test func aPowerCutDuringTheCheckKeepsTheTry() {
        // The file as the check started: the try counted. A restart resumes from it.
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        let onDisk = rig.entryPersisted.last
        #expect(onDisk?.failures == 1)
        var restarted = KeypadRig()
        restarted.start(entry: onDisk)
        #expect(restarted.pad.entry?.snapshot.failures == 1)
    }

    @Test func theServiceSayingExpiredClosesEntryUntilTheNextSend() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.answer(.expired, at: kt(4))
        #expect(rig.line1 == "Code expired")
        #expect(rig.entryPersisted.last == EntrySnapshot(failures: 0, open: false))
        rig.type("1234#", at: kt(5))
        #expect(rig.verifies.count == 1, "keys are ignored until the next send")
        rig.sendCode(at: kt(61))
        #expect(rig.line1 == "Code: ________")
    }
}
