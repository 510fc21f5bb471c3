import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice
import Testing

/// `display.*` and `config check` against the OLED's font: the Unifont fixture stands in for
/// /usr/share/unifont/unifont.hex.
@Suite("Config file: the OLED display and its font")
struct OLEDConfigTests {
    private let font = String(decoding: fileBytes(unifontFixturePath)!, as: UTF8.self)

    private func check(_ text: String, font: String? = nil) -> CLIOutcome {
        var files = ["t.json5": text]
        files["/fonts/u.hex"] = font ?? self.font
        return runCommand(["config", "check", "t.json5"], files: files)
    }

    @Test("the Chinese example passes config check with the fixture font")
    func chineseExample() throws {
        let example = try #require(fileBytes(repositoryFile("board/examples/chinese.json5")))
        let text = String(decoding: example, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.contains("font:") ? #"  display: { kind: "ssd1306", address: 0x3C, font: "/fonts/u.hex" },"# : String($0) }.joined(
                separator: "\n")
        let outcome = check(text)
        #expect(outcome.code == .ok, "\(outcome.err)")
        #expect(outcome.out.first?.contains("OLED ssd1306 128x64 on i2c-1 at 0x3C, font /fonts/u.hex") == true)
    }

    @Test("a character the font lacks: exit 78 naming the text, the character and its code point")
    func missingGlyph() {
        let outcome = check(#"{display: {kind: "sh1106", font: "/fonts/u.hex"}, texts: {title: "门禁验证"}}"#)
        #expect(outcome.code == .config)
        #expect(outcome.err == [#"t.json5: texts.title: "门禁验证" has '门' (U+95E8), which the font /fonts/u.hex has no glyph for"#])
    }

    @Test("a combining mark: exit 78 naming the text, the mark and its code point, though the font has a glyph for it")
    func combiningMark() {
        // Unifont draws U+0301 on its own cell (over a dotted circle); the layout puts one glyph
        // after the other, so "é" as e + U+0301 would show as two cells.
        let outcome = check(#"{display: {kind: "ssd1306", font: "/fonts/u.hex"}, texts: {title: "Cafe\u0301"}}"#)
        #expect(outcome.code == .config)
        #expect(
            outcome.err == [
                "t.json5: texts.title: \"Cafe\u{301}\" has the combining mark U+0301, which the OLED cannot place over the character before it (write the precomposed character, e.g. 'é' U+00E9)"
            ])
    }

    @Test("a text wider than 128 pixels: exit 78 with its width")
    func tooWide() {
        let outcome = check(#"{display: {kind: "ssd1306", font: "/fonts/u.hex"}, texts: {sendLabel: "获取验证码获取验证码"}}"#)
        #expect(outcome.code == .config)
        #expect(outcome.err == [#"t.json5: texts.sendLabel: "获取验证码获取验证码" is 160 pixels wide; the ssd1306 glass has 128"#])
    }

    @Test("a malformed font file: exit 78 naming its line; a missing one names the package")
    func badFont() {
        let bad = check(#"{display: {kind: "ssd1306", font: "/fonts/u.hex"}}"#, font: "0041:00000000000000000000000000000000\n0042:xyz\n")
        #expect(bad.code == .config)
        #expect(
            bad.err == [
                "t.json5: display.font: /fonts/u.hex: not a GNU Unifont .hex file: line 2: the bitmap has 3 hex digits (8x16 glyphs have 32, 16x16 glyphs 64)"
            ])
        let missing = check(#"{display: {kind: "ssd1306", font: "/fonts/none.hex"}}"#)
        #expect(missing.code == .config)
        #expect(
            missing.err == ["t.json5: display.font: /fonts/none.hex: no such file (Debian's package unifont installs /usr/share/unifont/unifont.hex)"]
        )
    }

    @Test("bad display values name the key and what is allowed")
    func badValues() {
        #expect(
            configProblems(#"{display: {address: 0x27}}"#) == [": display.address: expected 0x3C (SA0 low) or 0x3D (SA0 high), got the number 39"])
        #expect(
            configProblems(#"{display: {font: "unifont.hex"}}"#) == [
                #": display.font: "unifont.hex" is not an absolute path; allowed: a path such as "/usr/share/unifont/unifont.hex""#
            ])
        #expect(configProblems(#"{display: {contrast: 256}}"#) == [": display.contrast: 256 is out of range; allowed: a level from 0 to 255"])
        // A kind the file got wrong: one line, not one per text against the ROM.
        #expect(
            configProblems(#"{display: {kind: "sh1107"}, texts: {title: "短信验证"}}"#) == [
                #": display.kind: "sh1107" is not allowed; use one of "hd44780", "ssd1306", "sh1106" (did you mean "sh1106"?)"#
            ])
    }
}

@Suite("Simulator with the OLED: the glass read as text, and its picture")
struct OLEDSimulatorTests {
    @Test("simulate --headless with display.kind sh1106 prints what a person reads on the glass, and saves a PGM")
    func headlessOLED() throws {
        let directory = TemporaryDirectory()
        let config = directory.write(
            "c.json5",
            #"{display: {kind: "sh1106", font: "\#(unifontFixturePath)"}, cooldown: {seconds: 3}, texts: {title: "短信验证", sendLabel: "获取验证码", countdownLabel: "重新获取({s})", resendLabel: "重新获取"}}"#
        )
        let picture = directory.subpath("glass.pgm")
        let outcome = runCommand(["simulate", "--headless", "--config", config, "--script", "press@1 end@10", "--picture", picture])
        #expect(outcome.code == .ok, "\(outcome.err)")
        #expect(
            outcome.out.filter { $0.contains("screen") } == [
                "0.000 screen |短信验证|获取验证码|||", "1.020 screen |短信验证|重新获取(03)|||", "2.020 screen |短信验证|重新获取(02)|||",
                "3.020 screen |短信验证|重新获取(01)|||", "4.020 screen |短信验证|重新获取|||", "10.000 screen |Stopped||||",
            ])
        #expect(!outcome.out.contains { $0.hasPrefix("violation") })
        let bytes = try #require(fileBytes(picture))
        #expect(Array(bytes.prefix(15)) == Array("P5\n512 256\n255\n".utf8))
    }

