import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

@Suite("Config file: loading, config check and the example file")
struct ConfigFileTests {
    @Test("config check prints FILE: OK and a summary, and exits 0")
    func checkValid() {
        let outcome = checkConfig("{lcd: {address: 0x27}, send: {command: ['/bin/send-code']}}", name: "/etc/x.json5")
        #expect(outcome.code == .ok)
        #expect(outcome.err == [])
        #expect(
            outcome.out == [
                "/etc/x.json5: OK; button GPIO17 (pull-up, active-low, debounce 20 ms stable); LED none; LCD 16x2 ROM A00 on i2c-1 at 0x27; cooldown 60 s; send /bin/send-code (timeout 10 s); state /var/lib/resend-button/state.json; policy off; log plain"
            ])
    }

    @Test(
        "config check without FILE or with more than one is a usage error (64)",
        arguments: [
            (["config", "check"], ["config check: missing FILE", "usage: resend-button config check FILE"]),
            (["config", "check", "a", "b"], ["config check: expected one FILE, got 2 arguments", "usage: resend-button config check FILE"]),
            (["config"], ["config: missing subcommand", "usage: resend-button config check FILE"]),
            (["config", "chek", "a"], ["config: unknown subcommand 'chek'; did you mean 'check'?", "usage: resend-button config check FILE"]),
        ])
    func checkUsage(arguments: [String], expected: [String]) {
        let outcome = runCommand(arguments)
        #expect(outcome.code == .usage)
        #expect(outcome.err == expected)
    }

    @Test("config check of a file that cannot be read exits 78 naming the path and the reason")
    func checkMissing() {
        let outcome = runCommand(["config", "check", "/nowhere/config.json5"])
        #expect(outcome.code == .config)
        #expect(outcome.err == ["/nowhere/config.json5: cannot read the configuration file: ENOENT (2): no such file or directory"])
    }

    @Test("a missing default file means defaults; a missing explicit file is an error (78)")
    func loadMissing() throws {
        #expect(try DeviceConfig.load(path: DeviceConfig.defaultPath, explicit: false, readFile: { _ in nil }) == DeviceConfig())
        #expect(throws: ExitError.self) { try DeviceConfig.load(path: "/etc/mine.json5", explicit: true, readFile: { _ in nil }) }
        do {
            _ = try DeviceConfig.load(path: "/etc/mine.json5", explicit: true, readFile: { _ in nil })
        } catch {
            #expect(error.code == .config)
            #expect(error.message == "/etc/mine.json5: no such configuration file")
        }
    }

    @Test("a default file that exists but cannot be read is an error, not silently the defaults")
    func loadUnreadable() {
        do {
            _ = try DeviceConfig.load(path: DeviceConfig.defaultPath, explicit: false) { _ in .unreadable(reason: "permission denied") }
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .config)
            #expect(error.message == "/etc/resend-button/config.json5: cannot read the configuration file: permission denied")
        }
    }

    @Test("load returns the parsed file, or every problem with exit code 78")
    func loadText() throws {
        let config = try DeviceConfig.load(path: "/c.json5", explicit: true, readFile: { _ in "{cooldown: {seconds: 5}}" })
        #expect(config.cooldown.seconds == 5)
        do {
            _ = try DeviceConfig.load(path: "/c.json5", explicit: false, readFile: { _ in "{cooldown: {seconds: 0}, lcd: {bus: -1}}" })
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .config)
            #expect(
                error.message == """
                    /c.json5: lcd.bus: -1 is out of range; allowed: an I2C bus number (N of /dev/i2c-N) from 0 to 1023
                    /c.json5: cooldown.seconds: 0 is out of range; allowed: whole seconds from 1 to 86400
                    """)
        }
    }

    @Test("reading from disk tells a missing file from its bytes")
    func readFromDisk() {
        guard case .missing = ConfigFileContents.read("/nonexistent/resend-button/config.json5") else {
            Issue.record("expected .missing")
            return
        }
        guard case .bytes(let bytes) = ConfigFileContents.read(repositoryFile("board/config.example.json5")) else {
            Issue.record("expected the example's bytes")
            return
        }
        #expect(bytes.starts(with: Array("// ResendButton configuration".utf8)))
    }

    @Test("board/config.example.json5 is valid and sets exactly the defaults")
    func exampleIsDefaults() throws {
        let text = try #require(readRepositoryFile("board/config.example.json5"))
        #expect(try DeviceConfig.parse(text: text, source: "board/config.example.json5") == DeviceConfig())
        #expect(checkConfig(text).code == .ok)
    }

    @Test("board/config.example.json5 shows every key of the schema, each with a comment")
    func exampleHasEveryKey() throws {
        let text = try #require(readRepositoryFile("board/config.example.json5"))
        guard case .success(let document) = JSON5Parser.parse(text) else {
            Issue.record("the example does not parse")
            return
        }
        let tree = document.value
        var present: [String] = []
        func collect(_ value: JSONValue, _ path: [JSONPathComponent]) {
            guard case .object(let members) = value else { return }
            for member in members {
                present.append(renderPath(path + [.key(member.key)]))
                collect(member.value, path + [.key(member.key)])
            }
        }
        collect(tree, [])
        let schema = DeviceConfig.schema.map(\.path)
        #expect(schema.count == 135)
        for key in schema {
            #expect(present.contains(key), "the example lacks \(key)")
        }
        // Keys in the example are in schema order (send.environment's members are its own).
        #expect(present.filter(schema.contains) == schema)
        // Every key line has a comment on it or on the line above.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for key in DeviceConfig.valueKeyPaths {
            // Find the key's line by walking its path: each component on a later line than its parent.
            var index = 0
            for component in key.split(separator: ".") {
                index = try #require(
                    lines[index...].firstIndex { $0.trimmingPrefix(while: \.isWhitespace).hasPrefix(component + ":") }, "no line for \(key)")
            }
            #expect(lines[index].contains("//") || lines[index - 1].contains("//"), "no comment for \(key)")
        }
    }
}
