import ResendConfig
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
