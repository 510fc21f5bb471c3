import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore

/// The loop's environment as `run` and the simulators build it: their own source, display, LED,
/// output line, clocks and observer; the send and verify commands as `CommandService`s; the state
/// file when one is given.
public struct DeviceEnvironment<
    Source: EventSource, Display: FrameDisplay, LED: OutputLine, Strike: OutputLine, Clock: MonotonicClock,
    Observer: LoopObserver, Wall: WallClock
>: LoopEnvironment {
    public var source: Source
    public var display: Display
    public var led: LED
    public var strike: Strike
    public let clock: Clock
    public var observer: Observer
    public var sender: CommandService
    public var verifier: CommandService
    public var store: StateFile?
    public let wallClock: Wall
    public var random: DeviceRandom

    public init(
        source: Source, display: Display, led: LED, strike: Strike, clock: Clock, observer: Observer,
        sender: CommandService = .none, verifier: CommandService = .none, stateFile: String? = nil, wallClock: Wall,
        random: DeviceRandom = .kernel(KernelRandom())
    ) {
        self.random = random
        self.source = source
        self.display = display
        self.led = led
        self.strike = strike
        self.clock = clock
        self.observer = observer
        self.sender = sender
        self.verifier = verifier
        self.store = stateFile.map { StateFile(path: $0) }
        self.wallClock = wallClock
    }
}

/// Where codes made on the device come from: the kernel (`run`, and the simulator on real time), or
/// a fixed pseudo-random sequence (the simulator on virtual time: the same script, the same codes).
public enum DeviceRandom: RandomSource {
    case kernel(KernelRandom)
    case sequence(SequenceRandom)

    /// The simulator's sequence on virtual time.
    public static var simulated: DeviceRandom { .sequence(SequenceRandom(seed: 20)) }

    public mutating func fill(_ buffer: inout [UInt8]) throws(HALError) {
        switch self {
        case .kernel(var random):
            try random.fill(&buffer)
        case .sequence(var random):
            defer { self = .sequence(random) }
            try random.fill(&buffer)
        }
    }
}

/// Runs the event loop on `environment` around `coordinator`: the one place that builds the loop,
/// for `run`, the headless simulator (virtual and real time) and the interactive one. Returns
/// when the loop stops, after a send or verify command still running (and whatever it started)
/// got SIGTERM and, after the grace period, SIGKILL. SIGINT/SIGTERM stay with the environment's
/// source meanwhile, so that wait is not cut short. `stateForgets`: `EventLoop.stateForgets`.
public func runLoop<Source, Display, LED, Strike, Clock, Observer, Wall>(
    _ environment: DeviceEnvironment<Source, Display, LED, Strike, Clock, Observer, Wall>, coordinator: DeviceCoordinator,
    stateForgets: Bool = false
) throws(HALError) {
    defer {
        // The source (and its signalfd) lives until here: `environment` is this function's argument.
        withExtendedLifetime(environment.source) {
            environment.sender.terminateAll()
            environment.verifier.terminateAll()
        }
    }
    var loop = EventLoop(environment: environment, coordinator: coordinator)
    loop.stateForgets = stateForgets
    try loop.run()
}

/// The device's coordinator: the resend controller with `config`, the button debounced by
/// `button` (its own window, mode and start-up level, keypad or not), and with `keypad` its keys
/// (debounced with `keypad.debounceMs`), the send key binding and the code entry (`entryConfig`
/// with `keypad.texts`, fitted to the display's width). The one place that turns the
/// configuration into the core's coordinator.
public func deviceCoordinator(controller config: ControllerConfig, button: Debouncer, keypad: DeviceConfig.Keypad?) -> DeviceCoordinator {
    guard let keypad else {
        var keys = KeyDebouncer(window: button.window, mode: button.mode)
        keys.use(button, for: .button)
        return DeviceCoordinator(controller: ResendController(config: config), keys: keys)
    }
    var keys = KeyDebouncer(window: .milliseconds(Int64(keypad.debounceMs)))
    keys.use(button, for: .button)
    return DeviceCoordinator(
        controller: ResendController(config: config),
        entry: CodeEntry(config: keypad.entryConfig(texts: keypad.texts, columns: config.layout.columns)), keys: keys,
        bindings: keypad.keyBindings)
}
