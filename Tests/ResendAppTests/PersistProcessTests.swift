import Glibc
import HAL
import ResendCore
import Testing

/// The wall clock, in seconds since the epoch.
private func wallSeconds() -> Double {
    var spec = timespec()
    _ = clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Sleeps until the wall clock reads `seconds` (tests only: this one is about real time).
private func sleepUntil(wall seconds: Double) {
    let wait = seconds - wallSeconds()
    guard wait > 0 else { return }
    var request = timespec(tv_sec: Int(wait), tv_nsec: Int((wait - Double(Int(wait))) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// The resend-button executable built next to the test bundle.
private func executablePath() -> String? {
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
private final class Child {
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

/// The seconds on a "Resend (NN)" label in a screen line, nil when the label is another.
private func countdownSeconds(_ line: String) -> Int? {
    let fields = line.split(separator: "|", omittingEmptySubsequences: false)
    guard fields.count >= 3, fields[2].hasPrefix("Resend ("), let close = fields[2].firstIndex(of: ")") else { return nil }
    return Int(fields[2][fields[2].index(fields[2].startIndex, offsetBy: 8)..<close])
}

private func readDeadline(_ path: String) -> Double? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { _ = close(fd) }
    var bytes = [UInt8](repeating: 0, count: 4096)
    let count = read(fd, &bytes, bytes.count)
    guard count > 0, let state = try? PersistedState(decoding: Array(bytes[0..<count])) else { return nil }
    return state.countdownEnd.map { Double($0.millisecondsSinceEpoch) / 1000 }
}

@Suite("Restart-proof cooldown across SIGKILL", .serialized, .timeLimit(.minutes(1)))
struct PersistProcessTests {
    @Test("a real-time run killed with SIGKILL at 1.2 s and 2.5 s of a 5 s countdown resumes with the right seconds each time")
    func killAndRestart() throws {
        let binary = try #require(executablePath(), "build the executable first: swift build")
        let directory = StateDirectory()
        let common = ["simulate", "--headless", "--realtime", "--duration", "5", "--state-file", directory.stateFile, "--events"]

        // Run 1: press at once; once the countdown shows, the deadline is on disk.
        let first = Child(binary, common + ["--script", "press@0"])
        let shown = try #require(first.waitForLine { countdownSeconds($0) == 5 }, "\(first.lines)")
        let deadline = try #require(readDeadline(directory.stateFile))
        #expect(abs(deadline - 5 - shown.at) < 0.5, "the deadline is the press + 5 s")
        var previous = first

        for killAfter in [1.2, 2.5] {
            sleepUntil(wall: deadline - 5 + killAfter)
            previous.killHard()
            let restarted = Child(binary, common + ["--script", ""])
            let line = try #require(restarted.waitForLine { $0.contains(" screen |") && !$0.contains("Stopped") }, "\(restarted.lines)")
            let seconds = try #require(countdownSeconds(line.line), "resumed with a countdown: \(line.line)")
            let remaining = deadline - line.at
            #expect(abs(Double(seconds) - remaining) <= 1, "killed at \(killAfter) s: shows \(seconds), \(remaining) s left")
            #expect(seconds <= Int((5 - killAfter).rounded(.up)))
            #expect(restarted.lines.contains { $0.hasSuffix("countdown resumed seconds_left=\(seconds)") })
            previous = restarted
        }

        // The last run goes on to the end of the countdown, on time, and stops by itself.
        let end = try #require(previous.waitForLine { $0.contains("|Resend          |") }, "\(previous.lines)")
        #expect(abs(end.at - deadline) < 0.5, "ready at the deadline: \(end.at - deadline) s off")
        #expect(previous.exitStatus() == 0)
        #expect(readDeadline(directory.stateFile) == nil)
    }
}
