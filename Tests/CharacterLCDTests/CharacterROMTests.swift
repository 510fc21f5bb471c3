import CharacterLCD
import Testing

struct CharacterROMTests {
    @Test(
        "characters each ROM shows map to their codes",
        arguments: [
            (CharacterROM.a00, "Resend (59)", [0x52, 0x65, 0x73, 0x65, 0x6E, 0x64, 0x20, 0x28, 0x35, 0x39, 0x29]),
            (.a00, " }", [0x20, 0x7D]),
            (.a00, "¥", [0x5C]),
            (.a00, "→←", [0x7E, 0x7F]),
            (.a00, "°", [0xDF]),
            (.a00, "｡ｱﾝﾟ", [0xA1, 0xB1, 0xDD, 0xDF]),
            (.a00, "äöüñ", [0xE1, 0xEF, 0xF5, 0xEE]),
            (.a00, "αβμµπΣΩΩ÷█", [0xE0, 0xE2, 0xE4, 0xE4, 0xF7, 0xF6, 0xF4, 0xF4, 0xFD, 0xFF]),
            (.a00, "千万円", [0xFA, 0xFB, 0xFC]),
            (.a00, "", []),
            (.a02, "Resend (59)", [0x52, 0x65, 0x73, 0x65, 0x6E, 0x64, 0x20, 0x28, 0x35, 0x39, 0x29]),
            (.a02, "\\~⌂", [0x5C, 0x7E, 0x7F]),
            (.a02, "¡¥§©«»¿", [0xA1, 0xA5, 0xA7, 0xA9, 0xAB, 0xBB, 0xBF]),
            (.a02, "ÄÖÜßäöüé", [0xC4, 0xD6, 0xDC, 0xDF, 0xE4, 0xF6, 0xFC, 0xE9]),
            (.a02, "ÿ÷×µμ", [0xFF, 0xF7, 0xD7, 0xB5, 0xB5]),
            (.a02, "ƒ´ωΦ", [0xA8, 0xAF, 0xB8, 0xD8]),
            (.a02, "БЭЮЯ", [0x80, 0x8F, 0xAC, 0xAD]),
            (.a02, "↑↓→←", [0x18, 0x19, 0x1A, 0x1B]),
        ] as [(CharacterROM, String, [UInt8])])
    func accepted(rom: CharacterROM, text: String, codes: [UInt8]) throws {
        #expect(try rom.encode(text) == codes)
    }

    @Test(
        "the first character a ROM cannot show is named with its index",
        arguments: [
            (CharacterROM.a00, "C:\\dir", "\\", 2),  // 0x5C is the yen sign
            (.a00, "~", "~", 0),  // 0x7E is the right arrow
            (.a00, "café", "é", 3),
            (.a00, "cafe\u{301}", "\u{301}", 4),  // counted in Unicode scalars
            (.a00, "Straße", "ß", 4),
            (.a00, "€", "€", 0),
            (.a00, "\u{0}", "\u{0}", 0),  // CGRAM codes are not reachable as text
            (.a00, "\u{7}", "\u{7}", 0),
            (.a00, "a\nb", "\n", 1),
            (.a00, "\u{7F}", "\u{7F}", 0),
            (.a00, "Ж", "Ж", 0),
            (.a02, "20°C", "°", 2),  // A02 0xB0 is not a degree sign
            (.a02, "Øre", "Ø", 0),
            (.a02, "¨", "¨", 0),
            (.a02, "ｱ", "ｱ", 0),
            (.a02, "€", "€", 0),
            (.a02, "\u{7F}", "\u{7F}", 0),
            (.a02, "\u{3}", "\u{3}", 0),
            (.a02, "ok ✓", "✓", 3),
        ] as [(CharacterROM, String, Unicode.Scalar, Int)])
    func rejected(rom: CharacterROM, text: String, character: Unicode.Scalar, index: Int) {
        #expect(throws: UnsupportedCharacter(character: character, index: index)) {
            try rom.encode(text)
        }
    }

    @Test("A00 maps printable ASCII to itself except backslash and tilde")
    func a00ASCII() {
        for value in UInt8(0x20)...0x7E {
            let scalar = Unicode.Scalar(value)
            let expected: UInt8? = (value == 0x5C || value == 0x7E) ? nil : value
            #expect(CharacterROM.a00.code(for: scalar) == expected, "U+\(String(value, radix: 16))")
        }
    }

    @Test("A02 maps printable ASCII to itself")
    func a02ASCII() {
        for value in UInt8(0x20)...0x7E {
            #expect(CharacterROM.a02.code(for: Unicode.Scalar(value)) == value)
        }
    }

    @Test("A00 maps the half-width katakana block U+FF61...U+FF9F onto 0xA1...0xDF in order")
    func katakanaBlock() throws {
        for offset in 0...0x3E {
            let scalar = try #require(Unicode.Scalar(0xFF61 + offset))
            #expect(CharacterROM.a00.code(for: scalar) == UInt8(0xA1 + offset))
        }
        #expect(CharacterROM.a00.code(for: "\u{FF60}") == nil)
        #expect(CharacterROM.a00.code(for: "\u{FFA0}") == nil)
    }

    @Test("A02 shows the Latin-1 supplement at its own code except where its ROM has another glyph")
    func a02Latin1() throws {
        let elsewhere: Set<UInt32> = [0xA8, 0xAC, 0xAD, 0xAF, 0xB0, 0xB4, 0xB8, 0xD8]
        for value in UInt32(0xA1)...0xFF {
            let scalar = try #require(Unicode.Scalar(value))
            let code = CharacterROM.a02.code(for: scalar)
            if elsewhere.contains(value) {
                #expect(code != UInt8(value), "U+\(String(value, radix: 16))")
            } else {
                #expect(code == UInt8(value), "U+\(String(value, radix: 16))")
            }
        }
    }

    @Test("custom glyph scalars encode to their CGRAM codes and win over the ROM")
    func customGlyphs() throws {
        #expect(try CharacterROM.a00.encode("I♥U", glyphs: ["♥": 0]) == [0x49, 0x00, 0x55])
        #expect(try CharacterROM.a00.encode("a→b", glyphs: ["→": 7]) == [0x61, 0x07, 0x62])
        #expect(throws: UnsupportedCharacter(character: "♦", index: 1)) {
            try CharacterROM.a00.encode("♥♦", glyphs: ["♥": 0])
        }
    }

    @Test("ROMs are named by their datasheet suffix")
    func names() {
        #expect(CharacterROM(rawValue: "A00") == .a00)
        #expect(CharacterROM(rawValue: "A02") == .a02)
        #expect(CharacterROM(rawValue: "a00") == nil)
    }
}
