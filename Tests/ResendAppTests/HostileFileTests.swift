import Glibc
import HAL
import HALLinux
import HALMock
import ResendCore
import Testing
@testable import ResendApp
@testable import ResendConfig

/// What `resend-button ARGS` did with the real file system (the product's own readers).
private func runReal(_ arguments: [String]) -> (code: ExitCode, out: [String], err: [String]) {
    final class Lines: @unchecked Sendable { var out: [String] = []; var err: [String] = [] }
    let lines = Lines()
    let console = Console(
        out: { lines.out.append($0) }, err: { lines.err.append($0) }, readFile: { _ in nil },
        readConfig: ConfigFileContents.read, readText: ConfigFileContents.read(_:limit:what:))
    let code = runCommandLine(arguments, console: console, interactive: { _ throws(ExitError) in })
    return (code, lines.out, lines.err)
}

/// A temporary directory holding hostile things (device nodes made with mknod, never the real ones).
private final class Hostile {
    let directory = StateDirectory()
    var path: String { directory.path }

    func fifo(_ name: String) -> String {
        precondition(mkfifo(path + "/" + name, 0o644) == 0)
        return path + "/" + name
    }

    func symlink(_ name: String, to target: String) -> String {
        precondition(Glibc.symlink(target, path + "/" + name) == 0)
        return path + "/" + name
    }

    func subdirectory(_ name: String) -> String {
        precondition(mkdir(path + "/" + name, 0o755) == 0)
        return path + "/" + name
    }

    /// A character device with the numbers of /dev/null (minor 3) or /dev/zero (minor 5); nil
    /// without the privilege to make one.
    func device(_ name: String, minor: UInt) -> String? {
        mknod(path + "/" + name, S_IFCHR | 0o666, dev_t((1 << 8) | minor)) == 0 ? path + "/" + name : nil
    }