    @Test("board/examples/chinese-keypad.json5 end to end: the Chinese prompt and the field 验证码: with its blank and masked cells read off the glass")
    func chineseKeypadExample() throws {
        let directory = TemporaryDirectory()
        let example = try #require(readRepositoryFile("board/examples/chinese-keypad.json5"))
        let config = directory.write(
            "c.json5",
            example.split(separator: "/usr/share/unifont/unifont.hex", omittingEmptySubsequences: false).joined(separator: unifontFixturePath))
        let outcome = runCommand(["simulate", "--headless", "--config", config, "--script", "press@1 keys@3:123 end@4"])
        #expect(outcome.code == .ok, "\(outcome.err)")
        let screens = outcome.out.filter { $0.contains(" screen ") }
        #expect(screens.first == "0.000 screen |短信验证|获取验证码|||")
        #expect(screens.contains("1.020 screen |短信验证|重新获取(60)|请输入验证码|验证码: ______|"), "\(screens)")
        #expect(screens.contains { $0.hasSuffix(" screen |短信验证|重新获取(58)|请输入验证码|验证码: ***___|") }, "\(screens)")
        #expect(screens.last == "4.000 screen |已停止||||")
        #expect(!outcome.out.contains { $0.hasPrefix("violation") })
    }

    @Test("--picture without an OLED is a usage error")
    func pictureNeedsOLED() {
        let outcome = runCommand(["simulate", "--headless", "--script", "press@1", "--picture", "/tmp/x.pgm"])
        #expect(outcome.code == .usage)
        #expect(outcome.err == [#"simulate: --picture needs --headless and an OLED (display.kind "ssd1306" or "sh1106" in the configuration)"#])
    }

    @Test("the code field's blank cells show on the OLED as the font's '_', not as dark cells")
    func blankFieldCells() throws {
        let config = try DeviceConfig.parse(
            text: #"""
                {display: {kind: "ssd1306", font: "/fonts/u.hex"}, lcd: {geometry: "20x4"},
                 keypad: {enabled: true, entry: {minLength: 6, maxLength: 6}, verify: {command: ["/bin/true"]}, texts: {fieldPrefix: "验证码: "}}}
                """#, source: "t.json5")
        let fixture = String(decoding: try #require(fileBytes(unifontFixturePath)), as: UTF8.self)
        let loaded = try config.loadOLEDFont(source: "t.json5", read: { $0 == "/fonts/u.hex" ? .text(fixture) : .missing })
        let font = try #require(loaded)
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let emulator = OLEDEmulator(chip: .ssd1306)
        let address = I2CAddress(constant: 0x3C)
        bus.attach(emulator, at: address)
        var display = OLEDDisplay(oled: SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: address, controller: .ssd1306), font: font)
        try display.start(now: clock.now())
        // Two digits typed (masked), four cells still to type.
        let lines = ["Verification", "Resend (60)", "Enter code", "验证码: **____"]
        _ = display.show(ScreenText(lines: lines), now: clock.now())
        #expect(emulator.rows == ReferenceFont(path: unifontFixturePath).glass(lines))
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }
}
