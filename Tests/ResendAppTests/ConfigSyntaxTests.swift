import HAL
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

@Suite("Config file syntax: JSON5, and where it goes wrong")
struct ConfigSyntaxTests {
    @Test(
        "a syntax error names the line and column of the first offending token, and exits 78",
        arguments: [
            // Missing comma between two members: points at the second key.
            (
                "{\n  lcd: {\n    address: 0x27\n    geometry: \"16x2\"\n  }\n}\n",
                "t.json5:4:5: syntax error: expected ',' or '}' after the value of \"address\" (in the object opened at line 2, column 8), found 'geometry'"
            ),
            // Missing colon.
            (
                "{\n  lcd { bus: 1 }\n}",
                "t.json5:2:7: syntax error: expected ':' after the key \"lcd\", found '{'"
            ),
            // Unterminated string: points at its opening quote.
            (
                "{\n  texts: { title: \"Verification },\n}\n",
                "t.json5:2:19: syntax error: unterminated string: no closing \" before the end of the line (to go on on the next line, end the line with \\)"
            ),
            (
                "{ texts: { title: 'abc",
                "t.json5:1:19: syntax error: unterminated string: the file ends before its closing '"
            ),
            // A misspelt literal.
            (
                "{\n  lcd: { backlight: tru },\n}",
                "t.json5:2:21: syntax error: unknown word \"tru\" (did you mean true?); a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"
            ),
            (
                "{ lcd: { rom: A02 } }",
                "t.json5:1:15: syntax error: unknown word \"A02\"; a value is a string in quotes, a number, true, false, null, a list [...] or an object {...}"
            ),
            // Trailing garbage after the top-level object.
            (
                "{ lcd: { bus: 1 } } }",
                "t.json5:1:21: syntax error: unexpected '}' after the end of the top-level value (a configuration file is one object: { ... })"
            ),
            (
                "{ cooldown: { seconds: 60 } }\ncooldown: 30\n",
                "t.json5:2:1: syntax error: unexpected 'cooldown' after the end of the top-level value (a configuration file is one object: { ... })"
            ),
            // Unbalanced brackets.
            (
                "{ policy: { cooldowns: [60, 120 } }",
                "t.json5:1:33: syntax error: expected ',' or ']' after item 2 of the list opened at line 1, column 24, found '}'"
            ),
            (
                "{ lcd: { bus: 1 }\n",
                "t.json5:2:1: syntax error: the file ends but the object opened at line 1, column 1 is not closed with '}'"
            ),
            (
                "{ lcd: { bus: 1 ] }",
                "t.json5:1:17: syntax error: expected ',' or '}' after the value of \"bus\" (in the object opened at line 1, column 8), found ']'"
            ),
            // Two commas, or a comma where a key belongs.
            (
                "{ cooldown: { seconds: 60,, } }",
                "t.json5:1:27: syntax error: expected a key (a name or a string in quotes) or '}', found ','"
            ),
            // Comments and numbers.
            (
                "{ /* cooldown: { seconds: 60 } }",
                "t.json5:1:3: syntax error: unterminated comment: this /* is never closed with */"
            ),
            (
                "{ cooldown: { seconds: 060 } }",
                "t.json5:1:24: syntax error: bad number \"060\": a number must not start with 0 (write 0x... for hex)"
            ),
            (
                "{ cooldown: { seconds: 1e400 } }",
                "t.json5:1:24: syntax error: number \"1e400\" is too large"
            ),
            (
                "{ cooldown: { seconds: 60s } }",
                "t.json5:1:24: syntax error: bad number \"60s\""
            ),
            (
                "{ lcd: { address: 0x } }",
                "t.json5:1:19: syntax error: bad number \"0x\": 0x needs hex digits"
            ),
            // Inside strings.
            (
                "{ texts: { title: \"a\tb\" } }",
                "t.json5:1:21: syntax error: control character U+0009 inside a string; write it as an escape (\\t, \\n, \\u0009)"
            ),
            (
                "{ texts: { title: 'a\\qb' } }",
                "t.json5:1:21: syntax error: invalid escape \\q; allowed: \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\v \\xHH \\uHHHH, or \\ at the end of a line"
            ),
            // Nothing at all.
            ("", "t.json5:1:1: syntax error: the file has no value; a configuration file is one object: { ... }"),
            ("// only a comment\n", "t.json5:2:1: syntax error: the file has no value; a configuration file is one object: { ... }"),
            // Columns count characters, not bytes; CR LF ends a line once.
            (
                "{\r\n  texts: { title: \"Grüße\" }\r\n  lcd: {}\r\n}",
                "t.json5:3:3: syntax error: expected ',' or '}' after the value of \"texts\" (in the object opened at line 1, column 1), found 'lcd'"
            ),
            (
                "{ texts: { title: \"ü\" x } }",
                "t.json5:1:23: syntax error: expected ',' or '}' after the value of \"title\" (in the object opened at line 1, column 10), found 'x'"
            ),
        ])
    func syntaxErrorLocated(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
        #expect(outcome.out == [])
    }

