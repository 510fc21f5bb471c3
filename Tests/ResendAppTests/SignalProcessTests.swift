import Glibc
import HAL
import HALLinux
import Testing

/// The built `resend-button`, started with SIGINT/SIGTERM at their defaults and unblocked (as a
/// shell starts a foreground command), its standard output on a pipe that is read only on request.
private final class Running {
    let pid: pid_t
    let output: Int32
    private var buffer: [UInt8] = []
    private(set) var lines: [String] = []
    private var status: Int32?

    init(_ arguments: [String]) throws {
        let binary = try #require(builtBinary(), "build the executable first: swift build").path
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { precondition(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([binary] + arguments).map { strdup($0) } + [nil]
        var child: pid_t = 0
        let result = posix_spawn(&child, binary, &actions, &attributes, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
        for pointer in argv { free(pointer) }
        _ = close(fds[1])
        precondition(result == 0, "posix_spawn failed: \(result)")
        pid = child
        output = fds[0]
    }

    deinit {
        if status == nil {
            _ = kill(pid, SIGKILL)
            var raw: Int32 = 0
            _ = waitpid(pid, &raw, 0)
        }
        _ = close(output)
    }

    /// True once standard output has something to read (without reading it), within `seconds`.
    func outputStarted(within seconds: Int32) -> Bool {
        var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, seconds * 1000) > 0
    }

    /// Reads lines until one satisfies `match` (lines already read count too), within `seconds`.
    func waitForLine(within seconds: Double, _ match: (String) -> Bool) -> String? {
        let clock = SystemClock()
        let giveUp = clock.now() + .milliseconds(Int64(seconds * 1000))
        var checked = 0
        while true {
            while let newline = buffer.firstIndex(of: 0x0A) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                buffer.removeSubrange(...newline)
            }
            while checked < lines.count {
                if match(lines[checked]) { return lines[checked] }
                checked += 1
            }
            guard clock.now() < giveUp else { return nil }
            var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[0..<count]
        }
    }

    /// Reads the rest of standard output (up to end of file, within `seconds`).
    func readRest(within seconds: Double) {
        _ = waitForLine(within: seconds) { _ in false }
    }

    /// Waits up to `seconds` for the process to end; its wait status and how long it took.
    func waitForEnd(within seconds: Double) -> (status: Int32, took: TimeSpan)? {
        let clock = SystemClock()
        let started = clock.now()
        while clock.now() - started < .milliseconds(Int64(seconds * 1000)) {
            var raw: Int32 = 0
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = raw
                return (raw, clock.now() - started)
            }
            var pause = SleepDelay()
            pause.delay(.milliseconds(5))
        }
        return nil
    }
}

private func killedBy(_ status: Int32) -> Int32? { status & 0x7F != 0 && status & 0x7F != 0x7F ? status & 0x7F : nil }
private func exitCode(_ status: Int32) -> Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }

/// The state letter in /proc/PID/stat; nil when the process is gone.
private func processState(_ pid: Int32) -> String? {
    guard let bytes = try? FileReader.read("/proc/\(pid)/stat", limit: 4096) else { return nil }
    let line = String(decoding: bytes, as: UTF8.self)
    guard let close = line.lastIndex(of: ")") else { return nil }
    return line[line.index(after: close)...].split(separator: " ").first.map(String.init)
}

/// Waits up to `seconds` for `pid` to be gone or dead (a zombie left to a reaper that is not us).
private func gone(_ pid: Int32, within seconds: Double) -> Bool {
    let clock = SystemClock()
    let giveUp = clock.now() + .milliseconds(Int64(seconds * 1000))
    while true {
        let state = processState(pid)
        if state == nil || state == "Z" || state == "X" { return true }
        if clock.now() >= giveUp { return false }
        var pause = SleepDelay()
        pause.delay(.milliseconds(10))
    }
}

/// The pid a command wrote to `path`, waiting up to 5 s for it.
private func pid(in path: String) -> Int32? {
    let clock = SystemClock()
    let giveUp = clock.now() + .seconds(5)
    while clock.now() < giveUp {
        if let bytes = try? FileReader.read(path, limit: 64), let pid = Int32(String(decoding: bytes, as: UTF8.self).split(separator: "\n").first ?? "") {
            return pid
        }
        var pause = SleepDelay()
        pause.delay(.milliseconds(10))
    }
    return nil
}

/// An executable shell script in `directory`.
private func script(_ directory: StateDirectory, _ name: String, _ body: String) -> String {
    directory.write(name, "#!/bin/sh\n" + body)
    precondition(chmod(directory.path + "/" + name, 0o755) == 0)
    return directory.path + "/" + name
}

