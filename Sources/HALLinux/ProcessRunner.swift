import CLinuxOS
import HAL

/// Runs the send command as a child process without ever blocking the event loop.
///
/// - The command is an argv array, started with posix_spawnp (no shell: no quoting, no globbing;
///   a program name without a slash is looked up in PATH). It inherits this program's environment
///   plus:
///   - `RESEND_ATTEMPT`: the position of this send in the current run of sends (1 = first send,
///     2 = first resend, ...; a run ends after the policy's idle time);
///   - `RESEND_COOLDOWN_SECONDS`: the cooldown this press started, whole seconds;
///   - `RESEND_PRESS_TIME`: the press on the wall clock, ISO 8601 UTC with milliseconds
///     ("2024-06-10T12:34:56.789Z");
///   - `RESEND_PRESS_UNIX_MS`: the same as Unix milliseconds;
///   - `RESEND_SESSION_DIR` (both commands, with `sessionDirectory`): the session directory,
///     emptied before each send.
///   Standard input is /dev/null (for the verify command, `start(sequence:input:now:)`, and for a
///   send with a code made on the device, `SendRequest.input`: a pipe holding the code and a new
///   line, then end of file); standard output and standard error go, interleaved, into one
///   pipe; the first `outputLimit` bytes are kept for the log, the rest counted and dropped. The
///   pipe is always drained, so a chatty command never blocks on a full pipe.
/// - It runs in a process group of its own, and nothing it starts there outlives it: at `timeout`
///   the group gets SIGTERM, and SIGKILL `killGrace` later (the outcome is then `.timedOut`);
///   when the command ends by itself and its group still has members (a `sleep 1000 &`), they get
///   SIGTERM at once and SIGKILL `killGrace` later; `terminateAll()` does the same for everything
///   at the program's stop. A process that leaves the group (setsid, a double fork into another
///   session) is beyond reach, as it is for any supervisor short of a cgroup.
/// - Its end is seen through a pidfd (Linux 5.3+). The pidfd and the pipe sit in one epoll
///   instance, `pollDescriptor`: register that once with the event source
///   (`LinuxEventSource.register(fileDescriptor:onReadable: runner.collect)`), and outcomes arrive
///   as `LoopInput.commandFinished`. The loop must also call `service(now:)` at `nextService`, when a
///   SIGTERM or SIGKILL is due.
/// - A command that cannot start (not found, not executable) gives its outcome at once from
///   `start`, with the reason.
///
/// One thread: create and use it on the event loop's thread. A class, so that the loop and the
/// event source's callback share it. Process groups still there when it goes away get SIGKILL and
/// the commands are reaped (`terminateAll()` first gives them SIGTERM and the grace period).
public final class ProcessRunner: CommandRunner {
    public struct Configuration: Hashable, Sendable {
        /// The program and its arguments; must not be empty.
        public var arguments: [String]
        /// How long the command may run before SIGTERM.
        public var timeout: TimeSpan
        /// How long after SIGTERM before SIGKILL.
        public var killGrace: TimeSpan
        /// Bytes of output kept per run.
        public var outputLimit: Int
        /// Variables added to (or replacing in) the inherited environment, before the RESEND_*
        /// ones, which always win.
        public var environment: [String: String]
        /// What the command is for: its outcomes arrive as `.commandFinished(purpose, outcome)`.
        public var purpose: CommandPurpose
        /// The session directory (`SessionDirectory`), given as `RESEND_SESSION_DIR`; a send
        /// command's runner empties it before each send. Nil: none.
        public var sessionDirectory: String?

        /// SIGKILL follows SIGTERM after 2 s unless configured otherwise.
        public static let defaultKillGrace = TimeSpan.seconds(2)
        /// 4 KiB of output is kept per run: enough for an error message, bounded for the log.
        public static let defaultOutputLimit = 4096

