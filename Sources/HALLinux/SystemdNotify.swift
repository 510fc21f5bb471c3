import CLinuxOS
import HAL

/// The service manager's notification protocol (sd_notify(3), systemd's NOTIFY_SOCKET), without
/// libsystemd: each message is one datagram of newline-separated `KEY=VALUE` assignments sent to
/// the AF_UNIX socket named by `$NOTIFY_SOCKET`, a file-system path (`/run/systemd/notify`) or an
/// abstract name (`@name`, where the `@` stands for a leading NUL byte).
///
/// How a service uses it (unit `Type=notify`, `WatchdogSec=`):
/// - `ready()` once the hardware is up (systemd then counts the service as started);
/// - `watchdog()` every `watchdogPingInterval` from the event loop while it is healthy, e.g. from
///   a `WatchdogTimer` registered in the loop's poll set;
/// - `stopping()` when a graceful stop begins; `status(_:)` for `systemctl status`.
///
/// Without `$NOTIFY_SOCKET` (not started by systemd, or `Type=simple`) every call is a no-op that
/// succeeds. Sending never blocks: a full socket queue is an error (EAGAIN), not a wait.
/// Faults in the world (no such socket, permission) throw `HALError` through the `Syscall` seam;
/// the caller logs them and carries on: a lost notification is not a reason to stop the service.
public struct SystemdNotifier: Hashable, Sendable {
    /// Where the notifications go.
    public enum Destination: Hashable, Sendable {
        /// `$NOTIFY_SOCKET` unset or empty: notifications are dropped.
        case none
        /// A socket file, e.g. "/run/systemd/notify".
        case path(String)
        /// An abstract socket: the name without the leading NUL ("@name" in `$NOTIFY_SOCKET`).
        case abstract(String)
        /// A `$NOTIFY_SOCKET` this implementation cannot use (a relative path, `vsock:`, a name too
        /// long for `sockaddr_un`); sending throws `.unsupported` naming it.
        case unusable(String)
    }

    /// The environment variables of the protocol.
    public static let socketVariable = "NOTIFY_SOCKET"
    public static let watchdogIntervalVariable = "WATCHDOG_USEC"
    public static let watchdogProcessVariable = "WATCHDOG_PID"

    public let destination: Destination
    /// The service's `WatchdogSec=` when the watchdog is on for this process: from
    /// `$WATCHDOG_USEC`, ignored when `$WATCHDOG_PID` names another process (a child that inherited
    /// the variables) or when the value is not a positive whole number of microseconds.
    public let watchdogInterval: TimeSpan?

    /// How often to send `watchdog()`: half of `watchdogInterval`, as sd_watchdog_enabled(3)
    /// advises, so that one late ping never trips the watchdog. nil when the watchdog is off.
    public var watchdogPingInterval: TimeSpan? { watchdogInterval.map { $0 / 2 } }

    /// Whether notifications go anywhere.
    public var isEnabled: Bool { destination != .none }

    /// Reads the protocol's variables from `environment`; `processID` is compared with
    /// `$WATCHDOG_PID`. Does no I/O.
    public init(environment: [String: String], processID: Int32 = getpid()) {
        destination = Self.destination(of: environment[Self.socketVariable] ?? "")
        watchdogInterval = Self.watchdogInterval(
            microseconds: environment[Self.watchdogIntervalVariable],
            forProcess: environment[Self.watchdogProcessVariable],
            processID: processID)
    }

    /// Reads the protocol's variables from this process's environment. With `unsetting` (the
    /// default) it removes them afterwards, so that child processes (the send command) neither
    /// notify on the service's behalf nor believe they have a watchdog; call it at start-up, before
    /// any thread starts (setenv/unsetenv are not thread-safe).
    public static func fromProcessEnvironment(unsetting: Bool = true) -> SystemdNotifier {
        let names = [socketVariable, watchdogIntervalVariable, watchdogProcessVariable]
        var environment: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        if unsetting {
            for name in names {
                // unsetenv fails only for a name with "=" in it; these are constants.
                let result = unsetenv(name)
                precondition(result == 0, "unsetenv(\(name)) failed")
            }
        }
        return SystemdNotifier(environment: environment)
    }

    /// `READY=1`: start-up is complete (the GPIO lines are requested and the LCD answered).
    public func ready() throws(HALError) {
        try notify([("READY", "1")])
    }

    /// `READY=1` with a `STATUS=` line in the same datagram.
    public func ready(status text: String) throws(HALError) {
        try notify([("READY", "1"), ("STATUS", Self.singleLine(text))])
    }

    /// `WATCHDOG=1`: the event loop is alive. Send it every `watchdogPingInterval`.
    public func watchdog() throws(HALError) {
        try notify([("WATCHDOG", "1")])
    }

    /// `STOPPING=1`: a graceful stop has begun (the "stopped" screen, releasing the lines).
    public func stopping() throws(HALError) {
        try notify([("STOPPING", "1")])
    }

    /// `STATUS=text`: one line for `systemctl status`. New lines in `text` become spaces (a new
    /// line would start another assignment).
    public func status(_ text: String) throws(HALError) {
        try notify([("STATUS", Self.singleLine(text))])
    }

    /// Sends the assignments as one datagram, `KEY=VALUE` lines joined by new lines; a no-op when
    /// `destination` is `.none`. Keys are the protocol's upper-case names; a key or value with a new
    /// line in it is our bug.
    public func notify(_ assignments: [(key: String, value: String)]) throws(HALError) {
        precondition(!assignments.isEmpty, "sd_notify message without assignments")
        for (key, value) in assignments {
            precondition(!key.isEmpty && !key.contains("=") && !key.contains("\n"), "bad sd_notify key '\(key)'")
            precondition(!value.contains("\n"), "sd_notify value with a new line for \(key)")
        }
        let message = Array(assignments.map { "\($0.key)=\($0.value)" }.joined(separator: "\n").utf8)
        switch destination {
        case .none:
            return
        case .unusable(let value):
            throw HALError(.unsupported, operation: "notify \(Self.socketVariable)=\(value)")
        case .path(let path):
            try send(message, to: Array(path.utf8) + [0], describedAs: path)
        case .abstract(let name):
            try send(message, to: [0] + Array(name.utf8), describedAs: "@" + name)
        }
    }

