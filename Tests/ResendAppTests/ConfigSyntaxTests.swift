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
        ("{a: -}", false), ("{a\u{7}: 1}", false), ("{a: '\\uD800'}", false), ("{a: '\\uDC00'}", false),
        ("{a: '\\uD83Dx'}", false), ("{a: '\\uD83D\\u0041'}", false), ("{'\\u0061': 1}", true),
        ("{a: 1e-, b: 1E+, c: .5e-}", true), ("{a: 1e-x}", false), ("\u{FEFF}\u{FEFF}{a: 1}", false), (" \u{FEFF}{a: 1}", false),
        ("{a: 0x23., b: [0x23.]}", true), ("{a: 0x1.0, b: 0x00.00}", true), ("{a: 0x1.5}", false), ("{a: 0x1.05}", false),
        ("{\\xdd: 1, a\\x41: 2}", true), ("{a\\x4: 1}", false), ("{a\\xac: 1}", false), ("{a\\x31: 1}", true), ("{\\x31: 1}", true),
        ("{a\\u0020: 1}", false), ("{a: 0x23.e}", false), ("{a: 0x23..}", false), ("{a: 0x23e}", true),
        ("{\\u0061: 1}", true), ("{a\\u0062: 1}", true), ("{ab\\c: 1}", false), ("{a\\u00: 1}", false),
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

    @Test("a number the decoder would crash on is refused by the scanner first, with its place", arguments: [
        ("{lcd: {address: 0x0x27}}", "t.json5:1:17: syntax error: bad number \"0x0x27\""),
        ("{lcd: {address: 0x0X27}}", "t.json5:1:17: syntax error: bad number \"0x0X27\""),
        ("{lcd: {bus: -0x0x1}}", "t.json5:1:13: syntax error: bad number \"-0x0x1\""),
    ])
    func decoderTrapAvoided(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
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

@Suite("Config file syntax: mutations of the example file")
struct ConfigMutationTests {
    /// SplitMix64: a fixed seed gives the same mutations on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let dense = """
        {button: {line: "GPIO5", bias: 'as-is', activeLow: false, debounceMs: 0x23, kernelDebounceMs: null},
         lcd: {address: "0x3f", geometry: "20x4", wiring: {rs: 6, rw: 5, enable: 4, backlight: 7, d4: 0, d5: 1, d6: 2, d7: 3,},},
         texts: {title: 'It\\'s', countdownLabel: "Again ({s})", resendLabel: "\\u00e4"}, /* c */ cooldown: {seconds: 1e2},
         send: {command: ["/bin/x", "-v"], environment: {A_B: "1"}}, policy: {cooldowns: [60, +120, 300.0]}, // end
        }
        """

    @Test("for single-character mutations of config files, the scanner and the decoder agree (so a refused file always gets a line and column, and a valid one never a false error)", arguments: [
        ("example", 150, UInt64(42)), ("dense", 800, UInt64(7)),
    ])
    func mutationsAgree(base: String, count: Int, seed: UInt64) throws {
        let text = base == "dense" ? Self.dense : try #require(readRepositoryFile("board/config.example.json5"))
        #expect(JSONValue.decode(json5: text, outline: nil) != nil)
        let original = Array(text.unicodeScalars)
        // Characters that make or break JSON5, and some the decoder has opinions about.
        let pieces: [String] = [
            "{", "}", "[", "]", ",", ":", "\"", "'", "\\", "/", "*", "\n", " ", "x", "0", "-", ".", "e",
            "\u{9}", "ß", "u", "\u{A0}", "\r", "+", "I", "N", "t", "0x", "\\u", "\\x", "E", "\u{FEFF}",
            "\u{2028}", "$", "_", "1", "9", "\u{0}", "\u{7F}", "😀", "é",
        ]
        var generator = SeededGenerator(state: seed)
        var refused = 0
        for _ in 0..<count {
            var scalars = original
            let index = Int.random(in: 0..<scalars.count, using: &generator)
            let piece = pieces.randomElement(using: &generator)!.unicodeScalars
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: scalars.remove(at: index)
            case 1: scalars.insert(contentsOf: piece, at: index)
            default: scalars.replaceSubrange(index...index, with: piece)
            }
            let mutated = String(String.UnicodeScalarView(scalars))
            // FoundationEssentials (Swift 6.3) traps on 0x0x... and 0x0X... when decoding an Int;
            // the product never lets it see them (see decoderTrapAvoided), nor does this test.
            if mutated.contains("0x0x") || mutated.contains("0x0X") { continue }
            let decoded = JSONValue.decode(json5: mutated, outline: nil) != nil
            let scanned: Bool
            if case .success = JSON5Scanner.scan(mutated) { scanned = true } else { scanned = false }
            let around = String(String.UnicodeScalarView(scalars[max(0, index - 30)..<min(scalars.count, index + 30)]))
            #expect(scanned == decoded, "scanner \(scanned), decoder \(decoded) for a mutation at \(index): \(quoted(around))")
            if !decoded { refused += 1 }
        }
        // The mutations must exercise both sides.
        #expect(refused > count / 10)
        #expect(refused < count * 9 / 10)
    }
}
