import Glibc
import HAL

// Threads, pipes, child processes and kernel counters for the real-time figures. The bench is a
// tool, not the product: a fault here is fatal with a message.

func fail(_ message: String) -> Never {
    var text = "resend-bench: " + message + "\n"
    text.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
    exit(70)
}

/// Writes to standard output (no buffering: the table is printed once, at the end).
func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { buffer in
        var offset = 0
        while offset < buffer.count {
            guard let base = buffer.baseAddress else { return }
            let written = Glibc.write(1, base + offset, buffer.count - offset)
            if written <= 0 { if errno == EINTR { continue }; return }
            offset += written
        }
    }
}

/// Progress on standard error, so stdout holds only the table.
func progress(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { buffer in _ = Glibc.write(2, buffer.baseAddress, buffer.count) }
}

// MARK: Threads

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A POSIX thread running `body`; `join()` waits for it. Everything `body` wrote is visible to the
/// joining thread afterwards (pthread_join synchronises memory).
struct Thread {
    private let handle: pthread_t

    init(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { raw in
                guard let raw else { preconditionFailure("bench: a thread without its body") }
                Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().body()
                return nil
            }, box)
        if result != 0 { fail("pthread_create failed: \(result)") }
        self.handle = handle
    }

    func join() {
        let result = pthread_join(handle, nil)
        if result != 0 { fail("pthread_join failed: \(result)") }
    }
}

/// Sleeps on CLOCK_MONOTONIC until `deadline` (absolute, so a signal cannot stretch it).
func sleep(until deadline: Instant) {
    var spec = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000), tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
    while true {
        let error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil)
        if error == 0 { return }
        if error != EINTR { fail("clock_nanosleep: \(error)") }
    }
}

/// Puts the calling thread (and threads it starts later) under SCHED_FIFO at the lowest real-time
/// priority, as a systemd unit's `CPUSchedulingPolicy=fifo` would; false when not permitted.
/// `false` as the argument returns it to SCHED_OTHER.
func setRealTimeScheduling(_ on: Bool) -> Bool {
    var parameters = sched_param()
    parameters.sched_priority = on ? sched_get_priority_min(SCHED_FIFO) : 0
    return sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &parameters) == 0
}

// MARK: Pipes

struct Pipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fail("pipe: errno \(errno)") }
        // Children (the busy loops, resend-button) must not hold the loop's pipes.
        for fd in fds where fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 { fail("fcntl FD_CLOEXEC: errno \(errno)") }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    func close() {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }
}

/// Writes all of `bytes` (pipe writes up to PIPE_BUF are atomic: a reader never sees half a message).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            guard let base = buffer.baseAddress else { return }
            let written = Glibc.write(fd, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                fail("write to pipe: errno \(errno)")
            }
            offset += written
        }
    }
}

/// Blocks for one byte; nil at end of file.
func readByte(_ fd: Int32) -> UInt8? {
    var byte: UInt8 = 0
    while true {
        let count = Glibc.read(fd, &byte, 1)
        if count == 1 { return byte }
        if count == 0 { return nil }
        if errno != EINTR { fail("read from pipe: errno \(errno)") }
    }
}

// MARK: Kernel counters

/// The thread's voluntary context switches (it blocked: poll, sleep, a synchronous write), from
/// /proc/self/task/TID/status.
func voluntaryContextSwitches(thread tid: Int32) -> Int {
    let path = "/proc/self/task/\(tid)/status"
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 { fail("open \(path): errno \(errno)") }
    defer { _ = close(fd) }
    var buffer = [UInt8](repeating: 0, count: 8192)
    var length = 0
    while length < buffer.count {
        let count = buffer.withUnsafeMutableBytes { raw in raw.baseAddress.map { read(fd, $0 + length, raw.count - length) } ?? 0 }
        if count <= 0 { break }
        length += count
    }
    let text = String(decoding: buffer[..<length], as: UTF8.self)
    let key = "voluntary_ctxt_switches:"
    for line in text.split(separator: "\n") where line.hasPrefix(key) {
        if let value = Int(line.dropFirst(key.count).drop { $0 == " " || $0 == "\t" }) { return value }
    }
    fail("no \(key) in \(path)")
}

