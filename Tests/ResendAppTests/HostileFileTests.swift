import Glibc
import HAL
import HALLinux
import HALMock
import ResendCore
import Testing

@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// What `resend-button ARGS` did with the real file system (the product's own readers).
private func runReal(_ arguments: [String]) -> CommandResult {
    runCaptured(arguments, readConfig: ConfigFileContents.read, readText: ConfigFileContents.read(_:limit:what:))
}

private let isRoot = getuid() == 0

@Suite("Hostile files: config, script and state paths", .timeLimit(.minutes(1)))
struct HostileFileTests {
    @Test("config check says why a file cannot be read, in one line, exit 78, and never blocks or follows a link")
    func configCheckReasons() throws {
        let hostile = TemporaryDirectory()
        let valid = hostile.write("valid.json5", "{}")
        var cases: [(String, String)] = [
            (hostile.path + "/missing.json5", "ENOENT (2): no such file or directory"),
            (hostile.directory("dir"), "is a directory, not a regular file"),
            (hostile.symlink("loop", to: "loop"), "is a symbolic link (not followed: name the file itself)"),
            (hostile.path + "/loop/config.json5", "ELOOP (40): too many levels of symbolic links"),
            (hostile.symlink("link.json5", to: valid), "is a symbolic link (not followed: name the file itself)"),
            (hostile.fifo("fifo"), "is a FIFO (named pipe), not a regular file"),
            (
                hostile.sparseFile("huge.json5", size: DeviceConfig.maximumFileSize + 1),
                "is larger than 4194304 bytes (the limit for a configuration file)"
            ),
        ]
        if isRoot, let zero = hostile.deviceNode("zero", minor: 5) {
            cases.append((zero, "is a character device, not a regular file"))
        }
        for (path, reason) in cases {
            let before = identity(path)
            let result = runReal(["config", "check", path])
            #expect(result.code == .config, "\(path)")
            #expect(result.err == ["\(path): cannot read the configuration file: \(reason)"])
            #expect(identity(path) == before)
        }
        #expect(runReal(["config", "check", valid]).code == .ok)
    }

    @Test("a --script-file that is a FIFO, a directory, a link or too large is a usage error (64) naming why")
    func scriptFileReasons() {
        let hostile = TemporaryDirectory()
        let script = hostile.write("script.txt", "press@0\n")
        let cases: [(String, String)] = [
            (hostile.fifo("fifo"), "is a FIFO (named pipe), not a regular file"),
            (hostile.directory("dir"), "is a directory, not a regular file"),
            (hostile.symlink("link", to: script), "is a symbolic link (not followed: name the file itself)"),
            (hostile.sparseFile("huge", size: maximumScriptFileSize + 1), "is larger than 16777216 bytes (the limit for a script file)"),
            (hostile.path + "/none", "ENOENT (2): no such file or directory"),
        ]
        for (path, reason) in cases {
            let result = runReal(["simulate", "--headless", "--script-file", path])
            #expect(result.code == .usage)
            #expect(result.err == ["simulate: --script-file: cannot read '\(path)': \(reason)"])
        }
        #expect(runReal(["simulate", "--headless", "--script-file", script]).code == .ok)
    }

    @Test(
        "a state file path that is a device node (a mknod copy of /dev/null) is refused at start and left exactly as it was",
        .enabled(if: isRoot, "mknod needs root"))
    func stateFileDevice() throws {
        let hostile = TemporaryDirectory()
        let null = try #require(hostile.deviceNode("null", minor: 3))
        let config = hostile.write("config.json5", "{stateFile: '\(null)'}")
        let before = identity(null)
        let reason = "is a character device, not a regular file; the state file must be a regular file or not exist yet; it was left as it is"

        let fromConfig = runReal(["run", "--config", config])
        #expect(fromConfig.code == .config)
        #expect(fromConfig.err == ["\(config): stateFile: \"\(null)\" \(reason)"])

        let fromFlag = runReal(["run", "--config", config, "--state-file", null])
        #expect(fromFlag.code == .usage)
        #expect(fromFlag.err == ["run: --state-file: '\(null)' \(reason)"])

        let simulated = runReal(["simulate", "--headless", "--config", config, "--state-file", null, "--script", "press@0"])
        #expect(simulated.code == .usage)
        #expect(simulated.err == ["simulate: --state-file: '\(null)' \(reason)"])
        #expect(simulated.out.isEmpty)

        #expect(identity(null) == before)
        #expect(hostile.names == ["config.json5", "null"], "no PATH.tmp, no PATH.corrupt-N")
    }