    /// A regular file of `size` bytes that takes no space.
    func sparse(_ name: String, size: Int) -> String {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        precondition(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
        _ = close(fd)
        return path + "/" + name
    }

    func file(_ name: String, _ text: String) -> String {
        directory.write(name, text)
        return path + "/" + name
    }

    /// Type, device numbers, inode, size and link target: "left exactly as it was".
    func identity(_ full: String) -> String {
        var info = stat()
        guard lstat(full, &info) == 0 else { return "missing" }
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(full, &target, target.count - 1)
        let link = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return "mode=\(String(info.st_mode, radix: 8)) rdev=\(info.st_rdev) ino=\(info.st_ino) size=\(info.st_size) link=\(link)"
    }

    /// The names in the directory, sorted.
    var names: [String] {
        guard let handle = opendir(path) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

private let isRoot = getuid() == 0

@Suite("Hostile files: config, script and state paths", .timeLimit(.minutes(1)))
struct HostileFileTests {
    @Test("config check says why a file cannot be read, in one line, exit 78, and never blocks or follows a link")
    func configCheckReasons() throws {
        let hostile = Hostile()
        let valid = hostile.file("valid.json5", "{}")
        var cases: [(String, String)] = [
            (hostile.path + "/missing.json5", "ENOENT (2): no such file or directory"),
            (hostile.subdirectory("dir"), "is a directory, not a regular file"),
            (hostile.symlink("loop", to: "loop"), "is a symbolic link (not followed: name the file itself)"),
            (hostile.path + "/loop/config.json5", "ELOOP (40): too many levels of symbolic links"),
            (hostile.symlink("link.json5", to: valid), "is a symbolic link (not followed: name the file itself)"),
            (hostile.fifo("fifo"), "is a FIFO (named pipe), not a regular file"),
            (hostile.sparse("huge.json5", size: DeviceConfig.maximumFileSize + 1),
             "is larger than 4194304 bytes (the limit for a configuration file)"),
        ]
        if isRoot, let zero = hostile.device("zero", minor: 5) {
            cases.append((zero, "is a character device, not a regular file"))
        }
        for (path, reason) in cases {
            let before = hostile.identity(path)
            let result = runReal(["config", "check", path])
            #expect(result.code == .config, "\(path)")
            #expect(result.err == ["\(path): cannot read the configuration file: \(reason)"])
            #expect(hostile.identity(path) == before)
        }
        #expect(runReal(["config", "check", valid]).code == .ok)
    }

    @Test("a --script-file that is a FIFO, a directory, a link or too large is a usage error (64) naming why")
    func scriptFileReasons() {
        let hostile = Hostile()
        let script = hostile.file("script.txt", "press@0\n")
        let cases: [(String, String)] = [
            (hostile.fifo("fifo"), "is a FIFO (named pipe), not a regular file"),
            (hostile.subdirectory("dir"), "is a directory, not a regular file"),
            (hostile.symlink("link", to: script), "is a symbolic link (not followed: name the file itself)"),
            (hostile.sparse("huge", size: maximumScriptFileSize + 1), "is larger than 16777216 bytes (the limit for a script file)"),
            (hostile.path + "/none", "ENOENT (2): no such file or directory"),
        ]
        for (path, reason) in cases {
            let result = runReal(["simulate", "--headless", "--script-file", path])
            #expect(result.code == .usage)
            #expect(result.err == ["simulate: --script-file: cannot read '\(path)': \(reason)"])
        }
        #expect(runReal(["simulate", "--headless", "--script-file", script]).code == .ok)
    }

    @Test("a state file path that is a device node (a mknod copy of /dev/null) is refused at start and left exactly as it was",
          .enabled(if: isRoot, "mknod needs root"))
    func stateFileDevice() throws {
        let hostile = Hostile()
        let null = try #require(hostile.device("null", minor: 3))
        let config = hostile.file("config.json5", "{stateFile: '\(null)'}")
        let before = hostile.identity(null)
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

        #expect(hostile.identity(null) == before)
        #expect(hostile.names == ["config.json5", "null"], "no PATH.tmp, no PATH.corrupt-N")
    }

    @Test("a FIFO, a directory or a symbolic link as the state file is refused at start (64 from the flag) and left as it was", arguments: [
        "fifo", "dir", "link",
    ])
    func stateFileOtherTypes(kind: String) {
        let hostile = Hostile()
        let target = hostile.file("target", "{}")
        let path: String
        let reason: String
        switch kind {
        case "fifo": (path, reason) = (hostile.fifo("state"), "is a FIFO (named pipe), not a regular file")
        case "dir": (path, reason) = (hostile.subdirectory("state"), "is a directory, not a regular file")
        default: (path, reason) = (hostile.symlink("state", to: target), "is a symbolic link (not followed: name the file itself)")
        }
        let before = hostile.identity(path)
        let result = runReal(["simulate", "--headless", "--state-file", path, "--script", "press@0"])
        #expect(result.code == .usage)
        #expect(result.err == ["simulate: --state-file: '\(path)' \(reason); the state file must be a regular file or not exist yet; it was left as it is"])
        #expect(hostile.identity(path) == before)
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
            let outcome = CommandOutcome(sequence: command.sequence, ending: .timedOut(after: .seconds(2), killed: true), duration: .milliseconds(4_005))
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
        var device = MockDevice(settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true))
        try device.startDisplay(now: clock.now())
        let start = clock.now()
        final class Lines: @unchecked Sendable { var lines: [String] = [] }
        let lines = Lines()
        let printer = HeadlessPrinter(emulator: device.emulator, led: device.led, start: start, events: true, output: { lines.lines.append($0) })
        let command = HungCommand()
        let source = RealtimeScriptSource(
            inner: PidfdSource(clock: clock, command: command), pending: scriptInputs(try parseScript("press@0", command: "test"), start: start),
            clock: clock, busy: { command.busy })
        var services = SimulationServices()
        services.mockSend = [.succeeds(after: .seconds(1))]  // only to configure the controller for a send command
        let environment = TestEnvironment(
            source: source, display: device.display, led: device.led, strike: NoStrike(), clock: clock, observer: printer,
            sender: command, verifier: NoCodeVerifier(), store: NoStateStorage?.none,
            wallClock: ManualWallClock(WallTime(millisecondsSinceEpoch: 1_718_000_000_000), following: clock))
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(
                controller: try services.controllerConfig(settings, command: "test"), button: settings.makeDebouncer(), keypad: nil))
        try loop.run()
        #expect(lines.lines.contains("1.020 screen |Sending...      |Resend          |"), "the countdown ended while the command ran")
        #expect(lines.lines.contains("4.025 send finished result=timeout after_ms=2000 killed=1 ms=4005"))
        #expect(lines.lines.contains("4.025 screen |Send failed     |Resend          |"))
        #expect(lines.lines.last?.hasSuffix(" screen |Stopped         |                |") == true)
    }
}
