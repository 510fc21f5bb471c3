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
///   - `RESEND_PRESS_UNIX_MS`: the same as Unix milliseconds.
///   Standard input is /dev/null; standard output and standard error go, interleaved, into one
///   pipe; the first `outputLimit` bytes are kept for the log, the rest counted and dropped. The
///   pipe is always drained, so a chatty command never blocks on a full pipe.
/// - It runs in a process group of its own. At `timeout` the group gets SIGTERM, and SIGKILL
///   `killGrace` later if the command is still running; the outcome is then `.timedOut`.
/// - Its end is seen through a pidfd (Linux 5.3+). The pidfd and the pipe sit in one epoll
///   instance, `pollDescriptor`: register that once with the event source
///   (`LinuxEventSource.register(fileDescriptor:onReadable: runner.collect)`), and outcomes arrive
///   as `LoopInput.sendFinished`. The loop must also call `service(now:)` at `nextService`, when a
///   SIGTERM or SIGKILL is due.
/// - A command that cannot start (not found, not executable) gives its outcome at once from
///   `start`, with the reason.
///
/// One thread: create and use it on the event loop's thread. A class, so that the loop and the
/// event source's callback share it. Children still running when it goes away are killed (SIGKILL)
/// and reaped.
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

        /// SIGKILL follows SIGTERM after 2 s unless configured otherwise.
        public static let defaultKillGrace = TimeSpan.seconds(2)
        /// 4 KiB of output is kept per run: enough for an error message, bounded for the log.
        public static let defaultOutputLimit = 4096

        public init(arguments: [String], timeout: TimeSpan, killGrace: TimeSpan = defaultKillGrace, outputLimit: Int = defaultOutputLimit,
                    environment: [String: String] = [:]) {
            precondition(!arguments.isEmpty, "ProcessRunner: the command needs at least a program")
            precondition(timeout > .zero && killGrace >= .zero && outputLimit >= 0, "ProcessRunner: invalid limits")
            self.arguments = arguments
            self.timeout = timeout
            self.killGrace = killGrace
            self.outputLimit = outputLimit
            self.environment = environment
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
    private let clock = SystemClock()

    public init(_ configuration: Configuration) throws(HALError) {
        self.configuration = configuration
        pollDescriptor = try Syscall.run("epoll_create1") { rb_epoll_create() }
    }

    deinit {
        for child in children {
            _ = kill(-child.pid, SIGKILL)  // best effort on the way out; the reap below waits for it
            _ = rb_reap_blocking(child.pid)
            _ = close(child.pidFD)
            if let fd = child.outputFD { _ = close(fd) }
        }
        _ = close(pollDescriptor)
    }

    /// Sends still running.
    public var runningCount: Int { children.count }

    /// Starts the command for `request`; nil when it runs (its outcome comes later), the outcome at
    /// once when it could not start.
    public func start(_ request: SendRequest, now: Instant) -> SendOutcome? {
        func failure(_ reason: String, _ errno: Int32) -> SendOutcome {
            SendOutcome(sequence: request.sequence, ending: .couldNotStart(reason: reason, errno: errno), duration: .zero)
        }
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        do throws(HALError) {
            _ = try Syscall.run("pipe for the send command's output") { rb_output_pipe(&readFD, &writeFD) }
        } catch {
            return failure("\(error.operation): \(describe(error))", error.errno)
        }
        let environment = Self.environment(for: request, extra: configuration.environment)
        let started = clock.now()
        var pid: Int32 = 0
        let program = configuration.arguments[0]
        let spawned = withCStrings(configuration.arguments) { argv in
            withCStrings(environment) { envp in
                Syscall.result { rb_spawn(argv, envp, writeFD, &pid) }
            }
        }
        _ = close(writeFD)  // the child holds its copy; ours must go so EOF can come
        if let errno = spawned {
            _ = close(readFD)
            return failure("\(program): \(describe(errno: errno))", errno)
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
        children.append(Child(
            sequence: request.sequence, pid: pid, pidFD: pidFD, outputFD: readFD, started: started,
            terminateAt: started + configuration.timeout))
        return nil
    }

    /// The next SIGTERM (time-out) or SIGKILL (grace period over) due.
    public var nextService: Instant? {
        children.compactMap { child in child.killAt == nil ? child.terminateAt : (child.killed ? nil : child.killAt) }.min()
    }

    /// Sends what is due at `now`: SIGTERM to a command past its time-out, SIGKILL to one past the
    /// grace period. Outcomes come through `collect()`, never from here.
    public func service(now: Instant) -> [SendOutcome] {
        for index in children.indices {
            if children[index].killAt == nil, now >= children[index].terminateAt {
                signal(children[index].pid, SIGTERM)
                children[index].killAt = now + configuration.killGrace
            } else if let killAt = children[index].killAt, !children[index].killed, now >= killAt {
                signal(children[index].pid, SIGKILL)
                children[index].killed = true
            }
        }
        return []
    }

    /// Handles readiness of `pollDescriptor`: drains output pipes and reaps ended commands.
    /// Never blocks. Returns `.sendFinished` for each command that ended.
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
            let ending: SendOutcome.Ending
            if child.killAt != nil {
                ending = .timedOut(after: configuration.timeout, killed: child.killed)
            } else if signalled != 0 {
                ending = .signalled(signal: value)
            } else {
                ending = .exited(code: value)
            }
            inputs.insert(.sendFinished(SendOutcome(
                sequence: child.sequence, ending: ending, duration: clock.now() - child.started, output: child.output,
                droppedOutputBytes: child.dropped)), at: 0)
        }
        return inputs
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

    /// This program's environment with `extra` (the configuration's `send.environment`, sorted by
    /// name) and then the RESEND_* variables for `request` set over it.
    static func environment(for request: SendRequest, extra: [String: String] = [:]) -> [String] {
        let resend: [(String, String)] = [
            ("RESEND_ATTEMPT", String(request.attempt)),
            ("RESEND_COOLDOWN_SECONDS", String(request.cooldownSeconds)),
            ("RESEND_PRESS_TIME", iso8601(request.pressTime)),
            ("RESEND_PRESS_UNIX_MS", String(request.pressTime.millisecondsSinceEpoch)),
        ]
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

/// Calls `body` with a NULL-terminated C array of copies of `strings`, freed afterwards.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
    let pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) } + [nil]
    defer { for pointer in pointers { free(pointer) } }
    return body(pointers)
}
