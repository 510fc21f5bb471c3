import Glibc
import HAL
import HALLinux
import Testing

/// A bound AF_UNIX datagram socket standing in for systemd's notification socket: a file in a
/// temporary directory or an abstract name. Closed when the value goes away.
final class NotifySocketListener {
    let fd: Int32
    /// The value for `$NOTIFY_SOCKET`.
    let environmentValue: String
    private let directory: TemporaryDirectory?

    /// A socket file `notify` in a fresh temporary directory.
    init() {
        let directory = TemporaryDirectory()
        self.directory = directory
        environmentValue = directory.path + "/notify"
        fd = Self.bound(to: Array(environmentValue.utf8) + [0])
    }

    /// An abstract socket with a name unique to this process and call.
    init(abstractNameSuffix suffix: String) {
        directory = nil
        let name = "resend-button-test-\(getpid())-\(suffix)"
        environmentValue = "@" + name
        fd = Self.bound(to: [0] + Array(name.utf8))
    }

    private static func bound(to path: [UInt8]) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        precondition(fd >= 0, "socket failed")
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + path.count)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        precondition(result == 0, "bind failed: errno \(errno)")
        return fd
    }

    /// The datagrams waiting on the socket, in order; does not block.
    func received() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                precondition(errno == EAGAIN || errno == EWOULDBLOCK, "recv failed: errno \(errno)")
                return messages
            }
            messages.append(String(decoding: buffer.prefix(count), as: UTF8.self))
        }
    }

    deinit { _ = close(fd) }
}

/// Whether `fd` is readable now (poll with a zero time-out: never waits).
private func isReadable(_ fd: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    let result = poll(&entry, 1, 0)
    precondition(result >= 0, "poll failed")
    return result == 1 && entry.revents & Int16(POLLIN) != 0
}

