import CLinuxOS
import HAL

/// A descriptor registered with `LinuxEventSource.register(fileDescriptor:onReadable:)`.
public struct RegisteredDescriptor: Hashable, Sendable {
    public let fd: Int32
    let id: Int
}

/// The Linux event loop's one blocking call: poll() over the button's request fd, any registered
/// descriptors and connections (`register(connection:)`: a network client's socket, for writing
/// too while it has bytes to write), a one-shot timerfd at the earlier of the controller's next
/// deadline and the connections' own, and a signalfd turning SIGINT/SIGTERM into `.stop`.
///
/// One thread: create it on the thread that runs the loop (it blocks SIGINT/SIGTERM there while
/// it exists; see `Poller`). `wait(until: nil)` blocks with no time-out at all. Edge times are the
/// kernel's timestamps, so the time spent in the queue does not skew debouncing.
public struct LinuxEventSource: EventSource {
    private let poller: Poller
    /// The button, when there is one (tests run without).
    public let button: GPIOButton?
    private var extras: [(registration: RegisteredDescriptor, onReadable: () throws(HALError) -> [LoopInput])] = []
    private var nextID = 0
    private var connections: [PolledConnection] = []
    /// The keypad backends' level readers (`register(levels:)`), asked in order for keys other than
    /// the button.
    private var levelReaders: [(Key) throws(HALError) -> ButtonLevel?] = []

    public init(button: GPIOButton?) throws(HALError) {
        self.poller = try Poller(includeResize: false)
        self.button = button
    }

    /// Edges the kernel dropped so far (libgpiod v2 sequence gaps), for the caller to log.
    public var droppedEdgeEvents: UInt64 { button?.droppedEvents ?? 0 }

    /// Adds `fd` to the poll set. When it is readable (or hung up), `onReadable` runs on the loop's
    /// thread during `wait`; it must consume the readiness (read the data, reap the child) and
    /// returns the inputs it stands for. The caller keeps ownership of `fd` and must unregister it
    /// before closing it.
    public mutating func register(fileDescriptor fd: Int32, onReadable: @escaping () throws(HALError) -> [LoopInput]) -> RegisteredDescriptor {
        let registration = RegisteredDescriptor(fd: fd, id: nextID)
        nextID += 1
        extras.append((registration, onReadable))
        return registration
    }

    /// Adds a connection whose descriptor may change (a network client that reconnects): it is
    /// asked for its descriptor before every poll, watched for writing while it wants to write,
    /// and served at its own deadlines, which cut a wait short without ending it.
    public mutating func register(connection: PolledConnection) {
        connections.append(connection)
    }

    public mutating func unregister(_ registration: RegisteredDescriptor) {
        extras.removeAll { $0.registration == registration }
    }

    /// Adds a keypad backend's answer to `readLevel(of:)` for its keys (a matrix scans, an evdev
    /// keypad answers from its key state, resynchronised with EVIOCGKEY after a drop); it returns
    /// nil for a key it does not have. Runs on the loop's thread.
    public mutating func register(levels: @escaping (Key) throws(HALError) -> ButtonLevel?) {
        levelReaders.append(levels)
    }

    /// `key`'s level now, stamped with CLOCK_MONOTONIC: the button's line read (nil without a
    /// button), a keypad key from the first registered reader that has it (nil when none has).
    public mutating func readLevel(of key: Key) throws(HALError) -> ButtonLevel? {
        guard key == .button else {
            for reader in levelReaders {
                if let level = try reader(key) { return level }
            }
            return nil
        }
        guard let button else { return nil }
        let pressed = try button.isPressed()
        return ButtonLevel(pressed: pressed, time: SystemClock().now())
    }

    /// Blocks until an input is available or `deadline` (CLOCK_MONOTONIC) is reached; a deadline
    /// in the past returns at once with whatever is already pending. Order: stop, then edges, then
    /// registered descriptors' inputs, then connections' (served at their own deadlines in
    /// between, without returning unless that brought an input). Wake-ups that produce no input (e.g. a bounce the kernel
    /// debounced away) wait again rather than return early.
    public mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        let buttonFD = button?.fileDescriptor
        let fixed = (buttonFD.map { [$0] } ?? []) + extras.map { $0.registration.fd }
        while true {
            let polled = connections.map { $0.descriptor() }
            var watched = fixed
            var writers: [Int32] = []
            var wake = deadline
            for (connection, fd) in zip(connections, polled) {
                if let fd {
                    watched.append(fd)
                    if connection.wantsWrite() { writers.append(fd) }
                }
                if let due = connection.nextService() { wake = wake.map { min($0, due) } ?? due }
            }
            let wakeup = try poller.wait(watching: watched, writable: writers, until: wake)
            var inputs: [LoopInput] = []
            if wakeup.signals.contains(where: { $0 == SIGINT || $0 == SIGTERM }) {
                inputs.append(.stop)
            }
            if let button, let buttonFD, wakeup.readable.contains(buttonFD) {
                inputs += try button.readEdges().map { .button($0) }
                if button.lastReadMayHaveLostEdges { inputs.append(.edgesMayBeLost) }
            }
            for extra in extras where wakeup.readable.contains(extra.registration.fd) {
                inputs += try extra.onReadable()
            }
            let now = SystemClock().now()
            for (connection, fd) in zip(connections, polled) {
                if let fd, wakeup.readable.contains(fd) || wakeup.writable.contains(fd) {
                    let readiness = PollReadiness(
                        readable: wakeup.readable.contains(fd), writable: wakeup.writable.contains(fd), hungUp: wakeup.hungUp.contains(fd))
                    inputs += connection.onReady(readiness, now)
                }
                if let due = connection.nextService(), due <= now { inputs += connection.service(now) }
            }
            let deadlineReached = wake == deadline ? wakeup.deadlineReached : deadline.map { $0 <= now } ?? false
            if !inputs.isEmpty || deadlineReached { return inputs }
        }
    }
}

/// A connection `LinuxEventSource` serves (`register(connection:)`), as closures over its owner:
/// its current descriptor (nil: none now), whether it wants to write, when it must be served,
/// what to do when its descriptor is ready and when it is due. The
/// closures run on the loop's thread and must not block; they return the inputs they stand for.
public struct PolledConnection {
    public var descriptor: () -> Int32?
    public var wantsWrite: () -> Bool
    public var nextService: () -> Instant?
    public var onReady: (PollReadiness, Instant) -> [LoopInput]
    public var service: (Instant) -> [LoopInput]

    public init(
        descriptor: @escaping () -> Int32?, wantsWrite: @escaping () -> Bool, nextService: @escaping () -> Instant?,
        onReady: @escaping (PollReadiness, Instant) -> [LoopInput], service: @escaping (Instant) -> [LoopInput]
    ) {
        self.descriptor = descriptor
        self.wantsWrite = wantsWrite
        self.nextService = nextService
        self.onReady = onReady
        self.service = service
    }
}

/// How a polled descriptor is ready: readable (or hung up / in error), writable, and whether the
/// peer hung up or the descriptor is in error (then it is readable too).
public struct PollReadiness: Hashable, Sendable {
    public var readable: Bool
    public var writable: Bool
    public var hungUp: Bool

    public init(readable: Bool, writable: Bool, hungUp: Bool = false) {
        self.readable = readable
        self.writable = writable
        self.hungUp = hungUp
    }
}
