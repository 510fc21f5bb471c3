import FoundationEssentials
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// The product reads JSON5 with its own parser; the tests (which may use Foundation) compare it
/// with FoundationEssentials' JSON5 decoder on files both read the same way. Where they differ by
/// design (`\v`, line continuations, Unicode white space, `0x23.`, `\x` in names, `\u0061` in a
/// bare name kept as written: the decoder departs from the JSON5 specification there) the grammar
/// tests in ConfigSyntaxTests decide.
@Suite("Config parser: agrees with FoundationEssentials' JSON5 decoder on common ground")
struct ConfigParserDifferentialTests {
    /// A tree both sides can give: numbers as Double, objects without order.
    indirect enum Tree: Equatable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([Tree])
        case object([String: Tree])

        static func == (a: Tree, b: Tree) -> Bool {
            switch (a, b) {
            case (.null, .null): return true
            case (.bool(let x), .bool(let y)): return x == y
            case (.number(let x), .number(let y)): return x == y || (x.isNaN && y.isNaN)
            case (.string(let x), .string(let y)): return x == y
            case (.array(let x), .array(let y)): return x == y
            case (.object(let x), .object(let y)): return x == y
            default: return false
            }
        }

        init(_ value: JSONValue) {
            switch value {
            case .null: self = .null
            case .bool(let flag): self = .bool(flag)
            case .integer(let number): self = .number(Double(number))
            case .number(let number):
                var text = number.text
                if text.hasPrefix("+") { text.removeFirst() }
                self = .number(Double(text) ?? .signalingNaN)
            case .string(let text): self = .string(text)
            case .array(let items): self = .array(items.map(Tree.init))
            case .object(let members):
                // The first of repeated keys, as the parser's lookups take it.
                var object: [String: Tree] = [:]
                for member in members where object[member.key] == nil { object[member.key] = Tree(member.value) }
                self = .object(object)
            }
        }
    }

    struct Decoded: Decodable {
        var tree: Tree
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                tree = .null
            } else if let flag = try? container.decode(Bool.self) {
                tree = .bool(flag)
            } else if let number = try? container.decode(Double.self) {
                tree = .number(number)
            } else if let text = try? container.decode(String.self) {
                tree = .string(text)
            } else if let object = try? container.decode([String: Decoded].self) {
                tree = .object(object.mapValues(\.tree))
            } else {
                tree = .array(try container.decode([Decoded].self).map(\.tree))
            }
        }
    }

    static let corpus: [String] = [
        "{}", "{a: 1}", "{'a': 1, \"b\": 2,}", "{a: [1, 2,],}", "// c\n{a: 1 /* c */} // c",
        "{a: 0x1F, b: +1, c: .5, d: 5., e: -Infinity, f: NaN, g: 1e3, h: 1E-2, i: -0x10, j: 1.5e1}",
        "{$a_1: 1, ä: 2}", "{a: 'it\\'s', b: \"\\u00e4\\x41\\n\\t\\/\\b\\f\\r\"}", "{a: '\\uD83D\\uDE00'}",
        "\u{FEFF}{a: 1}", "{a:\u{B}\u{C}1}", "{a: null, b: true, c: false}", "{a: 9223372036854775807}",
        "{a: 4294967296, b: -2147483649, c: 0x7FFFFFFF}", "{a: 1.7e308, b: 2.5e-300}", "[1, 'x', [], {}]",
        "{'\\u0061': 1}", "{a: {b: {c: [{d: 'e'}]}}}", "{a: 'Grüße 😀 \\u2603'}",
    ]

    @Test("both read the same tree", arguments: corpus)
    func sameTree(text: String) throws {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let theirs = try decoder.decode(Decoded.self, from: Data(text.utf8)).tree
        guard case .success(let document) = JSON5Parser.parse(text) else {
            Issue.record("the parser refuses what the decoder reads")
            return
        }
        #expect(Tree(document.value) == theirs)
    }

    @Test("both read the example configuration and the dense one the same")
    func configurations() throws {
        for text in [try #require(readRepositoryFile("board/config.example.json5")), ConfigMutationTests.dense] {
            try sameTree(text: text)
        }
    }
}