@Suite("the systemd notification protocol")
struct SystemdNotifyTests {
    @Test(
        "each notification arrives as one datagram at a socket file",
        arguments: [
            ("ready", "READY=1"),
            ("watchdog", "WATCHDOG=1"),
            ("stopping", "STOPPING=1"),
            ("status", "STATUS=Resend (59)"),
            ("ready with status", "READY=1\nSTATUS=LCD 16x2 at 0x27"),
        ])
    func notificationsAtPath(call: String, expected: String) throws {
        let listener = NotifySocketListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.environmentValue])
        #expect(notifier.destination == .path(listener.environmentValue))
        try send(call, with: notifier)
        #expect(listener.received() == [expected])
    }

    @Test("an abstract socket ('@' for the leading NUL) receives the notifications")
    func abstractSocket() throws {
        let listener = NotifySocketListener(abstractNameSuffix: "abstract")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.environmentValue])
        #expect(notifier.destination == .abstract(String(listener.environmentValue.dropFirst())))
        try notifier.ready()
        try notifier.watchdog()
        try notifier.stopping()
        #expect(listener.received() == ["READY=1", "WATCHDOG=1", "STOPPING=1"])
    }

    @Test("a status with new lines stays one assignment")
    func statusNewLines() throws {
        let listener = NotifySocketListener()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.environmentValue])
        try notifier.status("display offline\nretrying\r\nsoon")
        #expect(listener.received() == ["STATUS=display offline retrying soon"])
    }

    @Test(
        "without NOTIFY_SOCKET every call is a no-op that makes no system call",
        arguments: [
            [:], ["NOTIFY_SOCKET": ""], ["WATCHDOG_USEC": "30000000"],
        ])
    func unsetIsNoOp(environment: [String: String]) throws {
        let notifier = SystemdNotifier(environment: environment)
        #expect(!notifier.isEnabled)
        #expect(notifier.destination == .none)
        let (_, unused) = try Syscall.withInjectedErrors([EIO]) {
            try notifier.ready()
            try notifier.watchdog()
            try notifier.status("x")
            try notifier.stopping()
        }
        #expect(unused == 1)
    }

    static let longPath = "/" + String(repeating: "a", count: 106)
    static let tooLongPath = "/" + String(repeating: "a", count: 107)
    static let longName = String(repeating: "b", count: 107)
    static let tooLongName = "@" + String(repeating: "b", count: 108)
    static let destinationTable: [(String, SystemdNotifier.Destination)] = [
        ("/run/systemd/notify", .path("/run/systemd/notify")),
        ("@/org/freedesktop/systemd1/notify/42", .abstract("/org/freedesktop/systemd1/notify/42")),
        ("run/systemd/notify", .unusable("run/systemd/notify")),
        ("vsock:2:1234", .unusable("vsock:2:1234")),
        ("@", .unusable("@")),
        // sun_path holds 108 bytes: a path and its NUL, or the leading NUL and an abstract name.
        (longPath, .path(longPath)),
        (tooLongPath, .unusable(tooLongPath)),
        ("@" + longName, .abstract(longName)),
        (tooLongName, .unusable(tooLongName)),
    ]

    @Test("the NOTIFY_SOCKET value names the destination", arguments: destinationTable)
    func destinations(value: String, destination: SystemdNotifier.Destination) {
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": value]).destination == destination)
    }

    @Test("an unusable NOTIFY_SOCKET throws unsupported before any system call")
    func unusableThrows() {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative/notify"])
        #expect(notifier.isEnabled)
        var unused = -1
        let error = thrownError {
            unused = try Syscall.withInjectedErrors([EIO]) { try notifier.ready() }.unused
        }
        #expect(error?.kind == .unsupported)
        #expect(error?.operation == "notify NOTIFY_SOCKET=relative/notify")
        // The throw happened before the seam was reached.
        #expect(unused == -1)
    }

    @Test("a socket file that does not exist is notFound naming the socket")
    func missingSocket() {
        let directory = TemporaryDirectory()
        let path = directory.path + "/no-such-socket"
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path])
        let error = thrownError { try notifier.ready() }
        #expect(error?.kind == .notFound)
        #expect(error?.errno == ENOENT)
        #expect(error?.operation == "send to NOTIFY_SOCKET \(path)")
    }

    @Test(
        "errors from the seam are classified: socket(), then sendto()",
        arguments: [
            ([Syscall.Outcome.fail(EMFILE)], HALError.Kind.io, "socket(AF_UNIX, SOCK_DGRAM) for NOTIFY_SOCKET"),
            ([.passThrough, .fail(EACCES)], .permission, "send to NOTIFY_SOCKET @resend-button-seam"),
            ([.passThrough, .fail(EAGAIN)], .io, "send to NOTIFY_SOCKET @resend-button-seam"),
        ])
    func seamErrors(outcomes: [Syscall.Outcome], kind: HALError.Kind, operation: String) {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@resend-button-seam"])
        var unused = -1
        let error = thrownError {
            unused = try Syscall.withScript(outcomes) { try notifier.watchdog() }.unused
        }
        #expect(error?.kind == kind)
        #expect(error?.operation == operation)
        #expect(unused == -1)
    }

    @Test("a short datagram send is an error", arguments: [0, 5])
    func shortSend(sent: Int) {
        let listener = NotifySocketListener(abstractNameSuffix: "short-\(sent)")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": listener.environmentValue])
        let error = thrownError {
            _ = try Syscall.withScript([.passThrough, .succeed(sent)]) { try notifier.ready() }
        }
        #expect(error?.kind == .io)
        #expect(listener.received().isEmpty)
    }

    @Test(
        "WATCHDOG_USEC and WATCHDOG_PID give the watchdog interval and half of it for pings",
        arguments: [
            (["WATCHDOG_USEC": "30000000"], TimeSpan?.some(.seconds(30))),
            (["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"], .seconds(30)),
            (["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4243"], nil),
            (["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "x"], nil),
            (["WATCHDOG_USEC": "1500"], .microseconds(1500)),
            (["WATCHDOG_USEC": "0"], nil),
            (["WATCHDOG_USEC": "-5"], nil),
            (["WATCHDOG_USEC": "30s"], nil),
            (["WATCHDOG_USEC": ""], nil),
            (["WATCHDOG_PID": "4242"], nil),
            ([:], nil),
        ])
    func watchdogInterval(environment: [String: String], interval: TimeSpan?) {
        let notifier = SystemdNotifier(environment: environment, processID: 4242)
        #expect(notifier.watchdogInterval == interval)
        #expect(notifier.watchdogPingInterval == interval.map { $0 / 2 })
    }

    @Test("the process environment is read and, by default, removed for child processes")
    func processEnvironment() throws {
        let listener = NotifySocketListener(abstractNameSuffix: "environment")
        #expect(setenv("NOTIFY_SOCKET", listener.environmentValue, 1) == 0)
        #expect(setenv("WATCHDOG_USEC", "20000000", 1) == 0)
        #expect(setenv("WATCHDOG_PID", "\(getpid())", 1) == 0)

        let kept = SystemdNotifier.fromProcessEnvironment(unsetting: false)
        #expect(getenv("NOTIFY_SOCKET") != nil)
        let notifier = SystemdNotifier.fromProcessEnvironment()
        #expect(notifier == kept)
        #expect(getenv("NOTIFY_SOCKET") == nil)
        #expect(getenv("WATCHDOG_USEC") == nil)
        #expect(getenv("WATCHDOG_PID") == nil)

        #expect(notifier.watchdogPingInterval == .seconds(10))
        try notifier.ready()
        #expect(listener.received() == ["READY=1"])
    }

    private func send(_ call: String, with notifier: SystemdNotifier) throws {
        switch call {
        case "ready": try notifier.ready()
        case "watchdog": try notifier.watchdog()
        case "stopping": try notifier.stopping()
        case "status": try notifier.status("Resend (59)")
        case "ready with status": try notifier.ready(status: "LCD 16x2 at 0x27")
        default: Issue.record("unknown call \(call)")
        }
    }
}

@Suite("the watchdog timer in the poll set")
struct WatchdogTimerTests {
    @Test("a ping missed by several intervals is due once; the next counts from now")
    func duePing() throws {
        let clock = SystemClock()
        let start = clock.now()
        let timer = try WatchdogTimer(interval: .seconds(60), firstPing: start - .seconds(600))
        #expect(isReadable(timer.fileDescriptor))
        #expect(try timer.consumeExpiry())
        // Fell behind: no burst of catch-up pings; the next one is an interval from now.
        #expect(timer.nextPing >= start + .seconds(60))
        #expect(timer.nextPing <= clock.now() + .seconds(60))
        #expect(!isReadable(timer.fileDescriptor))
        #expect(try !timer.consumeExpiry())
    }

    @Test("a ping not yet due leaves the timer quiet")
    func notYetDue() throws {
        let clock = SystemClock()
        let timer = try WatchdogTimer(interval: .seconds(15))
        #expect(timer.nextPing > clock.now())
        #expect(timer.nextPing <= clock.now() + .seconds(15))
        #expect(!isReadable(timer.fileDescriptor))
        #expect(try !timer.consumeExpiry())
    }

    @Test("on time, the next ping keeps the cadence of the previous one")
    func cadence() throws {
        let clock = SystemClock()
        let first = clock.now() - .milliseconds(1)
        // One hour of interval after a just-missed ping: the next is first + interval, still ahead.
        let timer = try WatchdogTimer(interval: .seconds(3600), firstPing: first)
        #expect(try timer.consumeExpiry())
        #expect(timer.nextPing == first + .seconds(3600))
    }

    @Test("the timer is driven by the Linux event source and yields no inputs")
    func inEventSource() throws {
        var source = try LinuxEventSource(button: nil)
        let listener = NotifySocketListener(abstractNameSuffix: "loop")
        let notifier = SystemdNotifier(environment: [
            "NOTIFY_SOCKET": listener.environmentValue, "WATCHDOG_USEC": "30000000",
        ])
        let interval = try #require(notifier.watchdogPingInterval)
        let timer = try WatchdogTimer(interval: interval, firstPing: SystemClock().now() - .seconds(1))
        _ = source.register(fileDescriptor: timer.fileDescriptor) { () throws(HALError) -> [LoopInput] in
            if try timer.consumeExpiry() { try notifier.watchdog() }
            return []
        }
        #expect(try source.wait(until: .origin) == [])
        #expect(listener.received() == ["WATCHDOG=1"])
        #expect(try source.wait(until: .origin) == [])
        #expect(listener.received().isEmpty)
    }

    @Test("a failing timerfd_create is a classified error", arguments: [(EMFILE, HALError.Kind.io), (ENOSYS, .unsupported)])
    func createFails(errno: Int32, kind: HALError.Kind) {
        let error = thrownError {
            _ = try Syscall.withInjectedErrors([errno]) { try WatchdogTimer(interval: .seconds(15)) }
        }
        #expect(error?.kind == kind)
        #expect(error?.operation == "timerfd_create(CLOCK_MONOTONIC) for the watchdog")
    }
}
