import HAL
import HALLinux
import HALMock
import ResendCore

extension DeviceConfig.Keypad {
    /// The entry flow around a resend controller with `config`: keys debounced with `debounceMs`,
    /// `sendKey` bound to Send/Resend, the entry rules of `entry` (and the output's pulse) with
    /// `texts` (`keypad.texts`). The one place that turns the `keypad` section into the core's
    /// coordinator, for `run` and the simulators.
    public func coordinator(controller config: ControllerConfig) -> KeypadCoordinator {
        KeypadCoordinator(
            controller: ResendController(config: config),
            entry: CodeEntry(config: entryConfig(texts: texts, columns: config.layout.columns)),
            keys: KeyDebouncer(window: .milliseconds(Int64(debounceMs))),
            bindings: keyBindings)
    }
}

/// Runs `source` through the keypad's event loop (`KeypadLoop`) with the services: the send
/// command's runner, the verify command's, and the state file when one is given (on `wall`). The
/// keypad's counterpart of `runEventLoop`, for `run` and the simulators; returns when the loop
/// stops, after a send or verify command still running (and whatever it started) got SIGTERM and,
/// after the grace period, SIGKILL. `output` is the door strike or relay (`NoLED` when none).
func runKeypadLoop<Source: EventSource, Display: FrameDisplay, LED: OutputLine, Output: OutputLine, Clock: MonotonicClock, Observer: LoopObserver, Wall: WallClock>(
    source: Source, display: Display, led: LED, output: Output, clock: Clock, wall: Wall, observer: Observer,
    pad: KeypadCoordinator, runner: SendRunner, verifier: VerifyRunner, stateFile: String?
) throws(HALError) {
    defer {
        // The source (and its signalfd) lives until here: `source` is this function's argument.
        withExtendedLifetime(source) {
            if case .process(let process) = runner { process.terminateAll() }
            if case .process(let process) = verifier { process.terminateAll() }
        }
    }
    if let stateFile {
        var loop = KeypadLoop(
            source: source, display: display, led: led, output: output, clock: clock, observer: observer,
            pad: pad, runner: runner, verifier: verifier, store: StateFile(path: stateFile), wallClock: wall)
        try loop.run()
    } else {
        var loop = KeypadLoop(
            source: source, display: display, led: led, output: output, clock: clock, observer: observer,
            pad: pad, runner: runner, verifier: verifier, store: NoStateStorage(), wallClock: wall, persistence: false)
        try loop.run()
    }
}
