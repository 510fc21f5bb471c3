import Glibc
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// A wall time well away from the epoch.
private let wall0 = WallTime(millisecondsSinceEpoch: 1_718_000_000_000)

/// Runs `resend-button ARGS` and returns what it printed, and its exit code.
private func command(_ arguments: [String]) -> (out: [String], err: [String], code: ExitCode) {
    let result = runCaptured(arguments)
    return (result.out, result.err, result.code)
}

/// A headless run on virtual time with the wall clock starting at `wallStart`.
private func headless(
    script: String, duration: Int = 5, stateFile: String? = nil, mockSend: [ScriptedCommandRunner.Step]? = nil,
    policy: ResendPolicy = .off, wallStart: WallTime = wall0, logSendOutput: Bool = false
) throws -> [String] {
    var settings = BehaviourSettings()
    settings.durationSeconds = duration
    var services = SimulationServices()
    services.stateFile = stateFile
    services.mockSend = mockSend
    services.policy = policy
    services.virtualWallStart = wallStart
    services.logSendOutput = logSendOutput
    let capture = Capture()
    try runHeadless(settings: settings, services: services, script: parseScript(script, command: "test"), events: true, output: capture.printOut)
    return capture.out
}

/// The `screen` lines only.
private func screens(_ lines: [String]) -> [String] { lines.filter { $0.contains(" screen |") } }

@Suite("Send command in the simulator")
struct PersistSendTests {
    /// Each scripted outcome comes 2.5 s after the press at 0 (debounced at 0.020).
    @Test(
        "each send outcome leaves its screen on the emulated LCD, and every label change stays on its second",
        arguments: [
            (
                "ok@2.5", "2.520 screen |Code sent       |Resend (03)     |", "5.020 screen |Verification    |Resend          |",
                "2.520 send finished result=ok exit=0 ms=2500 output_bytes=5"
            ),
            ("fail@2.5", "2.520 screen |Send failed     |Resend          |", nil, "2.520 send finished result=failed exit=1 ms=2500 output_bytes=16"),
            ("exit=3@2.5", "2.520 screen |Send failed     |Resend          |", nil, "2.520 send finished result=failed exit=3 ms=2500"),
            (
                "timeout@2.5", "2.520 screen |Send failed     |Resend          |", nil,
                "2.520 send finished result=timeout after_ms=2500 killed=0 ms=2500"
            ),
            (
                "notfound", "0.020 screen |Send failed     |Resend          |", nil,
                #"0.020 send finished result=not_started reason="send-command: ENOENT (2): no such file or directory" ms=0"#
            ),
        ])
    func outcomes(mock: String, outcomeScreen: String, endScreen: String?, logged: String) throws {
        let (out, err, code) = command([
            "simulate", "--headless", "--duration", "5", "--mock-send", mock, "--script", "press@0", "--events",
        ])
        #expect(code == .ok, "\(err)")
        #expect(out.contains(logged), "\(out)")
        let shown = screens(out)
        #expect(shown.contains(outcomeScreen), "\(shown)")
        #expect(shown.dropLast().last == (endScreen ?? outcomeScreen))  // then the stopped screen
        // Countdown labels: each exactly on its second after the press at 0.020.
        var previousLabel = ""
        for line in shown where line.contains("|Resend (") {
            let label = String(line.split(separator: "|")[2])
            guard label != previousLabel else { continue }
            previousLabel = label
            let seconds = Int(label.dropFirst(8).prefix(2))!
            #expect(line.hasPrefix("\(5 - seconds).020 "), "\(line)")
        }
    }

    @Test("with send.logOutput, huge output reaches the log bounded: the kept bytes and the count dropped")
    func hugeOutput() throws {
        let step = ScriptedCommandRunner.Step(
            after: .seconds(1), .exited(code: 0), output: [UInt8](repeating: 0x2E, count: 4096), droppedOutputBytes: 995_904)
        let lines = try headless(script: "press@0", mockSend: [step], logSendOutput: true)
        let line = try #require(lines.first { $0.contains("send finished") })
        #expect(line.hasSuffix(" output=" + String(repeating: ".", count: 4096) + " dropped_output_bytes=995904"))
        #expect(screens(lines).contains("1.020 screen |Code sent       |Resend (04)     |"))
    }

