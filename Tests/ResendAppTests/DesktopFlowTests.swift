import CharacterLCD
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// A person at the terminal on a virtual clock: at each instant they type a text, decided only
/// then (so they can read the code off the phone), one key every 300 ms, or all of it in one read
/// when `pasted` (a paste, or a fast typist); after the last key they leave (a stop).
private struct Person: KeySource {
    let clock: ManualClock
    var plan: [(at: Instant, text: () -> String)]
    let pasted: Bool
    var typing: [(Instant, UInt8)] = []

    init(clock: ManualClock, _ plan: [(at: Instant, text: () -> String)], pasted: Bool = false) {
        self.clock = clock
        self.plan = plan
        self.pasted = pasted
    }

    mutating func waitForKeys(until deadline: Instant?) throws(HALError) -> [KeyInput] {
        if typing.isEmpty, let next = plan.first, deadline == nil || next.at <= deadline! {
            clock.set(to: max(clock.now(), next.at))
            plan.removeFirst()
            let spacing = pasted ? TimeSpan.zero : .milliseconds(300)
            typing = next.text().utf8.enumerated().map { (next.at + spacing * Int64($0.offset), $0.element) }
        }
        if let key = typing.first, deadline == nil || key.0 <= deadline! {
            clock.set(to: max(clock.now(), key.0))
            let read = typing.prefix { $0.0 == key.0 }
            typing.removeFirst(read.count)
            return read.map { .key($0.1) }
        }
        if let deadline {
            clock.set(to: max(clock.now(), deadline))
            return []
        }
        return [.stop]
    }
}

private let enter = "\r"

/// The interactive simulator as `simulate` with `arguments` starts it (no configuration file), on
/// virtual time, drawn on a terminal of `columns` and `rows`; every frame drawn and every log line
/// are kept.
private final class Desktop {
    let clock = ManualClock()
    let session: InteractiveSession<ManualClock, VirtualDelay, ManualWallClock>
    private let drawn = Capture()

    init(_ arguments: [String] = [], config: String? = nil, columns: Int = 80, rows: Int = 24) throws {
        let options = try SimulateOptions.parse(arguments, readConfig: { _ in config.map { .text($0) } ?? .missing })
        let drawn = drawn
        session = InteractiveSession(
            options, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true),
            wallClock: ManualWallClock(WallTime(millisecondsSinceEpoch: 1_718_000_000_000), following: clock),
            random: .simulated, terminalSize: { (columns, rows) },
            output: { drawn.out.append($0) })
        session.renderer.log = { drawn.err.append($0) }
    }

    /// Every frame drawn, as the terminal got it.
    var frames: [String] { drawn.out }
    /// Every log line, in `run`'s words.
    var log: [String] { drawn.err }
    /// The codes on the phone, oldest first.
    var codes: [String] { session.phone?.messages.map { String($0.text.filter(\.isNumber)) } ?? [] }
    /// The newest code on the phone ("" before the first).
    var code: String { codes.last ?? "" }

    func run(_ plan: [(at: Instant, text: () -> String)], pasted: Bool = false) throws {
        try session.run(keys: Person(clock: clock, plan, pasted: pasted))
    }

    /// The instants the door opened and closed, from the start.
    var door: [(TimeSpan, Bool)] { session.outputLine.history.map { ($0.time - .origin, $0.on) } }
}

/// A code of the same length that is not `code`.
private func wrong(_ code: String) -> String {
    String(code.map { $0 == "1" ? "2" : "1" })
}

@Suite("The desktop flow: phone, keypad and door in the interactive simulator")
struct DesktopFlowTests {
    @Test("the default interactive simulator is the whole flow; --button-only and --headless keep the button alone")
    func defaults() throws {
        let interactive = try SimulateOptions.parse([], readConfig: { _ in .missing })
        #expect(interactive.services.keypad == .desktop)
        #expect(interactive.services.phone)
        let buttonOnly = try SimulateOptions.parse(["--button-only"], readConfig: { _ in .missing })
        #expect(buttonOnly.services.keypad == nil)
        #expect(!buttonOnly.services.phone)
        let headless = try SimulateOptions.parse(["--headless"], readConfig: { _ in .missing })
        #expect(headless.services.keypad == nil)
        #expect(!headless.services.phone)
        let scripted = try SimulateOptions.parse(["--mock-send", "ok@1"], readConfig: { _ in .missing })
        #expect(scripted.services.keypad == .desktop)
        #expect(!scripted.services.phone)
    }

