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
