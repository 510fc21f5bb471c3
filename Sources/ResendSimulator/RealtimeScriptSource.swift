import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// A headless script on real time: the script's edges are delivered at their instants on the
/// clock, and everything else (SIGINT/SIGTERM, the send command's pidfd) comes through `inner`
/// (a `LinuxEventSource`). Like `VirtualEventSource`, it stops once the script is done and the
/// loop has nothing pending, but never while `busy()` says an input may still come from `inner`:
/// a send command SIGKILLed after the countdown ended leaves the loop no deadline, and its outcome
/// arrives only through the pidfd.
struct RealtimeScriptSource<Inner: EventSource, Clock: MonotonicClock>: EventSource {
    var inner: Inner
    var pending: [(time: Instant, input: LoopInput)]
    /// The inputs before `next` were delivered (an index, not removeFirst: O(1) per input).
    var next = 0
    let clock: Clock
    /// True while a send command runs (its outcome is still to come).
    let busy: () -> Bool

    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        while true {
            let now = clock.now()
            var end = next
            while end < pending.endIndex, pending[end].time <= now { end += 1 }
            if end > next {
                let due = pending[next..<end].map { $0.input }
                next = end
                return due
            }
            let upcoming = next < pending.endIndex ? pending[next].time : nil
            if upcoming == nil && deadline == nil && !busy() { return [.stop] }
            if let deadline, deadline <= now { return [] }
            let inputs = try inner.wait(until: earliest(deadline, upcoming))
            if !inputs.isEmpty { return inputs }
            if let deadline, deadline <= clock.now() { return [] }
        }
    }
}

/// The headless simulation on real time (`--headless --realtime`): the same output as on virtual
/// time, but each line comes when it happens; the process can be stopped or killed meanwhile.
func runHeadlessRealtime(
    settings: BehaviourSettings, services: SimulationServices, coordinator: DeviceCoordinator, script: [ScriptItem], events: Bool,
    output: @escaping (String) -> Void
) throws(ExitError) {
    let clock = SystemClock()
    var device = MockDevice(settings: settings, clock: clock, delay: SleepDelay())
    try device.startDisplay(now: clock.now())
    let line = RecordingLED(clock: clock)
    // Real commands get a private session directory, removed at the end of the run.
    var services = services
    var session: SessionDirectory?
    if services.sendCommand != nil || services.verifyCommand != nil {
        do throws(HALError) {
            session = try SessionDirectory.forThisProcess()
        } catch {
            throw ExitError(.ioError, "simulate: cannot make the session directory: \(error.operation): \(describe(error))")
        }
        services.sessionDirectory = session?.path
    }
    defer { session?.remove() }
    let runner = try services.makeRunner()
    let verifier = try services.makeVerifier()
    var inner: LinuxEventSource
    do throws(HALError) {
        inner = try LinuxEventSource(button: nil)
    } catch {
        throw ExitError(.software, "simulate: cannot set up the event source: \(error.operation): \(describe(error))")
    }
    runner.attach(to: &inner)
    verifier.attach(to: &inner)
    let processes = [runner.process, verifier.process].compactMap { $0 }
    let start = clock.now()
    let printer = HeadlessPrinter(
        emulator: device.emulator, led: device.led, start: start, events: events, outputLine: services.keypad == nil ? nil : line,
        logSendOutput: services.logSendOutput, output: output)
    let client = try services.mqtt.map { setup throws(ExitError) in
        try attachMQTT(setup, source: &inner, command: "simulate") { printer.log($0, at: clock.now()) }
    }
    let source = RealtimeScriptSource(
        inner: inner, pending: scriptInputs(script, start: start), clock: clock, busy: { processes.contains { $0.runningCount > 0 } })
    func runLoop<Observer: LoopObserver>(observer: Observer) throws(HALError) {
        let environment = DeviceLoopEnvironment(
            source: source, display: device.display, outputs: Outputs(led: device.led, strike: line),
            commands: .device(send: runner, verify: verifier), clock: clock, wallClock: SystemWallClock(), observer: observer,
            store: services.stateFile.map { StateFile(path: $0) }, random: .kernel(KernelRandom()))
        try ResendDevice.runLoop(environment, coordinator: coordinator)
    }
    do throws(HALError) {
        if let client, let setup = services.mqtt {
            try runLoop(
                observer: PublishingObserver(
                    inner: printer, publisher: client, topics: setup.topics, hasSendCommand: coordinator.controller.config.hasSendCommand))
        } else {
            try runLoop(observer: printer)
        }
    } catch {
        throw ExitError(.ioError, "simulate: waiting for events failed: \(error.operation): \(describe(error))")
    }
    client?.finish(within: .seconds(1))
}

/// The loop inputs of a script, sorted by time, relative to `start`.
func scriptInputs(_ script: [ScriptItem], start: Instant) -> [(time: Instant, input: LoopInput)] {
    var inputs: [(time: Instant, input: LoopInput)] = []
    for item in script {
        if case .end = item {
            inputs.append((start + item.time, .stop))
        } else {
            inputs += edges(for: item, start: start).map { ($0.time, LoopInput.button($0)) }
            inputs += keyEvents(for: item, start: start).map { ($0.at, LoopInput.key($0)) }
        }
    }
    inputs.sort { $0.time < $1.time }
    return inputs
}