    @Test("Send makes the code arrive on the phone; typed with Enter it opens the door for the pulse, then the door closes")
    func codeArrivesAndOpensTheDoor() throws {
        let desktop = try Desktop()
        var seen: [String] = []
        try desktop.run([
            (at(1), { " " }),
            (
                at(4),
                {
                    seen.append(desktop.code); return desktop.code + enter
                }
            ),
            (at(15), { "q" }),
        ])
        let code = try #require(seen.first)
        #expect(code.count == 6)
        #expect(desktop.frames.first?.contains("No messages yet") == true)
        #expect(desktop.frames.contains { $0.contains("Your code: \(code)") && $0.contains("│Code: ______    │") })
        #expect(desktop.frames.contains { $0.contains("│Code: ******    │") })
        #expect(desktop.frames.contains { $0.contains("│Code accepted   │") && $0.contains("door ■ DOOR OPEN") })
        // Accepted 300 ms after the sixth digit's Enter (4 s + 6 x 0.3 s + 20 ms debounce + 0.3 s check).
        let opened = try #require(desktop.door.first { $0.1 })
        let closed = try #require(desktop.door.last)
        #expect(closed.1 == false)
        // The pulse is timed from the accepted check; the emulated bus's frame write (a few ms) may come first.
        let pulse = TimeSpan.milliseconds(Int64(DeviceConfig.Keypad().output.pulseMs))
        #expect(closed.0 - opened.0 <= pulse && closed.0 - opened.0 > pulse - .milliseconds(10))
        #expect(desktop.frames.last?.contains("door □ closed") == true)
        #expect(desktop.log.contains("code checked result=accepted check=1"))
    }

    @Test("a code pasted in one read (with its Enter) is accepted: the keys are tapped one after another, in the order typed")
    func pastedCodeIsAccepted() throws {
        let desktop = try Desktop()
        try desktop.run(
            [
                (at(1), { " " }),
                (at(4), { desktop.code + enter }),
                (at(15), { "q" }),
            ], pasted: true)
        #expect(desktop.code.count == 6)
        #expect(desktop.frames.contains { $0.contains("│Code accepted   │") })
        #expect(desktop.log.contains("code checked result=accepted check=1"))
        #expect(desktop.door.contains { $0.1 })
    }

    @Test("wrong codes show the wrong-code screen and count down to a lockout whose countdown runs")
    func wrongCodesLockOut() throws {
        let desktop = try Desktop()
        try desktop.run([
            (at(1), { " " }),
            (at(3), { wrong(desktop.code) + enter }),
            (at(6), { wrong(desktop.code) + enter }),
            (at(9), { wrong(desktop.code) + enter }),
            (at(14), { desktop.code + enter }),
            (at(20), { "q" }),
        ])
        #expect(desktop.frames.contains { $0.contains("│Wrong, 2 left   │") })
        #expect(desktop.frames.contains { $0.contains("│Wrong, 1 left   │") })
        #expect(desktop.frames.contains { $0.contains("│Try again (30)  │") })
        #expect(desktop.frames.contains { $0.contains("│Try again (25)  │") })
        #expect(desktop.door.allSatisfy { !$0.1 })  // the right code during the lockout opens nothing
        #expect(desktop.log.filter { $0.hasPrefix("code rejected") }.count == 3)
    }

