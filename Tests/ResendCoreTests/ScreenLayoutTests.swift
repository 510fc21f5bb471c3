import ResendCore
import Testing

@Suite("Screen layout")
struct ScreenLayoutTests {
    @Test("a 16x2 frame pads short texts with spaces to 16 columns")
    func pads16x2() {
        let frame = ScreenLayout.sixteenByTwo.frame(status: "Verification", label: "Send code")
        #expect(frame.lines == ["Verification    ", "Send code       "])
    }

    @Test("a 16x2 frame cuts long texts at 16 columns")
    func cuts16x2() {
        let frame = ScreenLayout.sixteenByTwo.frame(status: "Verification code", label: "Resend the code (120)")
        #expect(frame.lines == ["Verification cod", "Resend the code "])
    }

    @Test("a 20x4 frame has status and label on lines 1 and 2 and two blank lines")
    func fills20x4() {
        let frame = ScreenLayout.twentyByFour.frame(status: "Code sent", label: "Resend (59)")
        let blank = String(repeating: " ", count: 20)
        #expect(frame.lines == ["Code sent           ", "Resend (59)         ", blank, blank])
    }

    @Test(
        "every line of a frame is exactly as wide as the display",
        arguments: [
            ScreenLayout.sixteenByTwo, ScreenLayout.twentyByFour, ScreenLayout(columns: 8, rows: 2),
        ])
    func exactWidth(layout: ScreenLayout) {
        for status in ["", "a", "Verification", "A status line longer than any display"] {
            let frame = layout.frame(status: status, label: "Resend (120)")
            #expect(frame.lines.count == layout.rows)
            #expect(frame.lines.allSatisfy { $0.count == layout.columns })
        }
    }

    @Test("a text of exactly the display's width is neither padded nor cut")
    func exactFit() {
        let frame = ScreenLayout.sixteenByTwo.frame(status: "0123456789abcdef", label: "")
        #expect(frame.lines == ["0123456789abcdef", String(repeating: " ", count: 16)])
    }

    @Test("one character is one cell, also beyond ASCII")
    func charactersAreCells() {
        let frame = ScreenLayout(columns: 4, rows: 2).frame(status: "\u{00E9}t\u{00E9}s", label: "\u{00B0}C")
        #expect(frame.lines == ["\u{00E9}t\u{00E9}s", "\u{00B0}C  "])
    }

    @Test(
        "a layout needs at least one column and two rows",
        arguments: [
            (16, 2, true), (20, 4, true), (1, 2, true), (16, 1, false), (0, 2, false), (-1, 4, false),
        ])
    func validity(columns: Int, rows: Int, valid: Bool) {
        #expect(ScreenLayout(columns: columns, rows: rows).isValid == valid)
    }
}
