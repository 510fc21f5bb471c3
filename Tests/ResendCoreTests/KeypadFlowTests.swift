import HAL
import ResendCore
import Testing

/// The whole keypad flow on virtual time, as a user sees it on a 16x2 display (and a 20x4 one):
/// send, type, delete, submit, the verify outcome, attempts, lockout, expiry, time-outs.
/// Keys are pressed at the times given and count 20 ms later (the debounce window).
@Suite("Keypad flow")
struct KeypadFlowTests {
    @Test func beforeAnySendTheScreenIsTheResendButtonsAndDigitsAreIgnored() {
        var rig = KeypadRig()
        rig.start()
        #expect(rig.lines == ["Verification", "Send code"])
        rig.type("12", at: kt(1))
        #expect(rig.lines == ["Verification", "Send code"])
        #expect(rig.entryLog.filter { if case .keyIgnored = $0 { true } else { false } }.count == 2)
        #expect(rig.verifies.isEmpty)
    }

    @Test func aSuccessfulSendOpensAMaskedFieldBesideTheCountdown() {
        var rig = KeypadRig()
        rig.start()
        rig.tap(.button, at: kt(0))
        #expect(rig.lines == ["Sending...", "Resend (60)"])
        rig.finishSend(.exited(code: 0), at: kt(1))
        #expect(rig.lines == ["Code: ________", "Resend (60)"])
        rig.type("123", at: kt(2))
        rig.run(until: kt(3))
        #expect(rig.lines == ["Code: ***_____", "Resend (58)"])
    }

    @Test func aFailedSendOpensNoField() {
        var rig = KeypadRig()
        rig.start()
        rig.tap(.button, at: kt(0))
        rig.finishSend(.exited(code: 1), at: kt(1))
        #expect(rig.lines == ["Send failed", "Resend"])
        rig.type("1", at: kt(2))
        #expect(rig.lines == ["Send failed", "Resend"])
    }

    @Test func twentyByFourShowsTheResendScreenAndTheFieldTogether() {
        var rig = KeypadRig(layout: .twentyByFour)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("123", at: kt(2))
        rig.run(until: kt(3))
        #expect(rig.lines == ["Code sent", "Resend (58)", "Enter code", "Code: ***_____"])
        #expect(rig.screen.allSatisfy { $0.count == 20 })
    }

