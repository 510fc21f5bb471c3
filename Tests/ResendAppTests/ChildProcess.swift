import Glibc

// A real `resend-button` process for the tests that are about real time, a kill or a file.

/// The wall clock, in seconds since the epoch.
func wallSeconds() -> Double {
    var spec = timespec()
    _ = clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Sleeps until the wall clock reads `seconds` (tests only: this one is about real time).
func sleepUntil(wall seconds: Double) {
    let wait = seconds - wallSeconds()
    guard wait > 0 else { return }
    var request = timespec(tv_sec: Int(wait), tv_nsec: Int((wait - Double(Int(wait))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// The resend-button executable built next to the test bundle.
func executablePath() -> String? {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let testBinary = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var directory = Substring(testBinary)
    // .build/debug/ResendButtonPackageTests.xctest (a file on Linux): its directory holds the executable.
    while let slash = directory.lastIndex(of: "/") {
        directory = directory[..<slash]
        let candidate = String(directory) + "/resend-button"
        if access(candidate, X_OK) == 0 { return candidate }
        if directory.hasSuffix("/.build") { break }
    }
    return nil
}

/// A child `resend-button` whose standard output is read line by line, with a time limit.
final class Child {
    let pid: pid_t
    private let output: Int32
    private var buffer: [UInt8] = []
    private(set) var lines: [String] = []

    init(_ path: String, _ arguments: [String]) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0)
        for fd in fds { precondition(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, nil, argv, environ)
        precondition(result == 0, "posix_spawn \(path) failed: \(result)")
        posix_spawn_file_actions_destroy(&actions)
        for pointer in argv { free(pointer) }
        _ = close(fds[1])
        pid = child
        output = fds[0]
    }

    deinit {
        _ = kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        _ = close(output)
    }

    /// Reads until a line satisfying `match` arrives (returned with the wall time it arrived), or
    /// end of output, or `timeout` seconds.
    func waitForLine(timeout: Double = 10, _ match: (String) -> Bool) -> (line: String, at: Double)? {
        let giveUp = wallSeconds() + timeout
        var checked = lines.count
        while true {
            while checked < lines.count {
                if match(lines[checked]) { return (lines[checked], wallSeconds()) }
                checked += 1
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
                buffer.removeSubrange(...newline)
                if match(lines[lines.count - 1]) {
                    checked = lines.count
                    return (lines[lines.count - 1], arrived)
                }
            }
            checked = lines.count
        }
    }

    /// SIGKILL, and reap.
    func killHard() {
        _ = kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    /// Waits for the process to exit by itself; its exit status, or nil when killed by a signal.
    func exitStatus() -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return nil }
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : nil
    }
}