    /// One datagram on a fresh close-on-exec socket, as sd_notify does: nothing stays open between
    /// notifications. `address` is the exact `sun_path` content (with its NUL terminator for a path,
    /// with the leading NUL and no terminator for an abstract name).
    private func send(_ message: [UInt8], to address: [UInt8], describedAs name: String) throws(HALError) {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        // destination(of:) rejected longer names.
        precondition(address.count <= capacity, "sun_path overflow")
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { path in
            path.copyBytes(from: address)
        }
        // sys/un.h: struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; }, no padding.
        let pathOffset = MemoryLayout<sa_family_t>.size
        let length = socklen_t(pathOffset + address.count)

        let socketType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = try Syscall.run("socket(AF_UNIX, SOCK_DGRAM) for \(Self.socketVariable)") {
            socket(AF_UNIX, socketType, 0)
        }
        defer { _ = close(fd) }
        let sent = try Syscall.run("send to \(Self.socketVariable) \(name)") { () -> Int in
            withUnsafePointer(to: &socketAddress) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    sendto(fd, message, message.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT), address, length)
                }
            }
        }
        if sent != message.count {
            throw HALError(.io, operation: "send to \(Self.socketVariable) \(name): \(sent) of \(message.count) bytes")
        }
    }

    /// The destination a `$NOTIFY_SOCKET` value names (sd_notify(3): an absolute path or "@name").
    static func destination(of value: String) -> Destination {
        guard let first = value.utf8.first else { return .none }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        switch first {
        case UInt8(ascii: "/"):
            // The path and its NUL terminator must fit.
            return value.utf8.count + 1 <= capacity ? .path(value) : .unusable(value)
        case UInt8(ascii: "@"):
            let name = String(value.dropFirst())
            // The leading NUL and the name; an abstract name is not NUL-terminated.
            return !name.isEmpty && name.utf8.count + 1 <= capacity ? .abstract(name) : .unusable(value)
        default:
            return .unusable(value)
        }
    }

    /// sd_watchdog_enabled(3): `$WATCHDOG_USEC` in microseconds, positive; `$WATCHDOG_PID`, when
    /// set, must be this process.
    static func watchdogInterval(microseconds: String?, forProcess pid: String?, processID: Int32) -> TimeSpan? {
        guard let microseconds, let value = Int64(microseconds), value > 0,
            value <= Int64.max / 1_000
        else { return nil }
        if let pid {
            guard let owner = Int32(pid), owner > 0, owner == processID else { return nil }
        }
        return .microseconds(value)
    }

    private static func singleLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r\n" || $0 == "\r" ? " " : $0 })
    }
}

/// A timer in the event loop's poll set that says when the next `SystemdNotifier.watchdog()` is
/// due, so the ping comes from the loop itself: a loop stuck anywhere stops pinging and systemd
/// restarts the service. It is a one-shot CLOCK_MONOTONIC timerfd re-armed after every ping, so
/// the process still sleeps in poll() between pings (two wake-ups per `WatchdogSec`).
///
/// Register `fileDescriptor` with `LinuxEventSource.register(fileDescriptor:onReadable:)`; in the
/// handler call `consumeExpiry()` and, when it returns true, `watchdog()` on the notifier; return
/// no inputs. The descriptor closes when the timer goes away (unregister it first).
public final class WatchdogTimer {
    /// The timerfd to poll for readability. Non-blocking, close-on-exec.
    public let fileDescriptor: Int32
    /// Time between pings.
    public let interval: TimeSpan
    /// When the next ping is due (CLOCK_MONOTONIC).
    public private(set) var nextPing: Instant
    private let clock = SystemClock()

    /// A timer whose first ping is due at `firstPing` (default: one `interval` from now).
    /// `interval` must be positive.
    public init(interval: TimeSpan, firstPing: Instant? = nil) throws(HALError) {
        precondition(interval > .zero, "watchdog ping interval must be positive")
        self.interval = interval
        self.nextPing = firstPing ?? SystemClock().now() + interval
        fileDescriptor = try Syscall.run("timerfd_create(CLOCK_MONOTONIC) for the watchdog") {
            rb_timerfd_create_monotonic()
        }
        do throws(HALError) {
            try arm()
        } catch {
            _ = close(fileDescriptor)
            throw error
        }
    }

    deinit {
        _ = close(fileDescriptor)
    }

    /// Reads the timer's expiry and says whether a ping is due now. When one is due the timer is
    /// re-armed one `interval` later (counted from now when the loop fell behind, so a stalled loop
    /// does not get a burst of pings). Does not block.
    public func consumeExpiry() throws(HALError) -> Bool {
        let fd = fileDescriptor
        _ = try Syscall.run("read watchdog timerfd") { rb_timerfd_consume(fd) }
        let now = clock.now()
        guard now >= nextPing else { return false }
        nextPing = nextPing + interval
        if nextPing <= now { nextPing = now + interval }
        try arm()
        return true
    }

    private func arm() throws(HALError) {
        let fd = fileDescriptor
        let deadline = nextPing.nanoseconds
        _ = try Syscall.run("arm watchdog timerfd") { rb_timerfd_arm_absolute(fd, deadline) }
    }
}
