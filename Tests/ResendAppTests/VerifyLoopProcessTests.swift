import HAL
import HALLinux
import HALMock
import ResendApp
import ResendCore
import ResendDevice
import ResendSimulator
import Testing

/// Keys at fixed real times in front of a real `LinuxEventSource` (which carries the verify
/// command's end through the runner's epoll descriptor).
private struct TimedKeys: EventSource {
    var inner: LinuxEventSource
    var pending: [(time: Instant, input: LoopInput)]
    let clock = SystemClock()

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        let now = clock.now()
        let due = pending.prefix { $0.time <= now }
        if !due.isEmpty {
            pending.removeFirst(due.count)
            return due.map { $0.input }
        }
        return try inner.wait(until: earliest(deadline, pending.first?.time))
    }
}

@Suite("Keypad loop with a real verify command")
struct VerifyLoopProcessTests {
    @Test(
        "typed on the keypad, the code reaches the verify command's standard input; the log and the state file hold only its length and the outcome")
    func endToEnd() throws {
        let directory = StateDirectory()
        directory.write("expected", "918273")
        let script = #"read code; [ "$code" = "$(cat "$DIR/expected")" ]"#
        let process = try ProcessRunner(
            .init(
                arguments: ["sh", "-c", script], timeout: .seconds(10), environment: ["DIR": directory.path],
                purpose: .verify))
        var linux = try LinuxEventSource(button: nil)
        _ = linux.register(fileDescriptor: process.pollDescriptor) { () throws(HALError) -> [LoopInput] in try process.collect() }
        let clock = SystemClock()
        let start = clock.now()
        var pending: [(time: Instant, input: LoopInput)] = []
        var at = start + .milliseconds(50)
        for key in [Key.button, .digit9, .digit1, .digit8, .digit2, .digit7, .digit3, .pound] {
            pending.append((at, .key(KeyEvent(key, .pressed, at: at))))
            pending.append((at + .milliseconds(30), .key(KeyEvent(key, .released, at: at + .milliseconds(30)))))
            at = at + .milliseconds(60)
        }
        pending.append((at + .milliseconds(1_500), .stop))
        var entry = EntryConfig()
        entry.pulse = .milliseconds(300)
        var lines: [String] = []
        let logger = EventLogger(format: .plain, origin: start) { lines.append($0) }
        let output = RecordingLED(clock: clock)
        let pad = DeviceCoordinator(controller: ResendController(config: ControllerConfig(duration: .seconds(60))), entry: CodeEntry(config: entry))
        let environment = DeviceLoopEnvironment(
            source: TimedKeys(inner: linux, pending: pending), display: FrameLog(), outputs: Outputs(strike: output),
            commands: .device(send: .none, verify: .process(process)), clock: clock, wallClock: SystemWallClock(), observer: logger,
            store: StateFile(path: directory.stateFile), random: .kernel(KernelRandom()))
        var loop = EventLoop(environment: environment, coordinator: pad)
        try loop.run()

        #expect(loop.display.frames.map(\.lines).contains(["Code accepted", "Welcome"]))
        #expect(output.levels == [false, true, false])
        let log = lines.joined(separator: "\n")
        #expect(log.contains("code submitted length=6 check=1"))
        #expect(log.contains("verify finished result=accepted exit=0"))
        #expect(log.contains("code checked result=accepted check=1"))
        #expect(!log.contains("918273"))
        let state = String(decoding: try FileReader.read(directory.stateFile, limit: 1 << 16), as: UTF8.self)
        #expect(state.contains("\"entry\": {\"failures\": 0"))
        #expect(!state.contains("918273"))
    }
}
