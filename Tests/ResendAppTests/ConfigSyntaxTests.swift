import HAL
import Testing
@testable import ResendApp

@Suite("Config file syntax: JSON5, and where it goes wrong")
struct ConfigSyntaxTests {
    @Test("a syntax error names the line and column of the first offending token, and exits 78", arguments: [
        // Missing comma between two members: points at the second key.
        ("{\n  lcd: {\n    address: 0x27\n    geometry: \"16x2\"\n  }\n}\n",
         "t.json5:4:5: syntax error: expected ',' or '}' after the value of \"address\" (in the object opened at line 2, column 8), found 'geometry'"),
        // Missing colon.
        ("{\n  lcd { bus: 1 }\n}",
         "t.json5:2:7: syntax error: expected ':' after the key \"lcd\", found '{'"),
        // Unterminated string: points at its opening quote.
        ("{\n  texts: { title: \"Verification },\n}\n",
         "t.json5:2:19: syntax error: unterminated string: no closing \" before the end of the line (to go on on the next line, end the line with \\)"),
        ("{ texts: { title: 'abc",
         "t.json5:1:19: syntax error: unterminated string: the file ends before its closing '"),
        // A misspelt literal.
        ("{\n  lcd: { backlight: tru },\n}",
         "t.json5:2:21: syntax error: unknown word \"tru\" (did you mean true?); a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"),
        ("{ lcd: { rom: A02 } }",
         "t.json5:1:15: syntax error: unknown word \"A02\"; a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"),
        // Trailing garbage after the top-level object.
        ("{ lcd: { bus: 1 } } }",
         "t.json5:1:21: syntax error: unexpected '}' after the end of the top-level value (a configuration file is one object: { ... })"),
        ("{ cooldown: { seconds: 60 } }\ncooldown: 30\n",
         "t.json5:2:1: syntax error: unexpected 'cooldown' after the end of the top-level value (a configuration file is one object: { ... })"),
        // Unbalanced brackets.
        ("{ policy: { cooldowns: [60, 120 } }",
         "t.json5:1:33: syntax error: expected ',' or ']' after item 2 of the list opened at line 1, column 24, found '}'"),
        ("{ lcd: { bus: 1 }\n",
         "t.json5:2:1: syntax error: the file ends but the object opened at line 1, column 1 is not closed with '}'"),
        ("{ lcd: { bus: 1 ] }",
         "t.json5:1:17: syntax error: expected ',' or '}' after the value of \"bus\" (in the object opened at line 1, column 8), found ']'"),
        // Two commas, or a comma where a key belongs.
        ("{ cooldown: { seconds: 60,, } }",
         "t.json5:1:27: syntax error: expected a key (a name or a string in quotes) or '}', found ','"),
        // Comments and numbers.
        ("{ /* cooldown: { seconds: 60 } }",
         "t.json5:1:3: syntax error: unterminated comment: this /* is never closed with */"),
        ("{ cooldown: { seconds: 060 } }",
         "t.json5:1:24: syntax error: bad number \"060\": a number must not start with 0 (write 0x... for hex)"),
        ("{ cooldown: { seconds: 1e400 } }",
         "t.json5:1:24: syntax error: number \"1e400\" is too large"),
        ("{ cooldown: { seconds: 60s } }",
         "t.json5:1:24: syntax error: bad number \"60s\""),
        ("{ lcd: { address: 0x } }",
         "t.json5:1:19: syntax error: bad number \"0x\": 0x needs hex digits"),
        // Inside strings.
        ("{ texts: { title: \"a\tb\" } }",
         "t.json5:1:21: syntax error: control character U+0009 inside a string; write it as an escape (\\t, \\n, \\u0009)"),
        ("{ texts: { title: 'a\\qb' } }",
         "t.json5:1:21: syntax error: invalid escape \\q; allowed: \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\xHH \\uHHHH"),
        // Nothing at all.
        ("", "t.json5:1:1: syntax error: the file has no value; a configuration file is one object: { ... }"),
        ("// only a comment\n", "t.json5:2:1: syntax error: the file has no value; a configuration file is one object: { ... }"),
        // Columns count characters, not bytes; CR LF ends a line once.
        ("{\r\n  texts: { title: \"Grüße\" }\r\n  lcd: {}\r\n}",
         "t.json5:3:3: syntax error: expected ',' or '}' after the value of \"texts\" (in the object opened at line 1, column 1), found 'lcd'"),
        ("{ texts: { title: \"ü\" x } }",
         "t.json5:1:23: syntax error: expected ',' or '}' after the value of \"title\" (in the object opened at line 1, column 10), found 'x'"),
    ])
    func syntaxErrorLocated(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
        #expect(outcome.out == [])
    }

