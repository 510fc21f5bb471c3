import Foundation
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// The documentation pages a maker reads: README.md, every page in docs/, and the board READMEs.
private func documentationPages() throws -> [String] {
    let names = try FileManager.default.contentsOfDirectory(atPath: repositoryFile("docs"))
    let pages = names.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    return ["README.md", "board/README.md", "board/raspberry-pi/README.md"] + pages
}

/// The lines of `text` outside fenced code blocks, with inline code spans removed.
private func proseLines(_ text: String) -> [String] {
    var lines: [String] = []
    var fenced = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.trimmingPrefix(while: \.isWhitespace).hasPrefix("```") {
            fenced.toggle()
            continue
        }
        if fenced { continue }
        var prose = ""
        var inCode = false
        for character in line {
            if character == "`" { inCode.toggle() } else if !inCode { prose.append(character) }
        }
        lines.append(prose)
    }
    return lines
}

/// The targets of the Markdown links `[text](target)` in `text` (outside code).
func markdownLinkTargets(_ text: String) -> [String] {
    var targets: [String] = []
    for line in proseLines(text) {
        var rest = Substring(line)
        while let open = rest.firstRange(of: "](") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: ")") else { break }
            targets.append(String(after[..<close]))
            rest = after[close...]
        }
    }
    return targets
}

/// The anchors GitHub makes for the headings of a Markdown page: lower case, punctuation dropped
/// (letters, digits, spaces, `-` and `_` kept), spaces as `-`; a repeated heading gets `-1`, `-2`.
func markdownAnchors(_ text: String) -> Set<String> {
    var anchors: Set<String> = []
    var fenced = false
    for line in text.split(separator: "\n") {
        if line.hasPrefix("```") { fenced.toggle() }
        guard !fenced, line.hasPrefix("#") else { continue }
        let title = line.drop { $0 == "#" }.drop { $0 == " " }
        var slug = ""
        for character in title.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                slug.append(character)
            }
        }
        var unique = slug
        var count = 0
        while anchors.contains(unique) {
            count += 1
            unique = "\(slug)-\(count)"
        }
        anchors.insert(unique)
    }
    return anchors
}

/// The problems of one page's relative links: a target file that does not exist, or an anchor
/// that no heading of the target page makes. `exists` and `read` see the repository.
func brokenLinks(in page: String, text: String, exists: (String) -> Bool, read: (String) -> String?) -> [String] {
    var problems: [String] = []
    let directory = page.split(separator: "/").dropLast().map(String.init)
    links: for target in markdownLinkTargets(text) {
        if target.contains("://") || target.hasPrefix("mailto:") { continue }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        var path = page
        if !parts[0].isEmpty {
            var components = directory
            for component in parts[0].split(separator: "/") {
                if component == ".." {
                    if components.isEmpty {
                        problems.append("\(page): \(target): leaves the repository")
                        continue links
                    }
                    components.removeLast()
                } else if component != "." {
                    components.append(String(component))
                }
            }
            path = components.joined(separator: "/")
            guard exists(path) else {
                problems.append("\(page): \(target): \(path) does not exist")
                continue
            }
        }
        if parts.count == 2, path.hasSuffix(".md") {
            let anchors = read(path).map(markdownAnchors) ?? []
            if !anchors.contains(parts[1]) {
                problems.append("\(page): \(target): no heading of \(path) makes the anchor #\(parts[1])")
            }
        }
    }
    return problems
}

/// The keys in the first column of the tables in `docs/configuration.md`'s "Every key" section.
func documentedConfigurationKeys(_ page: String) -> [String]? {
    guard let start = page.firstRange(of: "\n## Every key\n") else { return nil }
    let section = page[start.upperBound...]
    let body = section[..<(section.firstRange(of: "\n## ")?.lowerBound ?? section.endIndex)]
    var keys: [String] = []
    for line in body.split(separator: "\n") where line.hasPrefix("| `") {
        let cell = line.dropFirst(2).prefix { $0 != "|" }
        let spans = cell.split(separator: "`", omittingEmptySubsequences: false)
        keys += stride(from: 1, to: spans.count, by: 2).map { String(spans[$0]) }
    }
    return keys
}

@Suite("Docs: the configuration reference matches the schema, and every relative link resolves")
struct DocsTests {
    @Test("docs/configuration.md lists every key the schema reads, and only those, once each")
    func configurationReferenceMatchesSchema() throws {
        let page = try #require(readRepositoryFile("docs/configuration.md"))
        let documented = try #require(documentedConfigurationKeys(page))
        let schema = DeviceConfig.schema.map(\.path)
        #expect(DeviceConfig.valueKeyPaths.count > 50, "the schema lists no keys")
        for key in DeviceConfig.valueKeyPaths {
            #expect(documented.contains(key), "docs/configuration.md lacks \(key)")
        }
        for key in documented {
            #expect(schema.contains(key), "docs/configuration.md documents \(key), which the schema does not read")
        }
        #expect(Set(documented).count == documented.count, "a key is documented twice")
    }

    @Test("the key table's reader sees a missing key and an invented one")
    func keyTableReaderCanFail() {
        let page = """
            # Configuration reference

            ## Every key

            | key | allowed | default |
            |---|---|---|
            | `button.line` | a name | `"GPIO17"` |
            | `lcd.wiring.rs`, `lcd.wiring.rw` | bits | 0, 1 |
            | `button.colour` | invented | `"red"` |

            ## The flags of `run`

            | `--button LINE` | a line | `GPIO17` |
            """
        let documented = documentedConfigurationKeys(page)
        #expect(documented == ["button.line", "lcd.wiring.rs", "lcd.wiring.rw", "button.colour"])
        #expect(!DeviceConfig.schema.map(\.path).contains("button.colour"))
        #expect(DeviceConfig.valueKeyPaths.contains { !(documented ?? []).contains($0) })
    }

    @Test("every relative link in README.md, docs/ and board/ names an existing file and heading")
    func relativeLinksResolve() throws {
        let pages = try documentationPages()
        #expect(pages.contains("docs/configuration.md"))
        var problems: [String] = []
        for page in pages {
            let text = try #require(readRepositoryFile(page), "cannot read \(page)")
            problems += brokenLinks(
                in: page, text: text, exists: { FileManager.default.fileExists(atPath: repositoryFile($0)) },
                read: readRepositoryFile)
        }
        #expect(problems == [])
    }

    @Test("the link check reports a missing file, a missing heading and a link out of the repository")
    func linkCheckCanFail() {
        let files = ["docs/a.md": "# A page\n\n## The flags of `run`\n", "README.md": ""]
        let text = """
            [ok](a.md#the-flags-of-run) [up](../README.md) [gone](b.md) [anchor](a.md#no-such-heading)
            [out](../../etc/passwd) [web](https://example.org/x.md) `[code](c.md)`

            ```
            [fenced](d.md)
            ```
            """
        let problems = brokenLinks(in: "docs/x.md", text: text, exists: { files[$0] != nil }, read: { files[$0] })
        #expect(
            problems == [
                "docs/x.md: b.md: docs/b.md does not exist",
                "docs/x.md: a.md#no-such-heading: no heading of docs/a.md makes the anchor #no-such-heading",
                "docs/x.md: ../../etc/passwd: leaves the repository",
            ])
    }
}
