import HAL

/// Where frames go. The LCD behind a self-healing wrapper on a device, a recorder in tests.
///
/// `show` never throws: a display that fails goes offline and says so in its events; the button
/// and the countdown go on regardless. A display that wants to be retried later (re-probe after a
/// bus error, periodic re-initialisation) names the instant in `nextService`, and the loop calls
/// `service(now:)` once the clock reaches it.
public protocol FrameDisplay {
    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent]
    var nextService: Instant? { get }
    mutating func service(now: Instant) -> [DisplayEvent]
}

/// What a display reports to the log.
public enum DisplayEvent: Hashable, Sendable {
    /// Writing failed; the display is offline until a re-probe succeeds.
    case offline(HALError)
    /// The display answered again and was re-initialised and repainted.
    case online
    /// A periodic re-initialisation against noise ran.
    case refreshed
}

/// Everything the loop reports to its owner, in order, with the instant it happened.
public enum LoopEvent: Hashable, Sendable {
    case controller(ControllerEvent)
    case display(DisplayEvent)
    /// A raw edge from the button line (before debouncing).
    case edge(ButtonEdge)
    /// The debounced button level changed.
    case debounced(DebouncedChange)
    /// The LED could not be set; the loop goes on.
    case ledFailed(HALError)
    /// The LED changed to the given state.
    case led(Bool)
}

/// Receives the loop's events and is told after each step, so a simulator can redraw and a test
/// can sample the emulated screen. Implementations must not block.
public protocol LoopObserver {
    mutating func record(_ event: LoopEvent, at now: Instant)
    mutating func stepFinished(at now: Instant)
}

/// The one imperative part of the product: wait until the earliest of (next input, debouncer
/// deadline, controller deadline, display service time), feed the pure state machines, carry out
/// their actions. Tests and the headless simulator drive it on a virtual clock, the interactive
/// simulator and the device on the real monotonic clock; the code is the same.
public struct EventLoop<Source: EventSource, Display: FrameDisplay, LED: OutputLine, Clock: MonotonicClock, Observer: LoopObserver> {
    public var source: Source
    public var display: Display
    public var led: LED
    public let clock: Clock
    public var observer: Observer
    public var controller: ResendController
    public var debouncer: Debouncer

    /// The latest instant fed to the controller; its inputs never go backwards in time.
    private var controllerTime: Instant
    private var ledState: Bool?

    public init(
        source: Source, display: Display, led: LED, clock: Clock, observer: Observer,
        controller: ResendController, debouncer: Debouncer
    ) {
        self.source = source
        self.display = display
        self.led = led
        self.clock = clock
        self.observer = observer
        self.controller = controller
        self.debouncer = debouncer
        self.controllerTime = .origin
    }

    /// The earliest instant anything inside the loop needs to run again; nil when idle.
    public var nextDeadline: Instant? {
        earliest(earliest(debouncer.nextDeadline, controller.nextDeadline), display.nextService)
    }

    /// Runs until a `.stop` input arrives; then shows the stopped screen and returns.
    /// Throws only when waiting itself fails (the event source broke).
    public mutating func run() throws(HALError) {
        let start = clock.now()
        controllerTime = start
        perform(controller.start(now: start), now: start)
        observer.stepFinished(at: start)
        while true {
            let inputs = try source.wait(until: nextDeadline)
            let now = clock.now()
            if step(inputs, now: now) { return }
        }
    }

    /// Handles one batch of inputs at `now`. Returns true when the loop must end.
    private mutating func step(_ inputs: [LoopInput], now: Instant) -> Bool {
        for input in inputs {
            switch input {
            case .edge(let edge):
                observer.record(.edge(edge), at: now)
                if let change = debouncer.feed(edge) { debounced(change, now: now) }
            case .stop:
                controllerTime = max(controllerTime, now)
                perform(controller.stop(now: controllerTime), now: now)
                observer.stepFinished(at: now)
                return true
            }
        }
        if let change = debouncer.advance(to: now) { debounced(change, now: now) }
        controllerTime = max(controllerTime, now)
        perform(controller.advance(to: controllerTime), now: now)
        if let due = display.nextService, due <= now {
            for event in display.service(now: now) { observer.record(.display(event), at: now) }
        }
        observer.stepFinished(at: now)
        return false
    }

    private mutating func debounced(_ change: DebouncedChange, now: Instant) {
        observer.record(.debounced(change), at: now)
        guard change.pressed else { return }
        // The press happened when it became certain (kernel timestamp + window), which may be a
        // little before `now` when the loop ran late; the controller never goes back in time.
        controllerTime = max(controllerTime, min(change.time, now))
        perform(controller.press(now: controllerTime), now: now)
    }

    private mutating func perform(_ actions: [ControllerAction], now: Instant) {
        for action in actions {
            switch action {
            case .show(let frame):
                for event in display.show(frame, now: now) { observer.record(.display(event), at: now) }
            case .setLED(let on):
                guard ledState != on else { continue }
                do throws(HALError) {
                    try led.set(on)
                    ledState = on
                    observer.record(.led(on), at: now)
                } catch {
                    ledState = nil
                    observer.record(.ledFailed(error), at: now)
                }
            case .log(let event):
                observer.record(.controller(event), at: now)
            case .runSendCommand:
                break  // The send command arrives with the config-file issue.
            }
        }
    }
}

/// The earlier of two optional instants; nil only when both are nil.
@inlinable
public func earliest(_ a: Instant?, _ b: Instant?) -> Instant? {
    switch (a, b) {
    case (nil, nil): return nil
    case (let x?, nil): return x
    case (nil, let y?): return y
    case (let x?, let y?): return min(x, y)
    }
}

/// An observer that ignores everything.
public struct NoObserver: LoopObserver {
    public init() {}
    public mutating func record(_ event: LoopEvent, at now: Instant) {}
    public mutating func stepFinished(at now: Instant) {}
}

/// An LED that is not fitted.
public struct NoLED: OutputLine {
    public init() {}
    public mutating func set(_ active: Bool) throws(HALError) {}
}
