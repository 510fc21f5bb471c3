import Glibc
import HAL

// Real processes for the tests that are about real time, a signal, a kill or a file: the built
// `resend-button` or a shell command, started, read line by line with a time limit, and reaped.

/// The `resend-button` executable of this build: in the build products directory above the test
/// bundle (whatever the scratch path), else in the package's .build/debug; nil when not built.
public func executablePath() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if count > 0 {
        var directory = Substring(String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        // .build/debug/ResendButtonPackageTests.xctest (a file on Linux): its directory holds the executable.
        while let slash = directory.lastIndex(of: "/") {
            directory = directory[..<slash]
            let candidate = String(directory) + "/resend-button"
            if access(candidate, X_OK) == 0 { return candidate }
            if directory.hasSuffix("/.build") { break }
        }
    }
    // This file is Tests/TestSupport/Processes.swift: the package root is three levels up.
    var root = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    root.removeLast(3)
    let fallback = root.joined(separator: "/") + "/.build/debug/resend-button"
    return access(fallback, X_OK) == 0 ? fallback : nil
}

/// The exit code in a wait status; nil when the process was killed by a signal.
public func exitCode(_ status: Int32) -> Int32? { status & 0x7F == 0 ? (status >> 8) & 0xFF : nil }

/// The signal that killed the process in a wait status; nil when it exited.
public func killedBy(_ status: Int32) -> Int32? { status & 0x7F != 0 && status & 0x7F != 0x7F ? status & 0x7F : nil }

/// A child process started as a shell starts a foreground command (SIGINT and SIGTERM at their
/// defaults, no signal blocked), its standard input /dev/null and its standard output on a pipe
/// that is read only when asked. Killed with SIGKILL and reaped when the value goes away.
public final class Child {
    public let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    /// Every complete line read so far, in order.
    public private(set) var lines: [String] = []
    /// When each of `lines` arrived (`wallSeconds()` at the read that completed it).
    public private(set) var arrivals: [Double] = []
    /// The first line `waitForLine` has not looked at yet.
    private var unread = 0
    private var status: Int32?

    /// Starts `path` with `arguments`; with `discardErrors` its standard error goes to /dev/null,
    /// else to this process's.
    public init(_ path: String, _ arguments: [String], discardErrors: Bool = false) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { precondition(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        if discardErrors { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
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
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        posix_spawnattr_destroy(&attributes)
        for pointer in argv { free(pointer) }
        _ = close(fds[1])
        precondition(result == 0, "posix_spawn \(path) failed: \(result)")
        pid = child
        output = fds[0]
    }

    deinit {
        killHard()
        _ = close(output)
    }

    /// True once standard output has something to read (without reading it), within `seconds`.
    public func outputStarted(within seconds: Double) -> Bool {
        var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, Int32(seconds * 1000)) > 0
    }

    /// The first line not looked at by an earlier call that satisfies `match` (lines already read
    /// count too), with the wall time it arrived; reads more as needed, up to the end of the
    /// output or `timeout` seconds (nil then). The lines looked at are passed over by later calls.
    public func waitForLine(timeout: Double = 10, _ match: (String) -> Bool) -> (line: String, at: Double)? {
        let giveUp = wallSeconds() + timeout
        while true {
            while unread < lines.count {
                unread += 1
                if match(lines[unread - 1]) { return (lines[unread - 1], arrivals[unread - 1]) }
            }
            let left = giveUp - wallSeconds()
            guard left > 0 else { return nil }
            var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, Int32(left * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &chunk, chunk.count)
            guard count > 0 else { return nil }
            let arrived = wallSeconds()
            buffer += chunk[0..<count]
            while let newline = buffer.firstIndex(of: 0x0A) {
                lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
                arrivals.append(arrived)
                buffer.removeSubrange(...newline)
            }
        }
    }

    /// Reads the rest of standard output, up to its end or `timeout` seconds.
    public func readRest(timeout: Double = 10) {
        _ = waitForLine(timeout: timeout) { _ in false }
    }

    /// SIGKILL, and reap (nothing when already reaped).
    public func killHard() {
        guard status == nil else { return }
        _ = kill(pid, SIGKILL)
        var raw: Int32 = 0
        _ = waitpid(pid, &raw, 0)
        status = raw
    }

    /// Waits for the process to exit by itself; its exit code, or nil when a signal killed it.
    public func exitStatus() -> Int32? {
        if status == nil {
            var raw: Int32 = 0
            guard waitpid(pid, &raw, 0) == pid else { return nil }
            status = raw
        }
        return status.flatMap(exitCode)
    }

    /// Waits up to `seconds` for the process to end; its wait status and how long it took.
    public func waitForEnd(within seconds: Double) -> (status: Int32, took: TimeSpan)? {
        let started = monotonicSeconds()
        var raw: Int32 = 0
        guard waitUntil(within: seconds, every: 0.005, { waitpid(pid, &raw, WNOHANG) == pid }) else { return nil }
        status = raw
        return (raw, TimeSpan(nanoseconds: Int64((monotonicSeconds() - started) * 1e9)))
    }
}

/// The state letter in /proc/PID/stat ("S", "Z", ...); nil when the process is gone.
public func processState(_ pid: Int32) -> String? {
    guard let bytes = fileBytes("/proc/\(pid)/stat", limit: 4096) else { return nil }
    let line = String(decoding: bytes, as: UTF8.self)
    guard let close = line.lastIndex(of: ")") else { return nil }
    return line[line.index(after: close)...].split(separator: " ").first.map(String.init)
}

/// Waits up to `seconds` for `pid` to be gone or dead (a zombie waiting for its reaper, which for
/// an orphan is not this process); true when it is.
public func processGone(_ pid: Int32, within seconds: Double) -> Bool {
    waitUntil(within: seconds) {
        let state = processState(pid)
        return state == nil || state == "Z" || state == "X"
    }
}

/// The pid a command wrote (as the first line) to `path`, waiting up to `seconds` for it.
public func pidWritten(in path: String, within seconds: Double) -> Int32? {
    var pid: Int32?
    _ = waitUntil(within: seconds) {
        pid = fileBytes(path, limit: 64).flatMap { Int32(String(decoding: $0, as: UTF8.self).split(separator: "\n").first ?? "") }
        return pid != nil
    }
    return pid
}