    @Test func starDeletesTheLastDigit() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("123*", at: kt(2))
        #expect(rig.line1 == "Code: **______")
        rig.type("9", at: kt(4))
        #expect(rig.line1 == "Code: ***_____")
    }

    @Test func holdingStarForASecondClearsTheField() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234", at: kt(2))
        rig.edge(.star, .pressed, at: kt(4))
        rig.run(until: kt(4.1))
        #expect(rig.line1 == "Code: ***_____", "the press deletes one digit at once")
        rig.run(until: kt(5.0))
        #expect(rig.line1 == "Code: ***_____", "not yet: held 0.98 s")
        rig.run(until: kt(5.03))
        #expect(rig.line1 == "Code: ________")
        #expect(rig.entryLog.contains(.cleared(.held, length: 3)))
        rig.edge(.star, .released, at: kt(5.5))
        rig.type("7", at: kt(6))
        #expect(rig.line1 == "Code: *_______")
    }

    @Test func aShortStarPressDoesNotClear() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234*", at: kt(2))
        rig.run(until: kt(10))
        #expect(rig.line1 == "Code: ***_____")
    }

    @Test func poundSubmitsTheCodeToTheVerifyCommandAndOverwritesTheField() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        #expect(rig.lines == ["Checking...", "Resend (57)"])
        #expect(rig.verifies.count == 1)
        #expect(digitsText(rig.verifies[0].code) == "1234")
        #expect(rig.pad.entry?.fieldLength == 0)
        // The code only travels in the verify request; the log and the state hold its length.
        #expect(rig.entryLog.contains(.submitted(length: 4, sequence: 1)))
        #expect(String(describing: rig.verifies[0].code) == "<code of 4 digits>")
        #expect(!String(describing: rig.entryLog).contains("1234"))
        #expect(!String(describing: rig.entryPersisted).contains("1234"))
        // The field's buffer is overwritten, not just emptied.
        #expect(fieldBuffer(of: rig.pad.entry!).allSatisfy { $0 == 0 })
    }

    @Test func aSecretCodeCanBeWiped() {
        var code = SecretCode(digits: Array("4711".utf8))
        code.wipe()
        #expect(code.count == 0)
    }

    @Test func anAcceptedCodeShowsSuccessPulsesTheOutputThenReturnsToReady() {
        var rig = KeypadRig()
        rig.start()
        #expect(rig.output == false, "the output line is driven inactive at start")
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.answer(.accepted, at: kt(4))
        #expect(rig.lines == ["Code accepted", "Welcome"])
        #expect(rig.output == true)
        rig.run(until: kt(5.999))
        #expect(rig.output == true)
        rig.run(until: kt(6))
        #expect(rig.output == false, "a 2 s pulse")
        rig.run(until: kt(6.999))
        #expect(rig.lines == ["Code accepted", "Welcome"])
        rig.run(until: kt(7))
        #expect(rig.lines == ["Code sent", "Resend (54)"], "3 s of success, then the resend screen")
        #expect(rig.outputHistory.map(\.on) == [false, true, false])
        #expect(rig.outputHistory.map(\.time) == [kt(0), kt(4), kt(6)])
        rig.type("5", at: kt(8))
        #expect(rig.lines == ["Code sent", "Resend (52)"], "no field after an accepted code")
    }

    @Test func aWrongCodeShowsTheAttemptsLeftAndTypingShowsTheFieldAgain() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1111#", at: kt(2))
        rig.answer(.rejected, at: kt(4))
        #expect(rig.lines == ["Wrong, 2 left", "Resend (57)"])
        rig.type("5", at: kt(5))
        #expect(rig.lines == ["Code: *_______", "Resend (55)"])
        #expect(rig.entryPersisted.last?.failures == 1)
    }

    @Test func twentyByFourShowsTheWrongCodeNoticeAboveTheField() {
        var rig = KeypadRig(layout: .twentyByFour)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1111#", at: kt(2))
        rig.answer(.rejected, at: kt(4))
        #expect(rig.lines == ["Code sent", "Resend (57)", "Wrong, 2 left", "Code: ________"])
    }

    @Test func threeWrongCodesLockTheFieldWithACountdownThatGrowsEachRound() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        wrongCodes(3, from: 2, rig: &rig)
        // The third answer came at 10 s.
        #expect(rig.lines == ["Try again (30)", "Resend (51)"])
        rig.run(until: kt(11))
        #expect(rig.line1 == "Try again (29)")
        rig.type("1234#", at: kt(12))
        #expect(rig.line1 == "Try again (27)", "keys are ignored during the lockout")
        #expect(rig.verifies.count == 3)
        rig.run(until: kt(39.999))
        #expect(rig.line1 == "Try again (01)")
        rig.run(until: kt(40))
        #expect(rig.line1 == "Code: ________")
        #expect(rig.entryLog.contains(.lockoutStarted(until: kt(40), seconds: 30, round: 1)))
        #expect(rig.entryLog.contains(.lockoutFinished(at: kt(40))))
        wrongCodes(3, from: 41, rig: &rig)
        #expect(rig.line1 == "Try again (120)")
        #expect(rig.entryLog.contains(.lockoutStarted(until: kt(49 + 120), seconds: 120, round: 2)))
    }

    @Test func aLockoutSurvivesARestartClampedLikeTheCooldown() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        wrongCodes(3, from: 2, rig: &rig)
        let wallAtLockout = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)
        let entry = PersistedEntryState(rig.entryPersisted.last!, monotonicNow: kt(10), wallNow: wallAtLockout)
        let controller = PersistedState(rig.controllerPersisted.last!, monotonicNow: kt(10), wallNow: wallAtLockout)

        // Restarted 12 s later, on a new monotonic clock.
        func restarted(wallNow: WallTime, entry: PersistedEntryState) -> KeypadRig {
            var next = KeypadRig()
            let restoredController = controller.resumed(monotonicNow: kt(0), wallNow: wallNow, config: next.pad.controller.config)
            let restoredEntry = entry.resumed(monotonicNow: kt(0), wallNow: wallNow, config: next.pad.entry!.config)
            next.start(restoring: restoredController, entry: restoredEntry)
            return next
        }
        var later = restarted(wallNow: wallAtLockout + .seconds(12), entry: entry)
        #expect(later.lines == ["Try again (18)", "Resend (39)"])
        later.run(until: kt(18))
        #expect(later.line1 == "Code: ________", "the field opens again: the code is still valid")

        // A wall clock set back an hour cannot stretch the lockout.
        let back = restarted(wallNow: wallAtLockout - .seconds(3_600), entry: entry)
        #expect(back.line1 == "Try again (30)")

        // A state claiming a day-long lockout gets at most the longest configured one (600 s).
        var tampered = entry
        tampered.lockoutSeconds = 86_400
        tampered.lockoutEnd = wallAtLockout + .seconds(86_400)
        let clamped = restarted(wallNow: wallAtLockout, entry: tampered)
        #expect(clamped.line1 == "Try again (600)")

        // The rounds survive too: the next lockout after the restart is the second one.
        var afterRestart = restarted(wallNow: wallAtLockout + .seconds(40), entry: entry)
        #expect(afterRestart.line1 == "Code: ________")
        wrongCodes(3, from: 1, rig: &afterRestart)
        #expect(afterRestart.line1 == "Try again (120)")
    }

    @Test func aCodeExpiresAfterItsValidityWindow() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(595))
        rig.run(until: kt(600.999))
        #expect(rig.lines == ["Code: **______", "Resend"])
        rig.run(until: kt(601))
        #expect(rig.lines == ["Code expired", "Resend"])
        #expect(rig.pad.entry?.fieldLength == 0)
        rig.type("3#", at: kt(602))
        #expect(rig.lines == ["Code expired", "Resend"])
        #expect(rig.verifies.isEmpty)
        rig.tap(.button, at: kt(610))
        #expect(rig.lines == ["Sending...", "Resend (60)"], "a resend hides the expiry notice")
        rig.finishSend(.exited(code: 0), at: kt(611))
        #expect(rig.line1 == "Code: ________")
    }

    @Test func aCheckRunningAtExpiryIsAnsweredFirst() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(598))
        rig.run(until: kt(602))
        #expect(rig.line1 == "Checking...")
        rig.answer(.rejected, at: kt(603))
        #expect(rig.line1 == "Code expired")
        #expect(rig.entryPersisted.last?.failures == 1, "the wrong code still counts")
    }

    @Test func noKeyForTheEntryTimeoutClearsTheField() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        rig.run(until: kt(32.319))
        #expect(rig.line1 == "Code: **______")
        rig.run(until: kt(32.32))
        #expect(rig.line1 == "Code: ________", "30 s after the last key (2.32 s)")
        #expect(rig.entryLog.contains(.cleared(.timeout, length: 2)))
    }

    @Test func digitsCanBeShown() {
        var config = KeypadRig.defaultEntry
        config.echo = .shown
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        #expect(rig.line1 == "Code: 12______")
    }

    @Test func digitsCanBeShownBrieflyThenMasked() {
        var config = KeypadRig.defaultEntry
        config.echo = .shownBriefly(.seconds(1))
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        #expect(rig.line1 == "Code: *2______")
        rig.run(until: kt(3.319))
        #expect(rig.line1 == "Code: *2______")
        rig.run(until: kt(3.32))
        #expect(rig.line1 == "Code: **______")
        rig.type("3", at: kt(4))
        #expect(rig.line1 == "Code: **3_____")
    }

    @Test func aFailedOrTimedOutCheckIsShownAndCountsNoAttempt() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.answer(.failed, at: kt(4))
        #expect(rig.line1 == "Check failed")
        rig.type("1234#", at: kt(5))
        rig.answer(.timedOut, at: kt(7))
        #expect(rig.line1 == "Check timed out")
        // Each try is written before its check, and given back (written too) when the check fails.
        #expect(rig.entryPersisted.map(\.failures) == [0, 1, 0, 1, 0])
        wrongCodes(2, from: 8, rig: &rig)
        #expect(rig.line1 == "Wrong, 1 left")
    }

    @Test func theVerifyCommandsEndingDecidesTheResult() {
        let table: [(CommandOutcome.Ending, VerifyResult)] = [
            (.exited(code: 0), .accepted),
            (.exited(code: 1), .rejected),
            (.exited(code: 2), .failed),
            (.exited(code: 255), .failed),
            (.signalled(signal: 9), .failed),
            (.couldNotStart(reason: "not found", errno: 2), .failed),
            (.timedOut(after: .seconds(10), killed: false), .timedOut),
            (.timedOut(after: .seconds(10), killed: true), .timedOut),
        ]
        for (ending, result) in table {
            #expect(VerifyResult(ending) == result)
        }
    }

    @Test func theFieldCanSubmitItselfAtMaximumLength() {
        var config = KeypadRig.defaultEntry
        config.maxLength = 4
        config.submitAtMaxLength = true
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("123", at: kt(2))
        #expect(rig.line1 == "Code: ***_")
        rig.type("4", at: kt(3))
        #expect(rig.line1 == "Checking...")
        #expect(digitsText(rig.verifies[0].code) == "1234")
    }

    @Test func aFullFieldTakesNoMoreDigits() {
        var config = KeypadRig.defaultEntry
        config.maxLength = 4
        var rig = KeypadRig(entry: config)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12345#", at: kt(2))
        #expect(digitsText(rig.verifies[0].code) == "1234")
        #expect(rig.entryLog.contains(.fieldFull(length: 4)))
        #expect(rig.frames.contains { trimmedLine($0.frame.lines[0]) == "Max 4 digits" }, "said on the screen")
    }

    @Test func poundBeforeTheMinimumLengthSaysTooShort() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12#", at: kt(2))
        #expect(rig.line1 == "Code: **______")
        rig.type("*", at: kt(3))
        rig.type("*#", at: kt(4))
        #expect(rig.line1 == "Too short")
        #expect(rig.verifies.isEmpty)
        rig.type("4", at: kt(5))
        #expect(rig.line1 == "Code: *_______")
    }

    @Test func keysDuringACheckAreIgnored() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.type("99#", at: kt(4))
        #expect(rig.line1 == "Checking...")
        #expect(rig.verifies.count == 1)
        rig.answer(.rejected, at: kt(6))
        rig.type("5", at: kt(7))
        #expect(rig.line1 == "Code: *_______", "the keys typed during the check are not in the field")
    }

    @Test func theButtonDuringEntryIsTheResendButtonAsBefore() {
        var rig = KeypadRig(duration: 10)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        rig.tap(.button, at: kt(5))
        #expect(rig.controllerLog.contains(.pressIgnored(at: kt(5.02), secondsLeft: 5)))
        #expect(rig.lines == ["Code: **______", "Resend (05)"])
        rig.run(until: kt(10.02))
        #expect(rig.lines == ["Code: **______", "Resend"])
        rig.tap(.button, at: kt(11))
        #expect(rig.lines == ["Code: **______", "Resend (10)"], "a resend keeps the field until the new code is sent")
        rig.finishSend(.exited(code: 0), at: kt(12))
        #expect(rig.lines == ["Code: ________", "Resend (10)"])
    }

    @Test func aResendDoesNotResetTheAttempts() {
        var rig = KeypadRig(duration: 10)
        rig.start()
        rig.sendCode(at: kt(0))
        wrongCodes(2, from: 2, rig: &rig)
        rig.sendCode(at: kt(11))
        wrongCodes(1, from: 13, rig: &rig)
        #expect(rig.line1 == "Try again (30)")
    }

    @Test func anAcceptedCodeResetsTheAttempts() {
        var rig = KeypadRig(duration: 10)
        rig.start()
        rig.sendCode(at: kt(0))
        wrongCodes(2, from: 2, rig: &rig)
        rig.type("1234#", at: kt(8))
        rig.answer(.accepted, at: kt(10))
        #expect(rig.entryPersisted.last == EntrySnapshot())
        rig.sendCode(at: kt(20))
        wrongCodes(2, from: 22, rig: &rig)
        #expect(rig.line1 == "Wrong, 1 left")
    }

    @Test func aBoundLetterKeySendsSoAKeypadAloneRunsTheDevice() {
        var rig = KeypadRig(send: [.a])
        rig.start()
        rig.tap(.a, at: kt(0))
        #expect(rig.lines == ["Sending...", "Resend (60)"])
        rig.finishSend(.exited(code: 0), at: kt(1))
        rig.type("12", at: kt(2))
        #expect(rig.line1 == "Code: **______")
    }

    @Test func withoutASendCommandThePressOpensTheField() {
        var rig = KeypadRig(hasSendCommand: false)
        rig.start()
        rig.tap(.button, at: kt(0))
        #expect(rig.lines == ["Code: ________", "Resend (60)"])
    }

    @Test func aBouncyKeyTypesOneDigit() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        for (index, pressed) in [true, false, true, false, true].enumerated() {
            rig.edge(.digit5, pressed ? .pressed : .released, at: kt(2) + .microseconds(Int64(index) * 500))
        }
        rig.edge(.digit5, .released, at: kt(2.2))
        rig.run(until: kt(3))
        #expect(rig.line1 == "Code: *_______")
    }

    @Test func stoppingDuringAPulseDrivesTheOutputInactive() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.answer(.accepted, at: kt(4))
        rig.stop(at: kt(5))
        #expect(rig.output == false)
        #expect(rig.lines == ["Stopped", ""])
        rig.answer(.accepted, at: kt(6))
        #expect(rig.output == false)
    }

    @Test func aSendDuringALockoutOpensTheFieldWhenTheLockoutEnds() {
        var rig = KeypadRig(duration: 10)
        rig.start()
        rig.sendCode(at: kt(0))
        wrongCodes(3, from: 2, rig: &rig)
        rig.sendCode(at: kt(20))
        #expect(rig.lines == ["Try again (19)", "Resend (10)"])
        rig.type("1234#", at: kt(22))
        #expect(rig.verifies.count == 3)
        rig.run(until: kt(40))
        #expect(rig.lines == ["Code: ________", "Resend"])
        #expect(rig.pad.entry?.snapshot.validUntil == kt(621), "valid from the new send")
    }

    @Test func anAnswerForAnUnknownSubmissionIsOnlyLogged() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2))
        rig.apply(rig.pad.verifyFinished(VerifyOutcome(sequence: 7, result: .accepted), now: kt(3)))
        #expect(rig.line1 == "Code: **______")
        #expect(rig.output == false)
        #expect(rig.entryLog.contains(.staleVerify(sequence: 7)))
    }

    @Test func sendKeysCannotBeCodeKeys() {
        #expect(KeyBindings(send: [.button, .a]).problems.isEmpty)
        #expect(
            KeyBindings(send: [.star]).problems
                == ["the send key cannot be '*': digits, * and # are for the code (allowed: A, B, C, D or the button)"])
        #expect(KeyBindings(send: [.digit0, .pound]).problems.count == 2)
    }
}

/// `count` wrong codes, one every 3 s from `start` s: typed from there (`#` counts at +1.22 s),
/// answered at +2 s.
private func wrongCodes(_ count: Int, from start: Double, rig: inout KeypadRig) {
    for index in 0..<count {
        let at = start + Double(index) * 3
        rig.type("1111#", at: kt(at))
        rig.answer(.rejected, at: kt(at + 2))
    }
}

/// The flow's field buffer, read by reflection (tests only).
private func fieldBuffer(of entry: CodeEntry) -> [UInt8] {
    Mirror(reflecting: entry).children.first { $0.label == "buffer" }?.value as? [UInt8] ?? [1]
}
