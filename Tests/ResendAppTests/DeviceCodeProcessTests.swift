import Glibc
import HAL
import HALMock
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

private func deviceConfig(_ extra: String = "") -> [String: String] {
    ["kp.json5": "{ send: { command: ['/bin/true'] }, keypad: { enabled: true, code: { source: 'device', length: 6 }, \(extra) } }"]
}

@Suite("A code made on the device, through the simulator and a real send command")
struct DeviceCodeProcessTests {
    @Test("the send command gets the code on standard input only: not in its argv or environment, not in the log, the screen or the state file")
    func theCodeReachesOnlyTheSendCommandsStandardInput() throws {
        let directory = StateDirectory()
        directory.write(
            "send.sh",
            """
            read code
            printf '%s' "$code" > \(directory.path)/stdin
            printf '%s\\n' "$0" "$@" > \(directory.path)/argv
            env > \(directory.path)/env
            """)
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--realtime", "--events", "--duration", "1", "--state-file", directory.stateFile,
                "--send-command", "sh " + directory.path + "/send.sh", "--script", "press@0 keys@3:000000# end@6",
            ],
            files: deviceConfig())
        #expect(result.code == .ok)
        #expect(result.err == [])
        let code = try #require(directory.read("stdin"))
        #expect(code.utf8.count == 6 && code.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }, "\(code)")
        #expect(result.out.contains { $0.hasSuffix("send finished result=ok exit=0 ms=" + ($0.split(separator: "=").last.map(String.init) ?? "")) })
        let output = result.out.joined(separator: "\n")
        for (name, text) in [
            ("log and screen", output), ("argv", directory.read("argv") ?? ""), ("environment", directory.read("env") ?? ""),
            ("state file", directory.read("state.json") ?? ""),
        ] where code != "000000" {
            #expect(!text.contains(code), "the code is in the \(name)")
        }
        #expect(directory.read("env")?.isEmpty == false && directory.read("state.json")?.isEmpty == false)
    }

    @Test("on virtual time the simulator's codes are a fixed sequence: the code sent is accepted, the door pulses; a resend's new code replaces it")
    func theSimulatorAcceptsTheCodeItSent() throws {
        var random = SequenceRandom(seed: 20)
        var codes = DeviceCode(capacity: 8)
        let first = String(decoding: try codes.draw(length: 6, from: &random).digits, as: UTF8.self)
        let second = String(decoding: try codes.draw(length: 6, from: &random).digits, as: UTF8.self)
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "5", "--mock-send", "ok@0.5",
                "--script", "press@0 press@6 keys@7:\(first)# keys@10:\(second)# end@14",
            ],
            files: deviceConfig("output: { line: 'GPIO26', pulseMs: 1000 }"))
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out.contains { $0.contains("|Wrong, 2 left ") }, "the first code stopped working at the resend")
        #expect(result.out.contains { $0.contains("|Code accepted   |Welcome ") })
        #expect(result.out.contains { $0.hasSuffix(" output on") })
    }

    @Test(
        "config check: a code made on the device needs send.command, refuses a verify command and opensWithoutSend, and its length must fit the field"
    )
    func configCheck() {
        let bad = runCLI(
            ["config", "check", "kp.json5"],
            files: [
                "kp.json5": """
                { keypad: { enabled: true, code: { source: 'device', length: 9 }, verify: { command: ['/bin/true'] }, entry: { opensWithoutSend: true } } }
                """
            ])
        #expect(bad.code == .config)
        let lines = bad.err.joined(separator: "\n").split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(
            lines.contains(
                "kp.json5: keypad.verify.command: is set, but keypad.code.source is \"device\": the program checks the code it made itself; allowed: null (remove it)"
            ))
        #expect(lines.contains { $0.hasPrefix("kp.json5: keypad.code.source: is \"device\", but send.command is null") })
        #expect(lines.contains { $0.hasPrefix("kp.json5: keypad.entry.opensWithoutSend: is true, but keypad.code.source is \"device\"") })
        #expect(lines.contains { $0.hasPrefix("kp.json5: keypad.code.length: 9 is outside keypad.entry.minLength...maxLength (4...8)") })
        let good = runCLI(["config", "check", "kp.json5"], files: deviceConfig())
        #expect(good.code == .ok)
        #expect(good.out.joined().contains("code made on the device (6 digits, checked here)"))
    }

    @Test("simulate with a code made on the device needs a send command: exit 64 saying which flags")
    func simulateNeedsASendCommand() {
        let result = runCLI(["simulate", "--config", "kp.json5", "--headless", "--script", "press@0"], files: deviceConfig())
        #expect(result.code == .usage)
        #expect(
            result.err == [
                "simulate: keypad.code.source is \"device\": the code made on the device goes to a send command; give --mock-send (or --send-command with --headless --realtime)"
            ])
    }

    @Test("opensWithoutSend: a digit opens code entry with no send, the verify command checks, and attempts still lead to a lockout")
    func opensWithoutSend() {
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--duration", "5", "--mock-verify", "reject@0.2",
                "--script", "keys@1:123456# keys@3:123456# end@6",
            ],
            files: [
                "kp.json5":
                    "{ keypad: { enabled: true, verify: { command: ['/usr/bin/oathtool'] }, entry: { opensWithoutSend: true, maxAttempts: 2, lockoutSeconds: [30] } } }"
            ])
        #expect(result.code == .ok)
        #expect(result.out.contains { $0.hasPrefix("1.020 screen |Code: *_______ ") })
        #expect(result.out.contains { $0.contains("|Wrong, 1 left ") })
        #expect(result.out.contains { $0.contains("|Try again (30) ") })
    }
}

