import ResendCore
import Testing

@Suite("Configurable texts")
struct TextsTests {
    @Test(
        "the seconds placeholder expands to the formatted seconds",
        arguments: [
            ("Resend ({s})", 60, "Resend (60)"),
            ("Resend ({s})", 5, "Resend (05)"),
            ("Resend ({s})", 120, "Resend (120)"),
            ("{s}s", 0, "00s"),
            ("Wait {s} s", 9, "Wait 09 s"),
            ("{s}/{s}", 7, "07/07"),
            ("no placeholder", 7, "no placeholder"),
            ("{s", 7, "{s"),
            ("{{s}}", 7, "{07}"),
            ("R\u{00E9}essayer {s}", 42, "R\u{00E9}essayer 42"),
        ])
    func expands(template: String, seconds: Int, expected: String) {
        #expect(Texts().expand(template, seconds: seconds) == expected)
    }

    @Test("the default texts fit a 16x2 display with countdowns up to 120 s")
    func defaultsFit() {
        #expect(Texts().problems(columns: 16, maxSeconds: 120) == [])
        #expect(Texts().problems(columns: 12, maxSeconds: 999) == [])
    }

    @Test("a countdown label too wide at the longest duration is reported with its width and the limit")
    func countdownTooWide() {
        var texts = Texts()
        texts.countdownLabel = "Resend code ({s})"
        // "Resend code (60)" is 16 wide: fits; "Resend code (120)" is 17: does not.
        #expect(texts.problems(columns: 16, maxSeconds: 60) == [])
        let problems = texts.problems(columns: 16, maxSeconds: 120)
        #expect(
            problems == [
                TextProblem(
                    field: "countdownLabel", value: "Resend code ({s})", width: 17,
                    limit: 16, kind: .tooWide, seconds: 120)
            ])
        #expect(
            problems.first?.message
                == "countdownLabel \"Resend code ({s})\" is 17 characters wide at 120 s; the display has 16 columns")
    }

    @Test("plain texts wider than the display are reported by field name")
    func plainTooWide() {
        let problems = Texts().problems(columns: 10, maxSeconds: 60)
        #expect(problems.map(\.field) == ["title", "countdownLabel", "failedTitle"])
        #expect(problems.map(\.width) == [12, 11, 11])
        #expect(problems.allSatisfy { $0.limit == 10 && $0.kind == .tooWide })
        #expect(problems.first?.message == "title \"Verification\" is 12 characters wide; the display has 10 columns")
    }

    @Test(
        "a countdown label needs exactly one placeholder",
        arguments: [
            ("Resend", 0), ("Resend {s} ({s})", 2), ("{s}{s}{s}", 3),
        ])
    func countdownPlaceholders(label: String, found: Int) {
        var texts = Texts()
        texts.countdownLabel = label
        let problems = texts.problems(columns: 20, maxSeconds: 60)
        #expect(problems.count == 1)
        #expect(problems.first?.field == "countdownLabel")
        #expect(problems.first?.value == label)
        #expect(problems.first?.kind == .placeholderCount(found: found, expected: 1))
        #expect(problems.first?.limit == 20)
    }

    @Test("a placeholder in a text that is not a template is reported")
    func unexpectedPlaceholder() {
        var texts = Texts()
        texts.sentTitle = "Sent {s}"
        let problems = texts.problems(columns: 16, maxSeconds: 60)
        #expect(
            problems == [
                TextProblem(
                    field: "sentTitle", value: "Sent {s}", width: 8, limit: 16,
                    kind: .placeholderCount(found: 1, expected: 0))
            ])
        #expect(problems.first?.message == "sentTitle \"Sent {s}\" must not contain {s} (only countdownLabel and lockoutLabel show the seconds)")
    }

    @Test("a missing placeholder message names the count found")
    func missingPlaceholderMessage() {
        var texts = Texts()
        texts.countdownLabel = "Resend"
        #expect(
            texts.problems(columns: 16, maxSeconds: 60).first?.message
                == "countdownLabel \"Resend\" needs exactly 1 {s} for the seconds, found 0")
    }
}