    @Test(
        "JSON5 as the specification has it is accepted; what it refuses is refused",
        arguments: [
            ("{}", true), ("{a: 1}", true), ("{'a': 1, \"b\": 2,}", true), ("{a: [1, 2,],}", true),
            ("// c\n{a: 1 /* c */} // c", true), ("{a: 0x1F, b: +1, c: .5, d: 5., e: -Infinity, f: NaN, g: 1e3, h: 1E-2}", true),
            ("{$a_1: 1, ä: 2}", true), ("{a: 'it\\'s', b: \"\\u00e4\\x41\\n\\t\\/\\v\"}", true), ("{a: '\\uD83D\\uDE00'}", true),
            ("{a: 'x\\\ny'}", true), ("\u{FEFF}{a: 1}", true), ("{a:\u{B}\u{C}1}", true), ("{a: null, b: true, c: false}", true),
            ("{a: 9223372036854775808}", true), ("{a: 0x7FFFFFFFFFFFFFFF}", true), ("{a: 1.7e308}", true), ("[1]", true),
            ("{a: 0xFFFFFFFFFFFFFFFFFFFF}", true), ("{a:\u{A0}1}", true), ("{a:\u{2028}1\u{2029}}", true), ("{a: 'x\u{2028}y'}", true),
            (" \u{FEFF}{a: 1}\u{FEFF}", true), ("{\\u0061: 1}", true), ("{a\\u0062: 1}", true), ("{a\u{301}: 1}", true),
            ("{a: 1,,}", false), ("{,}", false), ("{a: [,]}", false), ("{a: 1} /* x", false), ("{a: \"\t\"}", false),
            ("{a: 1e}", false), ("{a: '\\q'}", false), ("{a: '\\0'}", false), ("{a: '\\01'}", false), ("{a: '\\1'}", false),
            ("{a: '\\x4'}", false), ("{a: '\\u12'}", false), ("{1a: 1}", false), ("{a-b: 1}", false), ("{a: .e5}", false),
            ("{a: +-1}", false), ("{a: 01}", false), ("{a: 1_000}", false), ("{a: 0x1.5}", false), ("{a: Infinityx}", false),
            ("{a: truex}", false), ("{a: undefined}", false), ("{a: 'line\nbreak'}", false), ("{a: 1}}", false), ("{a: 1]", false),
            ("{a: 1e400}", false), ("", false), ("{a: -}", false), ("{a\u{7}: 1}", false), ("{a: '\\uD800'}", false),
            ("{a: '\\uDC00'}", false), ("{a: '\\uD83Dx'}", false), ("{a: '\\uD83D\\u0041'}", false), ("{a: 1e-}", false),
            ("{a: 1E+}", false), ("{a: 0x23.}", false), ("{a: 0x1.0}", false), ("{a\\x41: 1}", false), ("{\\x31: 1}", false),
            ("{\\u0031: 1}", false), ("{a\\u0020: 1}", false), ("{ab\\c: 1}", false), ("{a\\u00: 1}", false), ("{a: 0x23e}", true),
            ("{a: '\\x00'}", false), ("{a: '\\u0000'}", false), ("{a: 'x\u{0}'}", false), ("{\u{0}: 1}", false),
        ])
    func json5Grammar(text: String, valid: Bool) {
        switch JSON5Parser.parse(text) {
        case .success:
            #expect(valid, "accepted what JSON5 (or this configuration) refuses")
        case .failure(let error):
            #expect(!valid, "refused valid JSON5 at \(error.line):\(error.column): \(error.message)")
        }
    }