@Suite("Signals and the send command's process group, with the built binary", .serialized, .timeLimit(.minutes(1)))
struct SignalProcessTests {
    @Test("a day-long headless run on virtual time ends at once on SIGTERM or SIGINT, killed by the signal (143 or 130 in a shell)",
          arguments: [SIGTERM, SIGINT])
    func virtualTimeRun(signal: Int32) throws {
        // Nobody reads the output: the run fills the pipe and waits there, as long as it takes.
        let run = try Running(["simulate", "--headless", "--duration", "86400", "--script", "press@0 end@86400"])
        #expect(run.outputStarted(within: 10))
        _ = kill(run.pid, signal)
        let end = try #require(run.waitForEnd(within: 5), "still running 5 s after the signal")
        #expect(killedBy(end.status) == signal, "wait status \(end.status)")
        #expect(end.took < .milliseconds(500))
    }

    @Test("a real-time headless run stops gracefully on SIGINT: the stopped screen, exit 0, at once")
    func realtimeStops() throws {
        let run = try Running(["simulate", "--headless", "--realtime", "--duration", "60", "--script", "press@0"])
        #expect(run.waitForLine(within: 10) { $0.hasSuffix("|Resend (60)     |") } != nil)
        _ = kill(run.pid, SIGINT)
        let end = try #require(run.waitForEnd(within: 5))
        #expect(exitCode(end.status) == 0)
        #expect(end.took < .milliseconds(500))
        run.readRest(within: 2)
        #expect(run.lines.last?.hasSuffix(" screen |Stopped         |                |") == true)
    }

    @Test("a command hung past the countdown is SIGKILLed and its outcome still shows: killed=1, Send failed")
    func hungCommandOutcome() throws {
        let directory = StateDirectory()
        let hang = script(directory, "hang", "trap '' TERM\nexec sleep 1000\n")
        let run = try Running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "1", "--send-timeout", "1", "--send-command", hang,
            "--script", "press@0",
        ])
        let finished = run.waitForLine(within: 10) { $0.contains(" send finished ") }
        #expect(finished?.contains(" send finished result=timeout after_ms=1000 killed=1 ms=") == true)
        #expect(run.waitForLine(within: 2) { $0.hasSuffix(" screen |Send failed     |Resend          |") } != nil)
        let end = try #require(run.waitForEnd(within: 5))
        #expect(exitCode(end.status) == 0)
    }

    @Test("what the send command leaves running in its process group is ended when the command exits")
    func grandchildEndsWithCommand() throws {
        let directory = StateDirectory()
        let command = script(directory, "send", "sleep 1000 &\necho $! > \(directory.path)/grandchild\n")
        let run = try Running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "30", "--send-command", command, "--script", "press@0",
        ])
        #expect(run.waitForLine(within: 10) { $0.contains(" send finished result=ok ") } != nil)
        let grandchild = try #require(pid(in: directory.path + "/grandchild"))
        #expect(gone(grandchild, within: 2), "the grandchild \(grandchild) outlived the command")
        _ = kill(run.pid, SIGTERM)
        #expect(run.waitForEnd(within: 5).map { exitCode($0.status) } == 0)
    }

    @Test("on SIGTERM the program ends a running send command and its group (SIGTERM, SIGKILL after the grace) before it exits 0")
    func groupEndsWithProgram() throws {
        let directory = StateDirectory()
        let command = script(directory, "send", """
            sh -c 'trap "" TERM; echo $$ > \(directory.path)/stubborn.tmp; mv \(directory.path)/stubborn.tmp \(directory.path)/stubborn; exec sleep 1000' &
            echo $$ > \(directory.path)/command
            sleep 1000

            """)
        let run = try Running([
            "simulate", "--headless", "--realtime", "--events", "--duration", "30", "--send-command", command, "--script", "press@0",
        ])
        let leader = try #require(pid(in: directory.path + "/command"))
        let stubborn = try #require(pid(in: directory.path + "/stubborn"))
        _ = kill(run.pid, SIGTERM)
        let end = try #require(run.waitForEnd(within: 10))
        #expect(exitCode(end.status) == 0)
        // The command ends on SIGTERM; the grandchild ignoring it gets SIGKILL after the 2 s grace.
        #expect(end.took >= .milliseconds(1_900) && end.took < .seconds(4), "took \(end.took)")
        #expect(gone(leader, within: 1))
        #expect(gone(stubborn, within: 1))
    }
}
