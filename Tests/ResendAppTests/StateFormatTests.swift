import HAL
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// The wall clock of the simulated runs: 2024-06-10 06:13:20 UTC.
private let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)

/// A keypad's state file with `head` (the version keys): a 30 s lockout ending 20 s after `wall0`,
/// after 3 wrong codes, and `extra` keys of a newer program.
private func keypadState(head: String, extra: String = "") -> String {
    #"{"# + head
        + #","status":"title","used":true,"countdownEndsUnixMs":null,"countdownSeconds":0,"run":0,"runEndsUnixMs":null,"sendsUnixMs":[],"#
        + #""entry":{"failures":3,"rounds":1,"lockoutEndsUnixMs":1718000020000,"lockoutSeconds":30,"open":true,"validUntilUnixMs":null}"#
        + extra + "}\n"
}

private let keypadConfig = "{ keypad: { enabled: true, verify: { command: ['/usr/local/bin/check-code'] } } }"

/// `simulate --headless --events` with a keypad on virtual time, the wall clock at `wall0`.
private func simulateKeypad(stateFile: String, script: String) throws -> [String] {
    var keypad = DeviceConfig.Keypad()
    keypad.enabled = true
    var services = SimulationServices()
    services.keypad = keypad
    services.stateFile = stateFile
    services.mockSend = [.succeeds(after: .seconds(1))]
    services.mockVerify = [.init(after: .milliseconds(500), .exited(code: 0))]
    services.virtualWallStart = wall0
    var lines: [String] = []
    try runHeadless(settings: BehaviourSettings(), services: services, script: parseScript(script, command: "test"), events: true) {
        lines.append($0)
    }
    return lines
}

@Suite("State file across versions, with a keypad", .serialized)
struct StateFormatTests {
    @Test(
        "run with a keypad refuses a state file that needs a newer program: exit 78, one line naming the file, the formats and what to do; the file left as it is"
    )
    func runRefusesAnIncompatibleFile() throws {
        let directory = StateDirectory()
        let newer = keypadState(head: #""version":3,"format":3"#)
        directory.write("state.json", newer)
        let result = runCaptured(
            ["run", "--config", "kp.json5", "--state-file", directory.stateFile],
            readConfig: { $0 == "kp.json5" ? .text(keypadConfig) : .missing })
        #expect(result.code == .config)
        #expect(
            result.err == [
                "run: state file '\(directory.stateFile)' is format 3, readable from format 3 on; this program reads up to format 2; with keypad.enabled its wrong codes and lockout must not be reset, so it was left as it is: install a resend-button that reads format 3 again (the one that wrote it, or newer), or remove the file to start afresh (that resets the wrong codes and the lockout)"
            ])
        #expect(directory.read("state.json") == newer)
        #expect(!directory.exists("state.json.corrupt-1") && !directory.exists("state.json.tmp"))
    }

    @Test("the simulator with a keypad keeps a file that needs a newer program and shows Entry closed: no code is checked, the countdown runs")
    func simulatorKeepsAnIncompatibleFile() throws {
        let directory = StateDirectory()
        let newer = keypadState(head: #""version":3,"format":4"#)
        directory.write("state.json", newer)
        let lines = try simulateKeypad(stateFile: directory.stateFile, script: "press@1 keys@3:1234# end@6")
        #expect(lines.first?.hasPrefix("0.000 state newer format=4 readable_from=3 reads_up_to=2 kept=") == true)
        #expect(lines.contains("0.000 screen |Entry closed    |Send code       |"))
        #expect(lines.contains { $0.hasSuffix(" screen |Entry closed    |Resend (58)     |") })
        #expect(!lines.contains { $0.contains("code submitted") || $0.contains("verify finished") || $0.contains("output active") })
        #expect(!lines.contains { $0.contains("entry opened") }, "the log says what the glass says: entry stays closed")
        #expect(directory.read("state.json") == newer)
        #expect(!directory.exists("state.json.corrupt-1"))
    }

    @Test("after a downgrade the keypad's lockout and wrong codes resume from a newer file that keeps version 1")
    func simulatorResumesACompatibleNewerFile() throws {
        let directory = StateDirectory()
        directory.write("state.json", keypadState(head: #""version":1,"format":3,"newKey":true"#, extra: #","newKey2":[]"#))
        let lines = try simulateKeypad(stateFile: directory.stateFile, script: "end@2")
        #expect(lines.contains("0.000 entry lockout resumed seconds_left=20"))
        #expect(lines.contains("0.000 screen |Try again (20)  |Resend          |"))
    }
}