    @Test(
        "every JSON5 feature gives the value the specification says",
        arguments: [
            ("{a: 'single', b: \"double\"}", JSONValue.object([.init("a", .string("single")), .init("b", .string("double"))])),
            (
                "{'quoted key': 1, \"k\": 2, $_x9: 3,}",
                .object([.init("quoted key", .integer(1)), .init("k", .integer(2)), .init("$_x9", .integer(3))])
            ),
            ("[1, 2, ] // trailing comma and comment", .array([.integer(1), .integer(2)])),
            (
                "/* block */ [0x1F, 0XfF, -0x10, +7, .5, 5., 1e3, 2E+2, 60.0, 1.5e1, 120e-1, -0, 0.000e9]",
                .array([
                    .integer(31), .integer(255), .integer(-16), .integer(7), .number(.init(text: ".5", isWhole: false)), .integer(5),
                    .integer(1000), .integer(200), .integer(60), .integer(15), .integer(12), .integer(0), .integer(0),
                ])
            ),
            (
                "[Infinity, -Infinity, +Infinity, NaN, -NaN, 1.25]",
                .array([
                    .number(.init(text: "Infinity", isWhole: false)), .number(.init(text: "-Infinity", isWhole: false)),
                    .number(.init(text: "+Infinity", isWhole: false)), .number(.init(text: "NaN", isWhole: false)),
                    .number(.init(text: "-NaN", isWhole: false)), .number(.init(text: "1.25", isWhole: false)),
                ])
            ),
            // Whole numbers within 32 bits are integers on every architecture; beyond, they keep their text.
            (
                "[2147483647, -2147483648, 2147483648, -0x80000001, 0x7FFFFFFF, 2.147483647e9, 1e19]",
                .array([
                    .integer(2_147_483_647), .integer(-2_147_483_648), .number(.init(text: "2147483648", isWhole: true)),
                    .number(.init(text: "-0x80000001", isWhole: true)), .integer(0x7FFF_FFFF), .integer(2_147_483_647),
                    .number(.init(text: "1e19", isWhole: true)),
                ])
            ),
            (
                "[9223372036854775808, 0xFFFFFFFFFFFFFFFFFF, 1e308]",
                .array([
                    .number(.init(text: "9223372036854775808", isWhole: true)), .number(.init(text: "0xFFFFFFFFFFFFFFFFFF", isWhole: true)),
                    .number(.init(text: "1e308", isWhole: true)),
                ])
            ),
            ("['\\' \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\v']", .array([.string("' \" \\ / \u{8} \u{C} \n \r \t \u{B}")])),
            ("['\\x41\\u00e4\\uD83D\\uDE00\\u2028']", .array([.string("Aä😀\u{2028}")])),
            // Line continuations add nothing, whatever ends the line.
            ("['one \\\ntwo \\\r\nthree \\\rfour \\\u{2028}five']", .array([.string("one two three four five")])),
            (
                "{\\u0061b\\u00e4: true, ä\u{301}: false, null: null}",
                .object([
                    .init("abä", .bool(true)), .init("ä\u{301}", .bool(false)), .init("null", .null),
                ])
            ),
            ("\u{FEFF}\u{A0}\u{2003}{a\u{3000}:\u{2029}1}\u{FEFF}", .object([.init("a", .integer(1))])),
        ])
    func json5Values(text: String, expected: JSONValue) {
        switch JSON5Parser.parse(text) {
        case .success(let document):
            #expect(document.value == expected)
        case .failure(let error):
            Issue.record("refused at \(error.line):\(error.column): \(error.message)")
        }
    }

