import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore

/// The loop's environment as `run` and the simulators build it: the send and verify commands as
/// `CommandService`s, the state file when one is given, codes made on the device from
/// `DeviceRandom`; the rest their own.
public typealias DeviceLoopEnvironment<
    Source: EventSource, Display: FrameDisplay, Line: OutputLine, Clock: MonotonicClock, Observer: LoopObserver, Wall: WallClock
> =
    LoopEnvironment<Source, Display, Line, CommandService, CommandService, Clock, Wall, Observer, StateFile, DeviceRandom>

extension Commands where Sender == CommandService, Verifier == CommandService {
    /// The device's commands: none configured unless given.
    public static func device(send: CommandService = .none, verify: CommandService = .none) -> Commands<CommandService, CommandService> {
        Commands(send: send, verify: verify)
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
public func runLoop<Source, Display, Line, Clock, Observer, Wall>(
    _ environment: DeviceLoopEnvironment<Source, Display, Line, Clock, Observer, Wall>, coordinator: DeviceCoordinator,
    stateForgets: Bool = false
) throws(HALError) {
    defer {
        // The source (and its signalfd) lives until here: `environment` is this function's argument.
        withExtendedLifetime(environment.source) {
            environment.commands.send.terminateAll()
            environment.commands.verify.terminateAll()
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
