import HAL
import ResendCore

// The recording stand-ins for the event loop's ports, and its parts under the tests' names.

/// The environment's parts under the names the tests read them by.
extension EventLoop {
    public var source: Environment.Source {
        get { environment.source }
        set { environment.source = newValue }
    }
    public var display: Environment.Display {
        get { environment.display }
        set { environment.display = newValue }
    }
    public var led: Environment.Line? { environment.outputs.led }
    public var observer: Environment.Observer { environment.observer }
    public var runner: Environment.Sender { environment.commands.send }
    public var verifier: Environment.Verifier { environment.commands.verify }
    public var store: Environment.Store? { environment.store }
    public var pad: DeviceCoordinator { coordinator }
}

/// The single-button device's coordinator: the button debounced by `button`, no code entry.
public func buttonCoordinator(_ config: ControllerConfig, button: Debouncer) -> DeviceCoordinator {
    var keys = KeyDebouncer(window: button.window, mode: button.mode)
    keys.use(button, for: .button)
    return DeviceCoordinator(controller: ResendController(config: config), keys: keys)
}

/// A display that records every frame shown, trimmed, with its time; it never fails and never
/// asks for service.
public struct FrameLog: FrameDisplay {
    public var frames: [(time: Instant, lines: [String])] = []

    public init() {}

    public mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        frames.append((now, frame.lines.map(trimmedLine)))
        return []
    }
    public var nextService: Instant? { nil }
    public mutating func service(now: Instant) -> [DisplayEvent] { [] }

    /// The screen at `time` (the last frame shown at or before it).
    public func screen(at time: Instant) -> [String] { frames.last { $0.time <= time }?.lines ?? [] }
}

/// An observer that records every loop event with its time.
public struct EventRecorder: LoopObserver {
    public var events: [(time: Instant, event: LoopEvent)] = []

    public init() {}

    public mutating func record(_ event: LoopEvent, at now: Instant) { events.append((now, event)) }
    public mutating func stepFinished(at now: Instant) {}
}

/// `line` without its trailing spaces (an LCD line's padding).
public func trimmedLine(_ line: String) -> String {
    var text = Substring(line)
    while text.last == " " { text = text.dropLast() }
    return String(text)
}

/// The ASCII digits of a code as a string (test assertions only).
public func digitsText(_ code: SecretCode) -> String {
    String(decoding: code.digits, as: UTF8.self)
}