        public init(
            arguments: [String], timeout: TimeSpan, killGrace: TimeSpan = defaultKillGrace, outputLimit: Int = defaultOutputLimit,
            environment: [String: String] = [:], purpose: CommandPurpose = .send, sessionDirectory: String? = nil
        ) {
            precondition(!arguments.isEmpty, "ProcessRunner: the command needs at least a program")
            precondition(timeout > .zero && killGrace >= .zero && outputLimit >= 0, "ProcessRunner: invalid limits")
            self.arguments = arguments
            self.timeout = timeout
            self.killGrace = killGrace
            self.outputLimit = outputLimit
            self.environment = environment
            self.purpose = purpose
            self.sessionDirectory = sessionDirectory
        }
    }

    private struct Child {
        var sequence: Int
        var pid: Int32
        var pidFD: Int32
        var outputFD: Int32?
        var started: Instant
        var terminateAt: Instant
        var killAt: Instant?
        var killed = false
        var output: [UInt8] = []
        var dropped = 0
    }

    public let configuration: Configuration
    /// The epoll descriptor to watch for readability (see the type).
    public let pollDescriptor: Int32
    private var children: [Child] = []
    /// Process groups of commands already reaped whose other members got SIGTERM: SIGKILL is due
    /// at `killAt`. The group id is the reaped command's pid; it cannot be reused while the group
    /// has members.
    private var lingering: [(group: Int32, killAt: Instant)] = []
    private let clock = SystemClock()

    public init(_ configuration: Configuration) throws(HALError) {
        self.configuration = configuration
        pollDescriptor = try Syscall.run("epoll_create1") { rb_epoll_create() }
    }

    deinit {
        killRemaining()
        _ = close(pollDescriptor)
    }

    /// SIGKILL to every group left, then reaps the commands (they cannot ignore SIGKILL).
    private func killRemaining() {
        for entry in lingering { _ = kill(-entry.group, SIGKILL) }
        lingering = []
        for child in children {
            _ = kill(-child.pid, SIGKILL)
            _ = rb_reap_blocking(child.pid)
            _ = close(child.pidFD)
            if let fd = child.outputFD { _ = close(fd) }
        }
        children = []
    }

    /// Ends every command still running and whatever it started in its process group, for the
    /// program's stop: SIGTERM to each group, then up to `killGrace` for them to go (checked every
    /// 10 ms), then SIGKILL to what is left, and every command is reaped. Blocks for at most about
    /// `killGrace`; returns at once when nothing runs. Their outcomes are not reported.
    public func terminateAll() {
        guard !children.isEmpty || !lingering.isEmpty else { return }
        for child in children where !child.killed { signal(child.pid, SIGTERM) }
        for entry in lingering { signal(entry.group, SIGTERM) }
        var groups = lingering.map { $0.group }
        lingering = []
        let giveUp = clock.now() + configuration.killGrace
        var pause = SleepDelay()
        while true {
            for index in children.indices.reversed() {
                var signalled: Int32 = 0
                var value: Int32 = 0
                guard rb_reap(children[index].pid, &signalled, &value) == 1 else { continue }
                let child = children.remove(at: index)
                _ = close(child.pidFD)
                if let fd = child.outputFD { closeOutput(fd) }
                groups.append(child.pid)
            }
            // kill(-group, 0) fails (ESRCH) once no member is left.
            groups.removeAll { kill(-$0, 0) != 0 }
            if children.isEmpty && groups.isEmpty { return }
            if clock.now() >= giveUp { break }
            pause.delay(.milliseconds(10))
        }
        lingering = groups.map { ($0, giveUp) }
        killRemaining()
    }

    /// Sends still running.
    public var runningCount: Int { children.count }