    @Test("--send-command on virtual time is refused with a hint")
    func sendCommandNeedsRealtime() {
        let (_, err, code) = command(["simulate", "--headless", "--send-command", "true", "--script", "press@0"])
        #expect(code == .usage)
        #expect(err == ["simulate: --send-command runs a real process: use it with --headless --realtime (or --mock-send on virtual time)"])
    }
}

@Suite("Restart-proof cooldown on virtual time")
struct PersistRestartTests {
    @Test(
        "a countdown persisted in the state file resumes after a restart, clamped whatever the wall clock did",
        arguments: [
            // (wall time between the kill and the restart in s, the first screen of the restarted run)
            (Int64(0), "0.000 screen |Verification    |Resend (58)     |"),  // killed at 2.5 s of 60: 57.52 s left
            (Int64(30), "0.000 screen |Verification    |Resend (28)     |"),
            (Int64(-3_600), "0.000 screen |Verification    |Resend (60)     |"),  // set back an hour: never more than 60
            (Int64(3_600), "0.000 screen |Verification    |Resend          |"),  // set forward an hour: over
        ])
    func restart(wallChange: Int64, firstScreen: String) throws {
        let directory = StateDirectory()
        _ = try headless(script: "press@0 end@2.5", duration: 60, stateFile: directory.stateFile)
        let lines = try headless(
            script: "end@100ms", duration: 60, stateFile: directory.stateFile,
            wallStart: wall0 + .milliseconds(2_500) + .seconds(wallChange))
        #expect(screens(lines).first == firstScreen, "\(lines)")
        #expect(lines.first == "0.000 state restored countdown=1")
    }

