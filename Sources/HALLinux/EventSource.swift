import CLinuxOS
import HAL

/// A descriptor registered with `LinuxEventSource.register(fileDescriptor:onReadable:)`.
public struct RegisteredDescriptor: Hashable, Sendable {
    public let fd: Int32
    let id: Int
}

/// The Linux event loop's one blocking call: poll() over the button's request fd and any
/// registered descriptors, a one-shot timerfd at the controller's next deadline, and a signalfd
/// turning SIGINT/SIGTERM into `.stop`.
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

    public mutating func unregister(_ registration: RegisteredDescriptor) {
        extras.removeAll { $0.registration == registration }
    }

    /// The button's level now (a line read, not edges), stamped with CLOCK_MONOTONIC; nil without
    /// a button.
    public mutating func readButtonLevel() throws(HALError) -> ButtonLevel? {
        guard let button else { return nil }
        let pressed = try button.isPressed()
        return ButtonLevel(pressed: pressed, time: SystemClock().now())
    }

    /// Blocks until an input is available or `deadline` (CLOCK_MONOTONIC) is reached; a deadline
    /// in the past returns at once with whatever is already pending. Order: stop, then edges, then
    /// registered descriptors' inputs. Wake-ups that produce no input (e.g. a bounce the kernel
    /// debounced away) wait again rather than return early.
    public mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        let buttonFD = button?.fileDescriptor
        let watched = (buttonFD.map { [$0] } ?? []) + extras.map { $0.registration.fd }
        while true {
            let wakeup = try poller.wait(watching: watched, until: deadline)
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
            if !inputs.isEmpty || wakeup.deadlineReached { return inputs }
        }
    }
}