    @Test(
        "a number the old decoder crashed on is a syntax error with its place",
        arguments: [
            ("{lcd: {address: 0x0x27}}", "t.json5:1:17: syntax error: bad number \"0x0x27\""),
            ("{lcd: {address: 0x0X27}}", "t.json5:1:17: syntax error: bad number \"0x0X27\""),
            ("{lcd: {bus: -0x0x1}}", "t.json5:1:13: syntax error: bad number \"-0x0x1\""),
            ("{lcd: {bus: 0x23.}}", "t.json5:1:13: syntax error: bad number \"0x23.\""),
            ("{lcd: {bus: 1e-}}", "t.json5:1:13: syntax error: bad number \"1e-\": the exponent needs digits"),
        ])
    func badNumbers(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
    }

    @Test(
        "NUL in a string is refused with its line and column: no path, argument or text can carry it",
        arguments: [
            ("{texts: {title: 'a\\0b'}}", "t.json5:1:19: syntax error: \\0 is NUL (U+0000), which no file name, argument or display text can carry"),
            (
                "{texts: {title: 'a\\x00b'}}",
                "t.json5:1:19: syntax error: \\x00 is NUL (U+0000), which no file name, argument or display text can carry"
            ),
            (
                "{\n  stateFile: \"/x\\u0000\"}",
                "t.json5:2:17: syntax error: \\u0000 is NUL (U+0000), which no file name, argument or display text can carry"
            ),
            (
                "{texts: {title: 'a\u{0}b'}}",
                "t.json5:1:19: syntax error: NUL character (U+0000) inside a string; no file name, argument or display text can carry it"
            ),
            (
                "{send: {command: ['\\01']}}",
                "t.json5:1:20: syntax error: invalid escape \\0 followed by a digit (JSON5 has no octal escapes); allowed: \\\" \\' \\\\ \\/ \\b \\f \\n \\r \\t \\v \\xHH \\uHHHH, or \\ at the end of a line"
            ),
            ("{\u{0}}", "t.json5:1:2: syntax error: expected a key (a name or a string in quotes) or '}', found 'U+0000'"),
        ])
    func nulRefused(text: String, expected: String) {
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
    }

    /// `before`'s UTF-8, the `raw` bytes, then `after`'s UTF-8.
    static func file(_ before: String, _ raw: [UInt8], _ after: String = "") -> [UInt8] {
        Array(before.utf8) + raw + Array(after.utf8)
    }

    static let notUTF8: [(bytes: [UInt8], expected: String)] = [
        (
            file("{texts: {title: \"a", [0xFF], "b\"}}"),
            "t.json5:1:19: syntax error: the file is not UTF-8 text: byte 0xFF cannot start a character (save the file as UTF-8)"
        ),
        // Latin-1 "ü" after a UTF-8 "ü" on the second line: columns count characters.
        (
            file("{\n  // \u{FC} ", [0xFC], "\n}"),
            "t.json5:2:8: syntax error: the file is not UTF-8 text: byte 0xFC cannot start a character (save the file as UTF-8)"
        ),
        (
            file("{a: 1} // ", [0xC3]),
            "t.json5:1:11: syntax error: the file is not UTF-8 text: the bytes 0xC3 are not a character (save the file as UTF-8)"
        ),
        (
            file("{a: '", [0xC0, 0x80], "'}"),
            "t.json5:1:6: syntax error: the file is not UTF-8 text: byte 0xC0 cannot start a character (save the file as UTF-8)"
        ),
        (
            file("{a: '", [0xED, 0xA0, 0x80], "'}"),
            "t.json5:1:6: syntax error: the file is not UTF-8 text: the bytes 0xED 0xA0 are not a character (save the file as UTF-8)"
        ),
        (
            file("{a: '", [0xF4, 0x90, 0x80, 0x80], "'}"),
            "t.json5:1:6: syntax error: the file is not UTF-8 text: the bytes 0xF4 0x90 are not a character (save the file as UTF-8)"
        ),
    ]

    @Test("bytes that are not UTF-8 are a syntax error at their line and column", arguments: notUTF8)
    func invalidUTF8(bytes: [UInt8], expected: String) {
        let outcome = checkConfig(bytes: bytes)
        #expect(outcome.code == .config)
        #expect(outcome.err == [expected])
    }