// MARK: Child processes

/// Starts `path` with `arguments` (argv[0] included) and an empty signal mask (the loop thread
/// blocks SIGINT/SIGTERM for its signalfd; children must not inherit that, so Ctrl-C still ends
/// them). Standard output goes to `output` when given, else to /dev/null with standard error
/// unless `quiet` is false.
func spawn(_ path: String, _ arguments: [String], quiet: Bool = true, output: Int32? = nil) -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let output {
        posix_spawn_file_actions_adddup2(&actions, output, 1)
    } else if quiet {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    if quiet {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, &argv, environ)
    if result != 0 { fail("posix_spawn \(path): \(result)") }
    return pid
}

/// Waits for `pid`; returns its exit status (or 128 + signal) and its peak RSS in bytes.
func reap(_ pid: pid_t) -> (status: Int32, peakRSS: Int) {
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        if errno != EINTR { fail("wait4 \(pid): errno \(errno)") }
    }
    let exited = status & 0x7F == 0  // WIFEXITED
    let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return (code, usage.ru_maxrss * 1024)
}

// MARK: Peak RSS of another program

// ru_maxrss of a child is the larger of its own peak and the peak of the address space it replaced
// at exec (fs/exec.c: exec_mmap keeps the old mm's high-water mark). posix_spawn runs the child in
// the parent's address space until exec (CLONE_VM | CLONE_VFORK), so a child spawned by this
// (large) process would report at least our own peak. Instead, a fresh `resend-bench peak-rss`
// process fork()s: the copy it execs from holds only its few anonymous pages (text pages are not
// copied at fork), the floor `/bin/true` shows; it reports the child's ru_maxrss on stdout.

/// The child side of `resend-bench peak-rss PROGRAM ARGS...`: prints "STATUS BYTES".
func runPeakRSS(_ arguments: [String]) -> Never {
    guard let program = arguments.first else { fail("peak-rss needs a program") }
    guard let path = strdup(program), let devNull = strdup("/dev/null") else { fail("strdup") }
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let pid = fork()
    if pid < 0 { fail("fork: errno \(errno)") }
    if pid == 0 {
        // Only async-signal-safe calls between fork and exec; everything was prepared before.
        let null = open(devNull, O_WRONLY)
        if null >= 0 {
            _ = dup2(null, 1)
            _ = dup2(null, 2)
        }
        execv(path, &argv)
        _exit(127)
    }
    let result = reap(pid)
    emit("\(result.status) \(result.peakRSS)")
    exit(0)
}

/// Peak RSS of `arguments` (argv[0] is the program's path), measured by a fresh `peak-rss` helper.
func peakRSS(of arguments: [String], helper: String) -> (status: Int32, peakRSS: Int) {
    let channel = Pipe()
    let pid = spawn(helper, ["resend-bench", "peak-rss"] + arguments, output: channel.writeEnd)
    _ = close(channel.writeEnd)
    var text: [UInt8] = []
    while let byte = readByte(channel.readEnd) { text.append(byte) }
    _ = close(channel.readEnd)
    let helperStatus = reap(pid).status
    let fields = String(decoding: text, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
    guard helperStatus == 0, fields.count == 2, let status = Int32(fields[0]), let bytes = Int(fields[1]) else {
        fail("peak-rss helper failed for \(arguments[0]) (status \(helperStatus))")
    }
    return (status, bytes)
}

/// Two (or `count`) shell busy loops that keep the CPUs busy until `stop()`.
struct BusyLoops {
    let pids: [pid_t]

    init(count: Int) {
        pids = (0..<count).map { _ in spawn("/bin/sh", ["sh", "-c", "while :; do :; done"]) }
    }

    func stop() {
        for pid in pids { _ = kill(pid, SIGKILL) }
        for pid in pids { _ = reap(pid) }
    }
}
