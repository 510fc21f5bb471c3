/// A change of the button's logical level, as seen by the GPIO backend.
///
/// `pressed` is logical: the backend applies active-low (a button to ground reads low when pressed
/// and is reported as `pressed == true`). `time` comes from the kernel's edge timestamp on the
/// monotonic clock when the backend has one, so queueing delays do not skew debouncing.
public struct ButtonEdge: Hashable, Sendable {
    public var pressed: Bool
    public var time: Instant

    public init(pressed: Bool, time: Instant) {
        self.pressed = pressed
        self.time = time
    }
}

/// The button's logical level as read from the line itself, and when it was read (monotonic).
public struct ButtonLevel: Hashable, Sendable {
    public var pressed: Bool
    public var time: Instant

    public init(pressed: Bool, time: Instant) {
        self.pressed = pressed
        self.time = time
    }
}

/// A digital output such as the LED. `active == true` means "on"; the backend inverts for
/// active-low wiring. `set` does not block beyond the write itself.
public protocol OutputLine {
    mutating func set(_ active: Bool) throws(HALError)
}

/// The bias of an input line.
public enum GPIOBias: Hashable, Sendable {
    /// Internal pull-up: a button to ground reads high when released (the default).
    case pullUp
    /// Internal pull-down: a button to 3V3.
    case pullDown
    /// No internal resistor: an external one is fitted.
    case disabled
    /// Leave the bias as the firmware/device tree set it.
    case asIs
}
