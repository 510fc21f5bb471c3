/// Something that happened outside the controller, delivered to the event loop.
public enum LoopInput: Hashable, Sendable {
    /// Edges of a key (the button's line, a keypad's keys) may have been lost before the ones
    /// delivered (the kernel's event buffer overflowed): the loop reads the level of every key it
    /// knows (`EventSource.readLevel(of:)`) and reconciles. Linux, uAPI v1 (libgpiod 1.x): 16 events per line, a full buffer drops the
    /// NEWEST (drivers/gpio/gpiolib-cdev.c, `lineevent_irq_thread`: kfifo_in fails, "event FIFO is
    /// full - event dropped"), so the settling edge of a burst is the one lost; v2 drops the oldest
    /// (`linereq_put_event`: kfifo_skip) and numbers events, so a sequence gap shows it.
    case edgesMayBeLost
    /// The user or the service manager asked to stop (SIGINT, SIGTERM, `q` in the simulator).
    case stop
    /// A command ended (its process was reaped): the send command's or the verify command's, as
    /// `purpose` says; see `CommandRunner`. A verify command's outcome never carries the code.
    case commandFinished(CommandPurpose, CommandOutcome)
    /// A key changed (raw, not yet debounced): the single button as `Key.button` (see
    /// `button(_:)`), or a keypad backend's key (GPIO matrix, evdev). The only way a key arrives.
    case key(KeyEvent)
    /// An input device (an evdev keypad) went away or came back; for the log. Keys it held were
    /// delivered as releases before it.
    case inputDevice(InputDeviceEvent)
    /// A request from outside (an MQTT command the configuration allows).
    case remote(RemoteCommand)
}

extension LoopInput {
    /// The single button's raw edge, as the key `Key.button`.
    public static func button(_ edge: ButtonEdge) -> LoopInput {
        .key(KeyEvent(.button, edge.pressed ? .pressed : .released, at: edge.time))
    }

    /// The button's raw edge when this is a `Key.button` event; nil otherwise.
    public var buttonEdge: ButtonEdge? {
        guard case .key(let event) = self, event.key == .button else { return nil }
        return ButtonEdge(pressed: event.isPress, time: event.at)
    }
}

/// The one blocking call of the event loop: wait for inputs or a deadline.
///
/// `wait(until:)` blocks until at least one input is available or the monotonic clock reaches
/// `deadline`, whichever is first, and returns the inputs in arrival order (empty when the deadline
/// was reached with nothing to report). `deadline == nil` means wait for input with no time-out: an
/// idle device makes no periodic wake-ups. A deadline already in the past returns at once.
/// Virtual implementations move their virtual clock to the time of what they return.
public protocol EventSource {
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput]

    /// `key`'s logical level read now (not inferred from its edges: the button's line read, a
    /// matrix scanned), stamped with the monotonic time of the read; nil when the source cannot
    /// read that key. Does not block for long (a matrix scan waits its rows' settle time). The
    /// loop calls it for a key when the key's debounce window closes, and for every key it knows
    /// after `LoopInput.edgesMayBeLost`: one repair for every key.
    mutating func readLevel(of key: Key) throws(HALError) -> ButtonLevel?
}

extension EventSource {
    /// Sources without readable keys (a script of edges only) report nothing.
    public mutating func readLevel(of key: Key) throws(HALError) -> ButtonLevel? { nil }
}