    @Test("nesting deeper than 32 levels is a syntax error at the bracket that goes too deep, however deep the file goes", arguments: [33, 100_000])
    func nestingLimit(levels: Int) {
        let text = "{a:" + String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1) + "}"
        let outcome = checkConfig(text)
        #expect(outcome.code == .config)
        #expect(
            outcome.err == [
                "t.json5:1:35: syntax error: nested too deeply: more than 32 objects and lists inside each other (a configuration file needs 3)"
            ])
        let objects = "{a:\n" + String(repeating: "{a:", count: levels - 1)
        #expect(
            checkConfig(objects).err == [
                "t.json5:2:94: syntax error: nested too deeply: more than 32 objects and lists inside each other (a configuration file needs 3)"
            ])
    }

    @Test("32 levels of nesting are still read (the schema then judges the keys)")
    func nestingAtTheLimit() {
        let text = "{a:" + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect(configProblems(text).count == 1)
        #expect(configProblems(text).first?.hasPrefix(": a: unknown key") == true)
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

    @Test("objects keep the order of the file, repeated keys included")
    func keyOrder() throws {
        let text = "{zeta: 1, alpha: {c: 1, a: 2, b: 3, a: 4}, mid: [{y: 1, x: 2}], beta: 4}"
        guard case .success(let document) = JSON5Parser.parse(text) else {
            Issue.record("parser refused valid JSON5")
            return
        }
        let tree = document.value
        guard case .object(let members) = tree else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["zeta", "alpha", "mid", "beta"])
        guard case .object(let inner)? = tree["alpha"] else {
            Issue.record("alpha is not an object")
            return
        }
        #expect(inner.map(\.key) == ["c", "a", "b", "a"])
        #expect(tree["alpha"]?["a"] == .integer(2))
        #expect(tree["mid"] == .array([.object([.init("y", .integer(1)), .init("x", .integer(2))])]))
        #expect(document.duplicates == [.init(path: [.key("alpha"), .key("a")], line: 1, column: 37, firstLine: 1, firstColumn: 25)])
    }

    @Test("numbers: whole ones become exact integers, others keep their text")
    func numbers() throws {
        guard
            case .success(let document) = JSON5Parser.parse(
                "{a: 60, b: 60.0, c: 1e3, d: 1.5, e: -0x10, f: Infinity, g: 0x100000000, h: 99999999999999999999}")
        else {
            Issue.record("refused")
            return
        }
        let tree = document.value
        #expect(tree["a"] == .integer(60))
        #expect(tree["b"] == .integer(60))
        #expect(tree["c"] == .integer(1000))
        #expect(tree["d"] == .number(.init(text: "1.5", isWhole: false)))
        #expect(tree["e"] == .integer(-16))
        #expect(tree["f"] == .number(.init(text: "Infinity", isWhole: false)))
        #expect(tree["g"] == .number(.init(text: "0x100000000", isWhole: true)))
        #expect(tree["h"] == .number(.init(text: "99999999999999999999", isWhole: true)))
    }

    @Test("200,000 keys in one object and 100,000 list items are all read, in order, duplicates found")
    func manyKeys() throws {
        let count = 200_000
        func file(last: String) -> String {
            var text = "{send: {command: ['/bin/x'"
            for index in 0..<100_000 { text += ", 'a\(index)'" }
            text += "], environment: {"
            for index in 0..<count { text += "V\(index): 'x',\n" }
            return text + last + "}}}"
        }
        let text = file(last: "V7: 'again'")
        guard case .success(let document) = JSON5Parser.parse(text) else {
            Issue.record("refused")
            return
        }
        guard case .object(let environment)? = document.value["send"]?["environment"] else {
            Issue.record("no environment")
            return
        }
        #expect(environment.count == count + 1)
        #expect(environment[123_456].key == "V123456")
        #expect(
            document.duplicates == [
                .init(path: [.key("send"), .key("environment"), .key("V7")], line: 200_001, column: 1, firstLine: 8, firstColumn: 1)
            ])
        let problems = configProblems(text)
        #expect(problems == [": send.environment.V7: given twice (at 8:1 and 200001:1); give each key once"])
        let config = try DeviceConfig.parse(text: file(last: "V_: 'last'"), source: "t.json5")
        #expect(config.send.environment.count == count + 1)
        #expect(config.send.command?.count == 100_001)
        #expect(config.send.command?.last == "a99999")
    }

    @Test("a file with thousands of problems gets the first 100 and a count of the rest")
    func problemsCapped() {
        var text = "{"
        for index in 0..<20_000 { text += "k\(index): 1, " }
        text += "cooldown: {seconds: 0}}"
        let problems = configProblems(text)
        #expect(problems.count == 101)
        // Values are judged before unknown keys are listed.
        #expect(problems.first == ": cooldown.seconds: 0 is out of range; allowed: whole seconds from 1 to 86400")
        #expect(
            problems[1]
                == ": k0: unknown key; allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
        )
        #expect(
            problems[99]
                == ": k98: unknown key; allowed at the top level: button, led, lcd, display, cooldown, texts, send, stateFile, policy, log, keypad, mqtt"
        )
        #expect(problems.last == ": 19901 more problems not shown (only the first 100 are); fix these and check again")
        #expect(checkConfig(text).code == .config)
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

    /// `value` written back as JSON5 that reads as the same tree.
    static func render(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let number): return String(number)
        case .number(let number): return number.text
        case .string(let text): return quoted(text)
        case .array(let items): return "[" + items.map(render).joined(separator: ",") + "]"
        case .object(let members): return "{" + members.map { quoted($0.key) + ":" + render($0.value) }.joined(separator: ",") + "}"
        }
    }

    @Test(
        "for single-character mutations of config files, the parser never crashes, a refusal names a place inside the file, and what it accepts reads back the same",
        arguments: [
            ("example", 300, UInt64(42)), ("dense", 1500, UInt64(7)),
        ])
    func mutationsBehave(base: String, count: Int, seed: UInt64) throws {
        let text = base == "dense" ? Self.dense : try #require(readRepositoryFile("board/config.example.json5"))
        guard case .success = JSON5Parser.parse(text) else {
            Issue.record("the base file is refused")
            return
        }
        let original = Array(text.unicodeScalars)
        // Characters that make or break JSON5, and some with opinions of their own.
        let pieces: [String] = [
            "{", "}", "[", "]", ",", ":", "\"", "'", "\\", "/", "*", "\n", " ", "x", "0", "-", ".", "e",
            "\u{9}", "ß", "u", "\u{A0}", "\r", "+", "I", "N", "t", "0x", "\\u", "\\x", "E", "\u{FEFF}",
            "\u{2028}", "$", "_", "1", "9", "\u{0}", "\u{7F}", "😀", "é", "\\0", "\u{301}",
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
            let around = String(String.UnicodeScalarView(scalars[max(0, index - 30)..<min(scalars.count, index + 30)]))
            switch JSON5Parser.parse(mutated) {
            case .success(let document):
                // What was read, written back as JSON, reads as the same tree.
                guard case .success(let again) = JSON5Parser.parse(Self.render(document.value)) else {
                    Issue.record("the tree of a mutation at \(index) does not read back: \(quoted(around))")
                    continue
                }
                #expect(again.value == document.value, "mutation at \(index): \(quoted(around))")
                // And the schema judges it without crashing.
                _ = configProblems(mutated)
            case .failure(let error):
                refused += 1
                // The place is inside the file: a line it has, a column up to one past its end.
                var lines: [[Unicode.Scalar]] = [[]]
                var previous: Unicode.Scalar = " "
                for scalar in scalars {
                    if scalar == "\n" && previous == "\r" {
                        // CR LF: the CR already ended the line.
                    } else if scalar == "\n" || scalar == "\r" {
                        lines.append([])
                    } else {
                        lines[lines.count - 1].append(scalar)
                    }
                    previous = scalar
                }
                #expect(error.line >= 1 && error.line <= lines.count, "line \(error.line) of \(lines.count): \(error.message)")
                if error.line >= 1 && error.line <= lines.count {
                    #expect(error.column >= 1 && error.column <= lines[error.line - 1].count + 1, "column \(error.column): \(error.message)")
                }
            }
        }
        // The mutations must exercise both sides.
        #expect(refused > count / 10)
        #expect(refused < count * 9 / 10)
    }
}