@Suite("run with a keypad keeps its state")
struct KeypadStateRequiredTests {
    @Test(
        "run refuses --state-file off with a keypad (a restart would clear the wrong codes and the lockout): exit 64 naming both; without a keypad it is fine"
    )
    func stateFileOffIsRefusedWithAKeypad() {
        let keypad = "{ keypad: { enabled: true, verify: { command: ['/usr/local/bin/check-code'] } } }"
        do {
            _ = try RunOptions.parse(["--config", "/k.json5", "--state-file", "off"], readConfig: { _ in .text(keypad) })
            Issue.record("accepted --state-file off with a keypad")
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message
                    == "run: --state-file off with keypad.enabled (/k.json5): the keypad's wrong codes and lockout must survive a restart; give --state-file PATH or leave it out (default /var/lib/resend-button/state.json)"
            )
        }
        let plain = try? RunOptions.parse(["--config", "/k.json5", "--state-file", "off"], readConfig: { _ in .text("{}") })
        #expect(plain?.stateFile == nil)
    }
}

@Suite("The session directory through the simulator and real commands")
struct SessionDirectoryProcessTests {
    @Test(
        "both commands get RESEND_SESSION_DIR, private (0700); a send leaves an id for the check; the next send starts empty; it is gone after the run"
    )
    func sendAndCheckShareASession() throws {
        let directory = StateDirectory()
        directory.write(
            "send.sh",
            """
            ls -A "$RESEND_SESSION_DIR" >> \(directory.path)/seen-at-send
            stat -c %a "$RESEND_SESSION_DIR" > \(directory.path)/mode
            printf '%s' "$RESEND_SESSION_DIR" > \(directory.path)/session-path
            echo VE42 > "$RESEND_SESSION_DIR/sid"
            """)
        directory.write(
            "verify.sh",
            """
            read code
            [ "$(cat "$RESEND_SESSION_DIR/sid")" = VE42 ] && exit 0
            exit 1
            """)
        let result = runCLI(
            [
                "simulate", "--config", "kp.json5", "--headless", "--realtime", "--duration", "1",
                "--send-command", "sh " + directory.path + "/send.sh", "--verify-command", "sh " + directory.path + "/verify.sh",
                "--script", "press@0 keys@2.5:1234# press@5 end@8",
            ],
            files: ["kp.json5": "{ keypad: { enabled: true, verify: { command: ['/bin/true'] } } }"])
        #expect(result.code == .ok)
        #expect(result.err == [])
        #expect(result.out.contains { $0.contains("|Code accepted   |") }, "the check read the send's id")
        #expect(directory.read("seen-at-send") == "", "each send starts with an empty directory")
        #expect(directory.read("mode") == "700\n")
        let session = try #require(directory.read("session-path"))
        #expect(access(session, F_OK) != 0, "removed at the end of the run")
    }
}