    @Test("a resumed countdown runs on to the end on the monotonic clock and is persisted as over")
    func resumeToEnd() throws {
        let directory = StateDirectory()
        _ = try headless(script: "press@0 end@1.2", stateFile: directory.stateFile)
        let lines = try headless(script: "", stateFile: directory.stateFile, wallStart: wall0 + .milliseconds(1_200))
        #expect(
            screens(lines).dropLast() == [
                "0.000 screen |Verification    |Resend (04)     |",
                "0.820 screen |Verification    |Resend (03)     |",
                "1.820 screen |Verification    |Resend (02)     |",
                "2.820 screen |Verification    |Resend (01)     |",
                "3.820 screen |Verification    |Resend          |",
            ])
        #expect(lines.contains("0.000 countdown resumed seconds_left=4"))
        let after = try headless(script: "", stateFile: directory.stateFile, wallStart: wall0 + .seconds(2))
        #expect(screens(after).first == "0.000 screen |Verification    |Resend          |")
    }

    @Test("a wall-clock jump while running changes nothing on the screen", arguments: [Int64(-3_600), Int64(3_600), Int64(0)])
    func wallJumpWhileRunning(jump: Int64) throws {
        let clock = ManualClock()
        let wall = ManualWallClock(wall0, following: clock)
        let storage = MemoryStateStorage()
        let environment = LoopEnvironment(
            source: VirtualEventSource(clock: clock, edges: ButtonScript.press(at: .origin + .seconds(1), holdFor: .milliseconds(100))),
            display: FrameLog(), outputs: .none, commands: .none, clock: clock, wallClock: wall,
            observer: WallJumper(wall: wall, jumpAt: .origin + .seconds(2), jump: .seconds(jump)), store: storage)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(
                controller: ControllerConfig(duration: .seconds(5)), button: Debouncer(window: .milliseconds(20)), keypad: nil))
        try loop.run()
        #expect(loop.observer.jumped)
        #expect(loop.display.frames.map(\.time) == [0, 1_020, 2_020, 3_020, 4_020, 5_020, 6_020, 6_020].map { Instant.origin + .milliseconds($0) })
        #expect(
            loop.display.frames.map { $0.lines[1] } == [
                "Send code", "Resend (05)", "Resend (04)", "Resend (03)", "Resend (02)", "Resend (01)", "Resend", "",
            ])
        #expect(storage.writes.count == 2)  // the press and the end of the countdown
    }

    @Test("an unreadable state file is moved aside with an event, and the device starts fresh")
    func corruptStateFile() throws {
        let directory = StateDirectory()
        directory.write("state.json", "{\"version\": 1, \"status\": ")
        directory.write("state.json.corrupt-1", "an older one")
        let lines = try headless(script: "end@1", stateFile: directory.stateFile)
        #expect(
            lines.first
                == "0.000 state unreadable reason=\"not valid JSON at byte 25: unexpected end of the text\" moved_to=\(directory.path)/state.json.corrupt-2"
        )
        #expect(screens(lines).first == "0.000 screen |Verification    |Send code       |")
        #expect(directory.exists("state.json.corrupt-2"))
        #expect(!directory.exists("state.json"))
    }

    @Test(
        "after a downgrade, a state file that needs a newer program is moved aside byte for byte, the log names the formats, the countdown starts fresh"
    )
    func newerStateFileFromAnUpgrade() throws {
        let directory = StateDirectory()
        let newer = "{\"version\": 3, \"format\": 3, \"status\": \"sent\", \"somethingNew\": [1, 2]}\n"
        directory.write("state.json", newer)
        let lines = try headless(script: "end@1", stateFile: directory.stateFile)
        #expect(
            lines.first
                == "0.000 state newer format=3 readable_from=3 reads_up_to=2 moved_to=\(directory.path)/state.json.corrupt-1"
        )
        #expect(screens(lines).first == "0.000 screen |Verification    |Send code       |")
        #expect(directory.read("state.json.corrupt-1") == newer)
    }

    @Test(
        "after a downgrade, a newer file that programs of format 2 may read (version 1) resumes its countdown; the new keys are dropped when it is written again"
    )
    func newerButReadableStateFile() throws {
        let directory = StateDirectory()
        directory.write(
            "state.json",
            #"{"version":1,"format":3,"status":"sent","used":true,"countdownEndsUnixMs":1718000030000,"countdownSeconds":60,"run":0,"runEndsUnixMs":null,"sendsUnixMs":[],"new":1}"#
        )
        let lines = try headless(script: "end@31", duration: 60, stateFile: directory.stateFile)
        #expect(lines.first == "0.000 state restored countdown=1")
        #expect(screens(lines).first == "0.000 screen |Code sent       |Resend (30)     |")
        let rewritten = try #require(directory.read("state.json"))
        #expect(rewritten.hasPrefix("{\n  \"version\": 1,\n  \"format\": 2,\n") && !rewritten.contains("\"new\""), "written at the countdown's end")
    }

    @Test("escalation and lockout survive a restart")
    func policyAcrossRestart() throws {
        let directory = StateDirectory()
        let policy = ResendPolicy(cooldowns: [.seconds(2), .seconds(4)], cap: .init(maxSends: 2, window: .seconds(20)))
        let first = try headless(script: "press@0 press@3 end@5", stateFile: directory.stateFile, policy: policy)
        #expect(screens(first).contains("3.020 screen |Verification    |Resend (04)     |"))
        // Restarted 1 s after the second countdown ended (7.02 s): locked out until 20.02 s.
        let second = try headless(
            script: "press@1 press@14", stateFile: directory.stateFile, policy: policy, wallStart: wall0 + .milliseconds(8_020))
        #expect(screens(second).first == "0.000 screen |Verification    |Wait (12)       |", "\(second)")
        #expect(second.contains("1.020 press locked out seconds_left=11"))
        #expect(screens(second).contains("12.000 screen |Verification    |Resend          |"))
        #expect(screens(second).contains("14.020 screen |Verification    |Resend (04)     |"))  // the run goes on: 3rd send
    }
}

/// Jumps the wall clock once, after the step at `jumpAt`.
private struct WallJumper: LoopObserver {
    let wall: ManualWallClock
    let jumpAt: Instant
    let jump: TimeSpan
    var jumped = false

    mutating func record(_ event: LoopEvent, at now: Instant) {}
    mutating func stepFinished(at now: Instant) {
        if !jumped, now >= jumpAt {
            wall.jump(by: jump)
            jumped = true
        }
    }
}