    @Test("a resend brings a new code; the old one no longer opens the door, the new one does")
    func resendReplacesTheCode() throws {
        let desktop = try Desktop(["--duration", "5"])
        var first = ""
        try desktop.run([
            (at(1), { " " }),
            (
                at(7),
                {
                    first = desktop.code; return " "
                }
            ),
            (at(9), { first + enter }),
            (at(12), { desktop.code + enter }),
            (at(20), { "q" }),
        ])
        #expect(desktop.codes.count == 2)
        #expect(desktop.frames.contains { $0.contains("Your code: \(desktop.codes[0])") && $0.contains("Your code: \(desktop.codes[1])") })
        #expect(first == desktop.codes[0])
        #expect(desktop.codes[0] != desktop.codes[1])  // a new code is never the one it replaces
        #expect(
            desktop.log.filter { $0.hasPrefix("code checked") } == [
                "code checked result=rejected check=1", "code checked result=accepted check=2",
            ])
    }

    @Test("Backspace erases the last digit")
    func backspaceErases() throws {
        let desktop = try Desktop()
        try desktop.run([
            (at(1), { " " }),
            (at(3), { "123\u{7F}" }),
            (at(6), { "q" }),
        ])
        let three = try #require(desktop.frames.firstIndex { $0.contains("│Code: ***___    │") })
        #expect(desktop.frames[three...].contains { $0.contains("│Code: **____    │") })
        #expect(!desktop.log.contains { $0.hasPrefix("code submitted") })
    }

    @Test("the code is never in the log: only on the phone")
    func codeNotInTheLog() throws {
        let desktop = try Desktop()
        try desktop.run([(at(1), { " " }), (at(3), { desktop.code + enter }), (at(10), { "q" })])
        let code = desktop.code
        #expect(code.count == 6)
        #expect(!desktop.log.isEmpty)
        #expect(desktop.log.allSatisfy { !$0.contains(code) })
        #expect(desktop.log.contains { $0.hasPrefix("send finished result=ok") })
        // On the terminal only the phone's message line holds it.
        for frame in desktop.frames {
            for line in frame.split(separator: "\r\n") where line.contains(code) {
                #expect(line.contains("Your code: \(code)"))
            }
        }
    }

    @Test("at 80 columns the phone is beside the LCD, every line within the width")
    func layoutWide() throws {
        let desktop = try Desktop(columns: 80)
        try desktop.run([(at(1), { " " }), (at(3), { "q" })])
        let lines = desktop.session.renderer.frameLines()
        let row = try #require(lines.firstIndex { $0.hasPrefix("  ┌────────────────┐") })
        #expect(lines[row].hasSuffix("╮"))
        #expect(lines[row + 1].contains("│ Phone") && lines[row + 1].hasPrefix("  │"))
        #expect(lines.contains { $0.hasPrefix("  │Stopped") && $0.hasSuffix("│") })
        #expect(lines.contains { $0.hasPrefix("  door □ closed") })
        #expect(lines.contains { $0.contains("Your code: \(desktop.code)") && $0.hasPrefix("  ") })
        #expect(lines.contains("  space Send   0-9 type the code   enter/# submit   backspace/* erase   x clear"))
        #expect(lines.allSatisfy { $0.count <= 80 })
    }

    @Test(
        "the phone goes beside the LCD from 57 columns on (16x2 and 20x4) and from 75 (40x2)",
        arguments: [("16x2", 57), ("20x4", 57), ("40x2", 75)])
    func sideBySideThreshold(geometry: String, columns: Int) throws {
        for (width, beside) in [(columns, true), (columns - 1, false)] {
            let desktop = try Desktop(["--geometry", geometry], columns: width, rows: 40)
            try desktop.run([(at(1), { "q" })])
            let lines = desktop.session.renderer.frameLines()
            let top = try #require(lines.firstIndex { $0.hasPrefix("  ┌") })
            #expect(lines[top].hasSuffix("╮") == beside, "\(geometry) at \(width) columns")
            #expect(lines.allSatisfy { $0.count <= width })
        }
    }

    @Test(
        "on a narrow terminal the phone goes below the LCD, no line wider than the terminal, no more lines than its rows",
        arguments: [(40, 24), (30, 24), (30, 20)])
    func layoutNarrow(columns: Int, rows: Int) throws {
        let desktop = try Desktop(columns: columns, rows: rows)
        try desktop.run([(at(1), { " " }), (at(3), { "q" })])
        let lines = desktop.session.renderer.frameLines()
        let lcdBottom = try #require(lines.firstIndex { $0.hasPrefix("  └────────────────┘") })
        let phoneTop = try #require(lines.firstIndex { $0.hasPrefix("  ╭") })
        #expect(phoneTop > lcdBottom)
        #expect(lines[lcdBottom].count == 20)
        #expect(lines.contains { $0.contains("Your code:") })
        #expect(lines.allSatisfy { $0.count <= columns })
        #expect(lines.count <= rows)
        #expect(lines.contains { $0.hasPrefix("  ╰") })  // the whole phone, shortened to fit
    }

    @Test("a configuration file's keypad replaces the flow's own, the phone still its send service")
    func configuredKeypad() throws {
        let config =
            "{keypad: {enabled: true, verify: {command: ['/bin/false']}, entry: {minLength: 4, maxLength: 5}, output: {line: 'GPIO26', pulseMs: 1500}}}"
        let desktop = try Desktop(["--config", "k.json5"], config: config)
        try desktop.run([(at(1), { " " }), (at(3), { desktop.code + enter }), (at(10), { "q" })])
        #expect(desktop.code.count == 5)  // 6 digits do not fit a field of 5
        #expect(desktop.frames.contains { $0.contains("│Code: _____     │") })
        let opened = try #require(desktop.door.first { $0.1 })
        let open = try #require(desktop.door.last.map { $0.0 - opened.0 })
        #expect(open <= .milliseconds(1_500) && open > .milliseconds(1_490))
    }

    @Test("with --mock-verify the scripted check decides: the phone gets the service's message, the program makes no code")
    func mockVerifyWithPhone() throws {
        let desktop = try Desktop(["--mock-verify", "reject@0.5"])
        try desktop.run([(at(1), { " " }), (at(3), { "123456" + enter }), (at(8), { "q" })])
        #expect(desktop.session.phone?.messages.map(\.text) == ["A code from the verification service"])
        #expect(desktop.frames.contains { $0.contains("│Wrong, 2 left   │") })
        #expect(desktop.door.allSatisfy { !$0.1 })
    }

    @Test("without a terminal on standard input the built binary's simulate says what to use instead and exits 64, drawing nothing")
    func noTerminal() throws {
        let result = try runBinary(["simulate"])
        #expect(result.status == 64)
        #expect(result.out.isEmpty)
        #expect(result.err == "simulate: standard input is not a terminal; use --headless --script for scripted runs\n")
    }

    @Test("the button-only simulator draws no phone and no door")
    func buttonOnly() throws {
        let desktop = try Desktop(["--button-only"])
        try desktop.run([(at(1), { " " }), (at(3), { "q" })])
        #expect(desktop.session.phone == nil)
        #expect(desktop.frames.contains { $0.contains("│Resend (59)     │") })
        #expect(desktop.frames.allSatisfy { !$0.contains("Phone") && !$0.contains("door") })
        #expect(desktop.frames.last?.contains("space/enter press   b bouncy press   q quit") == true)
    }
}

@Suite("Interactive keys with a keypad")
struct InteractiveKeypadAliasTests {
    @Test("with a keypad Enter taps # and Backspace (DEL or Ctrl-H) taps *; space stays the button")
    func enterAndBackspace() throws {
        let clock = ManualClock()
        let t = Instant.origin + .seconds(1)
        var source = KeyboardButton(
            keys: Person(clock: clock, [(at: t, text: { "\r\u{7F}\u{08} " })]), clock: clock, bounceKey: "b", clearHold: .seconds(1))
        var keys: [KeyEvent] = []
        while true {
            let inputs = try source.wait(until: nil)
            if inputs == [.stop] { break }
            for input in inputs {
                guard case .key(let event) = input else { Issue.record("unexpected \(input)"); return }
                keys.append(event)
            }
        }
        #expect(keys.filter { $0.edge == .pressed }.map(\.key) == [.pound, .star, .star, .button])
    }
}
