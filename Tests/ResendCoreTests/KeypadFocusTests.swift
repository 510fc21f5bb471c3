import HAL
import ResendCore
import Testing

/// The frame that answers a key points the display at the key's cell (`ScreenText.focus`), so the
/// echo is written first; frames nobody typed for (the countdown, a message) point nowhere.
@Suite("Keypad frames: the key's cell first")
struct KeypadFocusTests {
    private func focus(_ rig: KeypadRig, at time: Instant) -> ScreenCell?? {
        rig.frames.last { $0.time == time }.map(\.frame.focus)
    }

    @Test func eachDigitsFramePointsAtItsCellOn16x2AndTheCountdownsFramesPointNowhere() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12", at: kt(2.5))
        rig.run(until: kt(4))
        #expect(focus(rig, at: kt(2.52)) == .some(ScreenCell(row: 0, column: 6)))
        #expect(focus(rig, at: kt(2.82)) == .some(ScreenCell(row: 0, column: 7)))
        #expect(rig.lines == ["Code: **______", "Resend (57)"])
        let ticks = rig.frames.filter { $0.time == kt(3.02) || $0.time == kt(4.02) || $0.time == kt(1) }
        #expect(!ticks.isEmpty)
        #expect(ticks.allSatisfy { $0.frame.focus == nil })
    }

    @Test func onTwentyByFourTheFocusIsOnTheFieldsRow() {
        var rig = KeypadRig(layout: .twentyByFour)
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("123", at: kt(2.5))
        #expect(focus(rig, at: kt(3.12)) == .some(ScreenCell(row: 3, column: 8)))
        #expect(rig.lines == ["Code sent", "Resend (57)", "Enter code", "Code: ***_____"])
    }

    @Test func theFirstDigitAfterAWrongCodePointsAtItsCellWhileTheMessageIsReplaced() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("1234#", at: kt(2))
        rig.answer(.rejected, at: kt(3.5))
        #expect(rig.line1 == "Wrong, 2 left")
        #expect(rig.frames.last?.frame.focus == nil, "the message answers the verify command, not a key")
        rig.type("5", at: kt(3.6))
        #expect(rig.line1 == "Code: *_______")
        #expect(focus(rig, at: kt(3.62)) == .some(ScreenCell(row: 0, column: 6)))
    }

    @Test func starPointsAtTheLastDigitLeftAndSubmittingPointsNowhere() {
        var rig = KeypadRig()
        rig.start()
        rig.sendCode(at: kt(0))
        rig.type("12345*", at: kt(2))
        #expect(rig.line1 == "Code: ****____")
        #expect(focus(rig, at: kt(3.52)) == .some(ScreenCell(row: 0, column: 9)))
        rig.type("#", at: kt(4))
        #expect(rig.line1 == "Checking...")
        #expect(focus(rig, at: kt(4.02)) == .some(nil))
    }
}
