import HAL
import ResendCore

/// A loop environment assembled from whatever parts a test needs (recording fakes, mocks, `No...`
/// stand-ins).
struct TestEnvironment<
    Source: EventSource, Display: FrameDisplay, LED: OutputLine, Strike: OutputLine, Clock: MonotonicClock,
    Observer: LoopObserver, Sender: CommandRunner, Verifier: CodeVerifier, Store: StateStorage, Wall: WallClock
>: LoopEnvironment {
    var source: Source
    var display: Display
    var led: LED
    var strike: Strike
    let clock: Clock
    var observer: Observer
    var sender: Sender
    var verifier: Verifier
    var store: Store?
    let wallClock: Wall
}

/// The single-button device's coordinator: the button debounced by `button`, no code entry.
func buttonCoordinator(_ config: ControllerConfig, button: Debouncer) -> DeviceCoordinator {
    var keys = KeyDebouncer(window: button.window, mode: button.mode)
    keys.use(button, for: .button)
    return DeviceCoordinator(controller: ResendController(config: config), keys: keys)
}

/// The environment's parts under the names the tests read them by.
extension EventLoop {
    var source: Environment.Source {
        get { environment.source }
        set { environment.source = newValue }
    }
    var display: Environment.Display {
        get { environment.display }
        set { environment.display = newValue }
    }
    var led: Environment.LED { environment.led }
    var observer: Environment.Observer { environment.observer }
    var runner: Environment.Sender { environment.sender }
    var verifier: Environment.Verifier { environment.verifier }
    var store: Environment.Store? { environment.store }
    var pad: DeviceCoordinator { coordinator }
}