    /// Starts the command for `request`; nil when it runs (its outcome comes later), the outcome at
    /// once when it could not start.
    /// A code made on the device (`request.input`) goes to its standard input, then end of file,
    /// and is wiped (every copy sharing its storage) whether the command started or not.
    /// With a session directory, it is emptied first (a new send starts a new session); a send
    /// whose directory cannot be emptied does not start.
    public func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        if let session = configuration.sessionDirectory {
            do throws(HALError) {
                try SessionDirectory.empty(session)
            } catch {
                var code = request.input
                code?.wipe()
                return CommandOutcome(
                    sequence: request.sequence, ending: .couldNotStart(reason: "\(error.operation): \(describe(error))", errno: error.errno),
                    duration: .zero)
            }
        }
        let environment = Self.environment(for: request, extra: sessionEnvironment)
        guard var code = request.input else { return spawn(sequence: request.sequence, environment: environment, input: nil) }
        var input = code.digits + [UInt8(ascii: "\n")]
        code.wipe()
        defer { for index in input.indices { input[index] = 0 } }
        return spawn(sequence: request.sequence, environment: environment, input: input)
    }

    /// Starts the command (the verify command) for check `sequence` with `input` on its standard
    /// input, followed by end of file, and overwrites `input` with zeros before returning, whether
    /// it started or not. `input` goes nowhere else: not into argv, the environment (this
    /// program's, plus `environment` of the configuration, without the RESEND_* variables) or the
    /// outcome. At most `maximumInput` bytes (a code is far shorter). Like `start(_:now:)`: nil
    /// when it runs, the outcome at once when it could not start.
    public func start(sequence: Int, input: inout [UInt8], now: Instant) -> CommandOutcome? {
        precondition(input.count <= Self.maximumInput, "ProcessRunner: the input is longer than a pipe takes at once")
        defer { for index in input.indices { input[index] = 0 } }
        return spawn(sequence: sequence, environment: Self.environment(extra: sessionEnvironment), input: input)
    }

    /// The configuration's variables plus `RESEND_SESSION_DIR` when there is a session directory.
    private var sessionEnvironment: [String: String] {
        var extra = configuration.environment
        if let session = configuration.sessionDirectory { extra["RESEND_SESSION_DIR"] = session }
        return extra
    }

    /// The longest standard input `start(sequence:input:now:)` takes: PIPE_BUF, what a pipe holds
    /// at once (pipe(7)), so writing it never blocks.
    public static let maximumInput = 4096

    private func spawn(sequence: Int, environment: [String], input: [UInt8]?) -> CommandOutcome? {
        func failure(_ reason: String, _ errno: Int32) -> CommandOutcome {
            CommandOutcome(sequence: sequence, ending: .couldNotStart(reason: reason, errno: errno), duration: .zero)
        }
        var inputFD: Int32 = -1
        if let input {
            do throws(HALError) {
                _ = try Syscall.run("pipe for the command's standard input") {
                    input.withUnsafeBufferPointer { rb_input_pipe($0.baseAddress, $0.count, &inputFD) }
                }
            } catch {
                return failure("\(error.operation): \(describe(error))", error.errno)
            }
        }
        defer { if inputFD >= 0 { _ = close(inputFD) } }  // the child holds its copy
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        do throws(HALError) {
            _ = try Syscall.run("pipe for the command's output") { rb_output_pipe(&readFD, &writeFD) }
        } catch {
            return failure("\(error.operation): \(describe(error))", error.errno)
        }
        let started = clock.now()
        var pid: Int32 = 0
        let program = configuration.arguments[0]
        let stdinFD = inputFD
        let spawned = withCStrings(configuration.arguments) { argv in
            withCStrings(environment) { envp in
                Syscall.result { rb_spawn_with_input(argv, envp, stdinFD, writeFD, &pid) }
            }
        }
        _ = close(writeFD)  // the child holds its copy; ours must go so EOF can come
        if let errno = spawned {
            _ = close(readFD)
            return failure(Self.startFailureReason(program, errno: errno), errno)
        }
        let pidFD: Int32
        do throws(HALError) {
            pidFD = try Syscall.run("pidfd_open") { rb_pidfd_open(pid) }
            let epoll = pollDescriptor
            _ = try Syscall.run("epoll_ctl add pidfd") { rb_epoll_add(epoll, pidFD) }
            _ = try Syscall.run("epoll_ctl add output pipe") { rb_epoll_add(epoll, readFD) }
        } catch {
            // Without a pidfd the end of the child cannot be seen: do not leave it running.
            _ = kill(-pid, SIGKILL)
            _ = rb_reap_blocking(pid)
            _ = close(readFD)
            return failure("\(error.operation): \(describe(error))", error.errno)
        }
        children.append(
            Child(
                sequence: sequence, pid: pid, pidFD: pidFD, outputFD: readFD, started: started,
                terminateAt: started + configuration.timeout))
        return nil
    }

    /// The next SIGTERM (time-out) or SIGKILL (grace period over) due.
    public var nextService: Instant? {
        let commands = children.compactMap { child in child.killAt == nil ? child.terminateAt : (child.killed ? nil : child.killAt) }.min()
        return earliestInstant(commands, lingering.map { $0.killAt }.min())
    }

    /// Sends what is due at `now`: SIGTERM to a command past its time-out, SIGKILL to one past the
    /// grace period. Outcomes come through `collect()`, never from here.
    public func service(now: Instant) -> [CommandOutcome] {
        for index in children.indices {
            if children[index].killAt == nil, now >= children[index].terminateAt {
                signal(children[index].pid, SIGTERM)
                children[index].killAt = now + configuration.killGrace
            } else if let killAt = children[index].killAt, !children[index].killed, now >= killAt {
                signal(children[index].pid, SIGKILL)
                children[index].killed = true
            }
        }
        for entry in lingering where now >= entry.killAt {
            signal(entry.group, SIGKILL)
        }
        lingering.removeAll { now >= $0.killAt }
        return []
    }

    /// Handles readiness of `pollDescriptor`: drains output pipes and reaps ended commands.
    /// Never blocks. Returns `.commandFinished` with the configuration's purpose for each command
    /// that ended.
    public func collect() throws(HALError) -> [LoopInput] {
        var ready = [Int32](repeating: -1, count: 16)
        let epoll = pollDescriptor
        let count = try Syscall.run("epoll_wait") { rb_epoll_ready(epoll, &ready, 16) }
        let readyFDs = Array(ready[0..<Int(count)])
        var inputs: [LoopInput] = []
        for index in children.indices.reversed() {
            if let fd = children[index].outputFD, readyFDs.contains(fd) {
                drain(&children[index])
            }
            guard readyFDs.contains(children[index].pidFD) else { continue }
            var signalled: Int32 = 0
            var value: Int32 = 0
            let pid = children[index].pid
            guard try Syscall.run("waitpid", { rb_reap(pid, &signalled, &value) }) == 1 else { continue }
            var child = children.remove(at: index)
            drain(&child)  // what the command wrote just before it ended
            if let fd = child.outputFD { closeOutput(fd) }
            _ = try? Syscall.run("epoll_ctl remove pidfd") { rb_epoll_remove(epoll, child.pidFD) }
            _ = close(child.pidFD)
            cleanUpGroup(of: child)
            let ending: CommandOutcome.Ending
            if child.killAt != nil {
                ending = .timedOut(after: configuration.timeout, killed: child.killed)
            } else if signalled != 0 {
                ending = .signalled(signal: value)
            } else {
                ending = .exited(code: value)
            }
            let outcome = CommandOutcome(
                sequence: child.sequence, ending: ending, duration: clock.now() - child.started, output: child.output,
                droppedOutputBytes: child.dropped)
            inputs.insert(.commandFinished(configuration.purpose, outcome), at: 0)
        }
        return inputs
    }

    /// The command `child` was reaped: what it left running in its group gets SIGTERM now (or
    /// keeps the SIGKILL already due after a time-out), and SIGKILL after the grace period.
    /// The group id is the reaped command's pid: while a member is left the kernel keeps that
    /// number allocated, so it cannot name another group; once none is left kill() fails (ESRCH).
    private func cleanUpGroup(of child: Child) {
        if child.killed { return }  // SIGKILL went to the whole group already
        if let killAt = child.killAt {
            if kill(-child.pid, 0) == 0 { lingering.append((child.pid, killAt)) }
        } else if kill(-child.pid, SIGTERM) == 0 {
            lingering.append((child.pid, clock.now() + configuration.killGrace))
        }
    }

    /// Reads what the pipe holds now, keeping up to the limit; at end of file closes it.
    private func drain(_ child: inout Child) {
        guard let fd = child.outputFD else { return }
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = CLinuxOS.read(fd, &chunk, chunk.count)
            if count > 0 {
                let room = max(0, configuration.outputLimit - child.output.count)
                child.output += chunk[0..<min(room, count)]
                child.dropped += max(0, count - room)
            } else if count == 0 {
                closeOutput(fd)
                child.outputFD = nil
                return
            } else if rb_errno() == EINTR {
                continue
            } else {
                // EAGAIN: drained for now. Any other error: give up on the output, not the child.
                if rb_errno() != EAGAIN {
                    closeOutput(fd)
                    child.outputFD = nil
                }
                return
            }
        }
    }

    private func closeOutput(_ fd: Int32) {
        let epoll = pollDescriptor
        _ = try? Syscall.run("epoll_ctl remove output pipe") { rb_epoll_remove(epoll, fd) }
        _ = close(fd)
    }

    /// Signals the command's process group. ESRCH (already gone) is fine: its pidfd reports the end.
    private func signal(_ pid: Int32, _ number: Int32) {
        _ = kill(-pid, number)
    }

    /// Why `program` could not start, in the user's terms: posix_spawnp says EACCES alike for a
    /// directory and for a file without execute permission, so the file is looked at (in PATH
    /// when the name has no slash, as posix_spawnp searched).
    static func startFailureReason(_ program: String, errno: Int32) -> String {
        let plain = "\(program): \(describe(errno: errno))"
        guard errno == EACCES, let (path, info) = locate(program) else { return plain }
        let shown = path == program ? program : "\(program) (\(path))"
        let type = FileType(mode: info.st_mode)
        if type != .regular {
            return "\(shown): is \(type.description), not a program"
        }
        if info.st_mode & 0o111 == 0 {
            var mode = String(info.st_mode & 0o7777, radix: 8)
            mode = String(repeating: "0", count: max(0, 4 - mode.count)) + mode
            return "\(shown): is not executable (mode \(mode): no execute permission; chmod +x it)"
        }
        return plain  // e.g. a noexec mount or a directory on the way without search permission
    }

    /// The file posix_spawnp would run for `program` (stat follows links, as exec does), or nil.
    private static func locate(_ program: String) -> (String, stat)? {
        var info = stat()
        if program.contains("/") {
            return stat(program, &info) == 0 ? (program, info) : nil
        }
        let searchPath = getenv("PATH").map { String(cString: $0) } ?? "/bin:/usr/bin"
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + program
            if stat(candidate, &info) == 0 { return (candidate, info) }
        }
        return nil
    }

    /// This program's environment with `extra` (the configuration's `send.environment`, sorted by
    /// name) and then the RESEND_* variables for `request` set over it.
    static func environment(for request: SendRequest, extra: [String: String] = [:]) -> [String] {
        environment(
            extra: extra,
            resend: [
                ("RESEND_ATTEMPT", String(request.attempt)),
                ("RESEND_COOLDOWN_SECONDS", String(request.cooldownSeconds)),
                ("RESEND_PRESS_TIME", iso8601(request.pressTime)),
                ("RESEND_PRESS_UNIX_MS", String(request.pressTime.millisecondsSinceEpoch)),
            ])
    }

    /// This program's environment with `extra` (sorted by name) and then `resend` set over it.
    static func environment(extra: [String: String], resend: [(String, String)] = []) -> [String] {
        let ours = extra.filter { name, _ in !resend.contains { $0.0 == name } }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + resend
        var result: [String] = []
        if var entry = rb_environ() {
            while let pointer = entry.pointee {
                let text = String(cString: pointer)
                if !ours.contains(where: { text.hasPrefix($0.0 + "=") }) { result.append(text) }
                entry = entry.advanced(by: 1)
            }
        }
        return result + ours.map { $0.0 + "=" + $0.1 }
    }
}

extension Syscall {
    /// Runs `call` (the C shim convention: -1 with errno) and returns nil on success, the errno on
    /// failure. For callers that turn a failure into a value rather than a thrown error.
    static func result(_ call: () -> Int32) -> Int32? {
        do throws(HALError) {
            _ = try run("call") { call() }
            return nil
        } catch {
            return error.errno
        }
    }
}

private func earliestInstant(_ a: Instant?, _ b: Instant?) -> Instant? {
    guard let a else { return b }
    guard let b else { return a }
    return min(a, b)
}

/// Calls `body` with a NULL-terminated C array of copies of `strings`, freed afterwards.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
