import Glibc
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// The example configurations of docs/verification.md, one per adapter route.
@Suite("board/examples: the verification routes' example configurations")
struct AdapterExampleTests {
    static let routes = ["verify-api", "gsm", "totp"]
    static let installed = "/usr/lib/resend-button/adapters/"

    @Test("each route's example passes config check", arguments: routes)
    func passesConfigCheck(route: String) throws {
        let text = try #require(readRepositoryFile("board/examples/\(route).json5"))
        let outcome = checkConfig(text, name: "\(route).json5")
        #expect(outcome.code == .ok)
        #expect(outcome.err == [])
        #expect(outcome.out.count == 1 && outcome.out[0].hasPrefix("\(route).json5: OK; "))
    }

    @Test("each example runs its own route's adapter from where the package installs it, and that adapter is in adapters/", arguments: routes)
    func commandsAreTheRoutesAdapter(route: String) throws {
        let text = try #require(readRepositoryFile("board/examples/\(route).json5"))
        let config = try DeviceConfig.parse(text: text, source: "\(route).json5")
        let commands = [config.send.command, config.keypad.verify.command].compactMap { $0 }
        #expect(!commands.isEmpty)
        for command in commands {
            let program = try #require(command.first)
            #expect(program == Self.installed + route)
            #expect(readRepositoryFile("adapters/\(route)")?.hasPrefix("#!/bin/sh\n") == true)
        }
    }
}

/// Every file in board/examples, as a user copies it: `config check` says OK. The OLED examples'
/// font (Debian's /usr/share/unifont/unifont.hex) is the Unifont fixture here, so the check does
/// not depend on the installed font.
@Suite("board/examples: every example passes config check")
struct ExampleFilesTests {
    static var names: [String] {
        guard let handle = opendir(repositoryFile("board/examples")) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".json5") { names.append(name) }
        }
        return names.sorted()
    }

    @Test("the examples include the Chinese OLED ones, with and without a keypad")
    func listed() {
        #expect(Self.names.contains("chinese.json5") && Self.names.contains("chinese-keypad.json5"), "\(Self.names)")
    }

    @Test("each example file passes config check", arguments: names)
    func passes(name: String) throws {
        let text = try #require(readRepositoryFile("board/examples/" + name))
        let font = try #require(fileBytes(unifontFixturePath))
        let outcome = runCommand(
            ["config", "check", name],
            files: [
                name: text.replacingAll(DeviceConfig.Display.defaultFont, with: "/fonts/u.hex"),
                "/fonts/u.hex": String(decoding: font, as: UTF8.self),
            ])
        #expect(outcome.code == .ok, "\(outcome.err)")
        #expect(outcome.err == [])
        #expect(outcome.out.count == 1 && outcome.out[0].hasPrefix("\(name): OK; "), "\(outcome.out)")
    }
}

extension String {
    /// `self` with every `target` replaced by `replacement`.
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
