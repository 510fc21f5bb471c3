import CharacterLCD
import Testing

@Suite("Unifont .hex parser")
struct UnifontTests {
    @Test("the fixture parses: an 8-wide digit and a 16-wide hanzi with the file's rows")
    func fixture() throws {
        let font = try Unifont(parsing: fileBytes(unifontFixturePath)!)
        let reference = ReferenceFont(path: unifontFixturePath)
        #expect(font.glyphs.count == reference.glyphs.count)
        for scalar in "5获".unicodeScalars {
            let glyph = try #require(font.glyph(for: scalar))
            let rows = try #require(reference.glyphs[scalar.value])
            #expect(glyph.width == rows[0].count)
            for y in 0..<16 {
                #expect((0..<glyph.width).map { glyph.pixel(x: $0, y: y) } == rows[y])
            }
        }
        #expect(font.width(of: "重新获取(59)") == 96)
        #expect(font.firstMissing(in: "门禁") == "门")
    }

    @Test("wanted keeps only those code points, but the whole file is still checked")
    func wanted() throws {
        let font = try Unifont(parsing: fileBytes(unifontFixturePath)!, wanted: [0x41, 0x83B7])
        #expect(font.glyphs.keys.sorted() == [0x41, 0x83B7])
        let bad = Array("0041:00000000000000000000000000000000\nzz\n".utf8)
        #expect(throws: UnifontError(line: 2, reason: .missingColon)) { try Unifont(parsing: bad, wanted: [0x41]) }
    }

    @Test(
        "a malformed line is an error naming the line",
        arguments: [
            ("0041:0000", UnifontError(line: 1, reason: .badBitmapLength(4))),
            ("41:00000000000000000000000000000000", UnifontError(line: 1, reason: .badCodePoint)),
            ("110000:00000000000000000000000000000000", UnifontError(line: 1, reason: .badCodePoint)),
            ("0041:0000000000000000000000000000000G", UnifontError(line: 1, reason: .badHexDigit)),
            ("\n0041:00000000000000000000000000000000\r\n0041:00000000000000000000000000000000", UnifontError(line: 3, reason: .duplicate(0x41))),
            ("0041 00000000000000000000000000000000", UnifontError(line: 1, reason: .missingColon)),
        ])
    func malformed(text: String, error: UnifontError) {
        #expect(throws: error) { try Unifont(parsing: Array(text.utf8)) }
    }

    @Test("messages name the line and what is wrong")
    func messages() {
        #expect(
            UnifontError(line: 3, reason: .badBitmapLength(31)).message
                == "line 3: the bitmap has 31 hex digits (8x16 glyphs have 32, 16x16 glyphs 64)")
        #expect(UnifontError(line: 9, reason: .duplicate(0x4E2D)).message == "line 9: U+4E2D is defined twice")
        #expect(Unifont.codePointText(0x1F600) == "1F600")
        #expect(Unifont.codePointText(0x41) == "0041")
    }

    @Test("the system's unifont.hex parses whole (skipped without Debian's unifont package)", .enabled(if: systemUnifontPath != nil))
    func systemFont() throws {
        let font = try Unifont(parsing: fileBytes(systemUnifontPath!, limit: 8 << 20)!, wanted: [0x83B7, 0x41])
        #expect(font.glyph(for: "获")?.width == 16)
        #expect(font.glyph(for: "A")?.width == 8)
    }
}