    @Test(
        "a FIFO, a directory or a symbolic link as the state file is refused at start (64 from the flag) and left as it was",
        arguments: [
            "fifo", "dir", "link",
        ])
    func stateFileOtherTypes(kind: String) {
        let hostile = TemporaryDirectory()
        let target = hostile.write("target", "{}")
        let path: String
        let reason: String
        switch kind {
        case "fifo": (path, reason) = (hostile.fifo("state"), "is a FIFO (named pipe), not a regular file")
        case "dir": (path, reason) = (hostile.directory("state"), "is a directory, not a regular file")
        default: (path, reason) = (hostile.symlink("state", to: target), "is a symbolic link (not followed: name the file itself)")
        }
        let before = identity(path)
        let result = runReal(["simulate", "--headless", "--state-file", path, "--script", "press@0"])
        #expect(result.code == .usage)
        #expect(
            result.err == [
                "simulate: --state-file: '\(path)' \(reason); the state file must be a regular file or not exist yet; it was left as it is"
            ])
        #expect(identity(path) == before)
        #expect(hostile.names == ["state", "target"])
    }
}

/// A send command that hangs: SIGTERM at its 2 s time-out is ignored, SIGKILL goes 2 s later, and
/// from then on it wants no service: its end comes only through the event source (the pidfd).
private final class HungCommand: CommandRunner {
    var sequence = 0
    var terminateAt: Instant?
    var killAt: Instant?
    var killedAt: Instant?
    var reported = false

    func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        sequence = request.sequence
        terminateAt = now + .seconds(2)
        return nil
    }

    var nextService: Instant? { terminateAt ?? killAt }

    func service(now: Instant) -> [CommandOutcome] {
        if let due = terminateAt, now >= due {
            terminateAt = nil
            killAt = now + .seconds(2)
        } else if let due = killAt, now >= due {
            killAt = nil
            killedAt = now
        }
        return []
    }

    /// Running until its outcome has been reported.
    var busy: Bool { sequence > 0 && !reported }
}

/// The pidfd of the hung command: readable 5 ms after the SIGKILL.
private struct PidfdSource: EventSource {
    let clock: ManualClock
    let command: HungCommand

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        if let killed = command.killedAt, !command.reported, deadline.map({ killed + .milliseconds(5) <= $0 }) ?? true {
            clock.set(to: killed + .milliseconds(5))
            command.reported = true
            let outcome = CommandOutcome(
                sequence: command.sequence, ending: .timedOut(after: .seconds(2), killed: true), duration: .milliseconds(4_005))
            return [.commandFinished(.send, outcome)]
        }
        guard let deadline else { return [.stop] }  // nothing can come any more
        if deadline > clock.now() { clock.set(to: deadline) }
        return []
    }
}

@Suite("A hung send command on the real-time headless source")
struct HungSendTests {
    @Test("when the countdown ended before the hung command was SIGKILLed, its outcome still shows: killed=1 and Send failed")
    func killedAfterCountdown() throws {
        let clock = ManualClock()
        var settings = BehaviourSettings()
        settings.durationSeconds = 1
        var device = MockDevice(
            settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true))
        try device.startDisplay(now: clock.now())
        let start = clock.now()
        let capture = Capture()
        let printer = HeadlessPrinter(emulator: device.emulator, led: device.led, start: start, events: true, output: capture.printOut)
        let command = HungCommand()
        let source = RealtimeScriptSource(
            inner: PidfdSource(clock: clock, command: command), pending: scriptInputs(try parseScript("press@0", command: "test"), start: start),
            clock: clock, busy: { command.busy })
        var services = SimulationServices()
        services.mockSend = [.succeeds(after: .seconds(1))]  // only to configure the controller for a send command
        let environment = LoopEnvironment(
            source: source, display: device.display, outputs: Outputs(led: device.led), commands: .send(command), clock: clock,
            wallClock: ManualWallClock(WallTime(millisecondsSinceEpoch: 1_718_000_000_000), following: clock), observer: printer,
            store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(
                controller: try services.controllerConfig(settings, command: "test"), button: settings.makeDebouncer(), keypad: nil))
        try loop.run()
        #expect(capture.out.contains("1.020 screen |Sending...      |Resend          |"), "the countdown ended while the command ran")
        #expect(capture.out.contains("4.025 send finished result=timeout after_ms=2000 killed=1 ms=4005"))
        #expect(capture.out.contains("4.025 screen |Send failed     |Resend          |"))
        #expect(capture.out.last?.hasSuffix(" screen |Stopped         |                |") == true)
    }
}