    /// The scanner must accept all the decoder accepts (else a valid file would get a syntax
    /// error), and refuse all it refuses (else the user gets no line and column).
    @Test("the scanner and FoundationEssentials' decoder agree on what is JSON5", arguments: [
        ("{}", true), ("{a: 1}", true), ("{'a': 1, \"b\": 2,}", true), ("{a: [1, 2,],}", true),
        ("// c\n{a: 1 /* c */} // c", true), ("{a: 0x1F, b: +1, c: .5, d: 5., e: -Infinity, f: NaN, g: 1e3, h: 1E-2}", true),
        ("{$a_1: 1, ä: 2}", true), ("{a: 'it\\'s', b: \"\\u00e4\\x41\\n\\t\\/\"}", true), ("{a: '\\uD83D\\uDE00'}", true),
        ("{a: 'x\\\ny'}", true), ("\u{FEFF}{a: 1}", true), ("{a:\u{B}\u{C}1}", true), ("{a: null, b: true, c: false}", true),
        ("{a: 9223372036854775808}", true), ("{a: 0x7FFFFFFFFFFFFFFF}", true), ("{a: 1.7e308}", true), ("[1]", true),
        ("{a: 1,,}", false), ("{,}", false), ("{a: [,]}", false), ("{a: 1} /* x", false), ("{a: \"\t\"}", false),
        ("{a: 1e}", false), ("{a: '\\q'}", false), ("{a: '\\0'}", false), ("{a: '\\v'}", false), ("{a: '\\x4'}", false),
        ("{a: '\\u12'}", false), ("{1a: 1}", false), ("{a-b: 1}", false), ("{a: .e5}", false), ("{a: +-1}", false),
        ("{a: 01}", false), ("{a: 1_000}", false), ("{a: 0x1.5}", false), ("{a: Infinityx}", false), ("{a: truex}", false),
        ("{a: undefined}", false), ("{a: 'line\nbreak'}", false), ("{a:\u{A0}1}", false), ("{a:\u{2028}1}", false),
        ("{a: 1}}", false), ("{a: 1]", false), ("{a: 1e400}", false), ("{a: 0xFFFFFFFFFFFFFFFF}", false), ("", false),
        ("{a: -}", false), ("{a\u{7}: 1}", false),
    ])
    func scannerAgreesWithDecoder(text: String, valid: Bool) {
        let scanned = JSON5Scanner.scan(text)
        let decoded = JSONValue.decode(json5: text, outline: nil)
        #expect((decoded != nil) == valid, "decoder")
        if case .failure(let error) = scanned {
            #expect(!valid, "scanner refused valid JSON5 at \(error.line):\(error.column): \(error.message)")
        } else {
            #expect(valid, "scanner accepted what the decoder refuses")
        }
    }

    @Test("comments, trailing commas, single quotes, unquoted keys and hex numbers are accepted")
    func json5Features() throws {
        let text = """
            // a comment
            {
              /* a block
                 comment */
              'cooldown': { seconds: 0x78, },   // 120
              lcd: { address: 0x3F, geometry: '20x4', },
              texts: { title: 'It\\'s me', countdownLabel: "Again {s}", },
            }
            """
        let config = try DeviceConfig.parse(text: text, source: "t.json5")
        var expected = DeviceConfig()
        expected.cooldown.seconds = 120
        expected.lcd.address = .fixed(try #require(I2CAddress(0x3F)))
        expected.lcd.geometry = .lcd20x4
        expected.texts.title = "It's me"
        expected.texts.countdownLabel = "Again {s}"
        #expect(config == expected)
    }

    @Test("objects keep the order of the file, which the decoder's dictionary loses")
    func keyOrder() throws {
        let text = "{zeta: 1, alpha: {c: 1, a: 2, b: 3}, mid: [{y: 1, x: 2}], beta: 4}"
        guard case .success(let outline) = JSON5Scanner.scan(text) else {
            Issue.record("scanner refused valid JSON5")
            return
        }
        let tree = try #require(JSONValue.decode(json5: text, outline: outline))
        guard case .object(let members) = tree else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["zeta", "alpha", "mid", "beta"])
        guard case .object(let inner)? = tree["alpha"] else {
            Issue.record("alpha is not an object")
            return
        }
        #expect(inner.map(\.key) == ["c", "a", "b"])
        #expect(tree["mid"] == .array([.object([.init("y", .integer(1)), .init("x", .integer(2))])]))
    }

    @Test("numbers: whole ones become integers, others stay numbers")
    func numbers() throws {
        let tree = try #require(JSONValue.decode(json5: "{a: 60, b: 60.0, c: 1e3, d: 1.5, e: -0x10, f: Infinity}", outline: nil))
        #expect(tree["a"] == .integer(60))
        #expect(tree["b"] == .integer(60))
        #expect(tree["c"] == .integer(1000))
        #expect(tree["d"] == .number(1.5))
        #expect(tree["e"] == .integer(-16))
        #expect(tree["f"] == .number(.infinity))
    }
}
