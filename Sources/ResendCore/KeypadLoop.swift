import HAL

/// The event loop of a device with a keypad: `EventLoop`'s job around a `KeypadCoordinator`
/// instead of a bare `ResendController`. It waits until the earliest of (next input, the
/// coordinator's deadline, the output pulse's bound, display service, send and verify runner
/// service), feeds the coordinator, and carries out its actions:
///
/// - inputs: `.edge` (the single button, as `Key.button`), `.key` (a keypad backend), `.sendFinished`,
///   `.verifyFinished`, `.stop`, `.inputDevice` (logged as `.keypad`); every key goes through the
///   coordinator's `KeyDebouncer`;
///   `.edgesMayBeLost` reads the button's level and feeds a differing level as an edge (unlike
///   `EventLoop`, the level is not also read when a debounce window closes);
/// - the send command runs through `runner`, the verify command through `verifier` (the code goes
///   to its standard input; the loop logs only the code's length and the outcome, never a digit,
///   and never the verify command's output);
/// - the output line (door strike, relay) is driven inactive at start and at stop (also when
///   waiting fails and `run()` throws), and every pulse is bounded twice: by the entry flow's own
///   deadline and by the loop's (`EntryConfig.pulse` after it went active), so no path leaves it
///   active past its pulse while the loop runs;
/// - the state (the controller's and the entry's, one file) is read once at start and written on
///   every `.persist` action, on the wall clock, like `EventLoop`; after the actions of one batch
///   the coordinator is told whether all of that batch's writes succeeded (`stateWritten`): the
///   entry flow starts a verify command only once its try is on disk, and closes code entry
///   while writes fail (fail closed).
///
/// Raspberry Pi kernels keep a released output at its last level: if the process dies mid-pulse
/// the line stays active until the next start drives it inactive (keep restarts fast).
public struct KeypadLoop<
    Source: EventSource, Display: FrameDisplay, LED: OutputLine, Output: OutputLine, Clock: MonotonicClock,
    Observer: LoopObserver, Runner: CommandRunner, Verifier: CodeVerifier, Store: StateStorage, Wall: WallClock
> {
    public var source: Source
    public var display: Display
    public var led: LED
    /// The door strike or relay; `NoLED` when none is fitted.
    public var output: Output
    public let clock: Clock
    public var observer: Observer
    public var pad: KeypadCoordinator
    public var runner: Runner
    public var verifier: Verifier
    public var store: Store
    public let wallClock: Wall
    /// False: nothing is read or written.
    public let persistence: Bool

    private var ledState: Bool?
    /// The output line's last level set successfully; nil before the first or after a failure.
    private var outputState: Bool?
    /// The loop's own bound on a pulse (the output goes inactive here at the latest), or, after a
    /// failed `set`, when to try driving it inactive again.
    private var outputDeadline: Instant?
    /// The wait before the next retry after a failed `set` (doubling, at most a minute).
    private var outputRetry = KeypadLoopTiming.firstOutputRetry
    private var reportedBounces = 0
    /// The button's last raw level and the latest edge time (for `.edgesMayBeLost`).
    private var buttonRaw = false
    private var buttonHorizon: Instant?
    /// The latest snapshots, written together (one state file).
    private var controllerSnapshot: ControllerSnapshot?
    private var entrySnapshot: EntrySnapshot?

    public init(
        source: Source, display: Display, led: LED, output: Output, clock: Clock, observer: Observer,
        pad: KeypadCoordinator, runner: Runner, verifier: Verifier, store: Store, wallClock: Wall, persistence: Bool = true
    ) {
        self.source = source
        self.display = display
        self.led = led
        self.output = output
        self.clock = clock
        self.observer = observer
        self.pad = pad
        self.runner = runner
        self.verifier = verifier
        self.store = store
        self.wallClock = wallClock
        self.persistence = persistence
    }

    /// The earliest instant anything inside the loop needs to run again; nil when idle.
    public var nextDeadline: Instant? {
        var next = earliest(pad.nextDeadline, display.nextService)
        next = earliest(next, runner.nextService)
        next = earliest(next, verifier.nextService)
        return earliest(next, outputState == false ? nil : outputDeadline)
    }

    /// Runs until a `.stop` input arrives; then shows the stopped screen, drives the output line
    /// inactive and returns. Throws only when waiting itself fails (the output is driven inactive
    /// first).
    public mutating func run() throws(HALError) {
        let start = clock.now()
        var restoredController: ControllerSnapshot?
        var restoredEntry: EntrySnapshot?
        if persistence, let state = store.loadState(observer: &observer, now: start) {
            let wallNow = wallClock.now()
            restoredController = state.resumed(monotonicNow: start, wallNow: wallNow, config: pad.controller.config)
            restoredEntry = state.entry?.resumed(monotonicNow: start, wallNow: wallNow, config: pad.entry.config)
        }
        perform(pad.start(now: start, restoring: restoredController, entry: restoredEntry), now: start)
        observer.stepFinished(at: start)
        while true {
            let inputs: [LoopInput]
            do throws(HALError) {
                inputs = try source.wait(until: nextDeadline)
            } catch {
                releaseOutput(now: clock.now())
                throw error
            }
            let now = clock.now()
            if step(inputs, now: now) { return }
        }
    }

    /// Handles one batch of inputs at `now`. Returns true when the loop must end.
    private mutating func step(_ inputs: [LoopInput], now: Instant) -> Bool {
        for input in inputs {
            switch input {
            case .edge(let edge):
                buttonEdge(edge, now: now)
            case .key(let event):
                // Only the button's raw edges are logged: a key's identity may be a digit of the code.
                if event.key == .button {
                    buttonEdge(ButtonEdge(pressed: event.isPress, time: event.at), now: now)
                } else {
                    perform(pad.feed(event, now: now), now: now)
                }
            case .edgesMayBeLost:
                reconcileButtonLevel(now: now)
            case .sendFinished(let outcome):
                perform(pad.sendFinished(outcome, now: now), now: now)
            case .verifyFinished(let outcome):
                verifyEnded(outcome, now: now)
            case .inputDevice(let event):
                observer.record(.keypad(event), at: now)
            case .stop:
                perform(pad.stop(now: now), now: now)
                releaseOutput(now: now)
                observer.stepFinished(at: now)
                return true
            }
        }
        if let due = runner.nextService, due <= now {
            for outcome in runner.service(now: now) { perform(pad.sendFinished(outcome, now: now), now: now) }
        }
        if let due = verifier.nextService, due <= now {
            for outcome in verifier.service(now: now) { verifyEnded(outcome, now: now) }
        }
        perform(pad.advance(to: now), now: now)
        if outputState != false, let bound = outputDeadline, bound <= now {
            setOutput(false, now: now)
        }
        if let due = display.nextService, due <= now {
            for event in display.service(now: now) { observer.record(.display(event), at: now) }
        }
        observer.stepFinished(at: now)
        return false
    }

    private mutating func buttonEdge(_ edge: ButtonEdge, now: Instant) {
        observer.record(.edge(edge), at: now)
        buttonRaw = edge.pressed
        buttonHorizon = max(buttonHorizon ?? edge.time, edge.time)
        perform(pad.feed(KeyEvent(.button, edge.pressed ? .pressed : .released, at: edge.time), now: now), now: now)
    }

    /// The button's edges may have been lost: reads its level and, when it differs from the last
    /// edge, feeds it as an edge at the read's time (never before the last edge), as
    /// `Debouncer.reconcile` does in `EventLoop`.
    private mutating func reconcileButtonLevel(now: Instant) {
        let level: ButtonLevel?
        do throws(HALError) {
            level = try source.readButtonLevel()
        } catch {
            observer.record(.buttonReadFailed(error), at: now)
            return
        }
        guard let level, level.pressed != buttonRaw else { return }
        observer.record(.edgesLost(level), at: now)
        let time = max(level.time, buttonHorizon ?? level.time)
        buttonEdge(ButtonEdge(pressed: level.pressed, time: time), now: now)
    }

    private mutating func verifyEnded(_ outcome: SendOutcome, now: Instant) {
        observer.record(.verifyEnded(ending: outcome.ending, duration: outcome.duration), at: now)
        let result = VerifyOutcome(sequence: outcome.sequence, result: VerifyResult(outcome.ending))
        perform(pad.verifyFinished(result, now: now), now: now)
    }

    private mutating func perform(_ actions: [KeypadAction], now: Instant) {
        var immediateSends: [SendOutcome] = []
        var immediateVerifies: [SendOutcome] = []
        // Fail closed: whether every state write of this batch succeeded (nil: none was asked).
        var written: Bool?
        for action in actions {
            switch action {
            case .show(let frame):
                for event in display.show(frame, now: now) { observer.record(.display(event), at: now) }
            case .controller(.persist(let snapshot)):
                controllerSnapshot = snapshot
                written = writeState() && (written ?? true)
            case .controller(let action):
                if let outcome = performController(action, now: now) { immediateSends.append(outcome) }
            case .entry(let action):
                switch action {
                case .runVerify(let request):
                    if let outcome = verifier.start(request, now: now) { immediateVerifies.append(outcome) }
                case .setOutput(let active):
                    setOutput(active, now: now)
                case .persist(let snapshot):
                    entrySnapshot = snapshot
                    written = writeState() && (written ?? true)
                case .log(let event):
                    observer.record(.entry(event), at: now)
                }
            }
        }
        // Fail closed: the entry flow learns whether the state reached the disk before it acts on
        // it (a submitted code's verify command starts only from this answer).
        if let written { perform(pad.stateWritten(written, now: now), now: now) }
        for outcome in immediateSends { perform(pad.sendFinished(outcome, now: now), now: now) }
        for outcome in immediateVerifies { verifyEnded(outcome, now: now) }
    }

    /// Carries out one of the controller's actions; the outcome of a send that could not start.
    private mutating func performController(_ action: ControllerAction, now: Instant) -> SendOutcome? {
        switch action {
        case .show:
            return nil  // the coordinator merges frames; it never passes this on
        case .setLED(let on):
            guard ledState != on else { return nil }
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
            if case .pressAccepted = event, pad.keys.suppressedEdges > reportedBounces {
                observer.record(.bouncesSuppressed(count: pad.keys.suppressedEdges - reportedBounces), at: now)
                reportedBounces = pad.keys.suppressedEdges
            }
        case .persist:
            return nil  // written by `perform`, which reports the write to the entry flow
        case .runSendCommand(let attempt, let sequence, let cooldownSeconds):
            let request = SendRequest(
                sequence: sequence, attempt: attempt, cooldownSeconds: cooldownSeconds, pressTime: wallClock.now())
            return runner.start(request, now: now)
        }
        return nil
    }

    /// Sets the output line. A failure is logged and the level counts as unknown: the loop tries
    /// to drive it inactive again after `outputRetry` (100 ms, doubling up to a minute), until that
    /// succeeds.
    private mutating func setOutput(_ active: Bool, now: Instant) {
        if !active && outputState == false { return }
        do throws(HALError) {
            try output.set(active)
            outputState = active
            outputRetry = KeypadLoopTiming.firstOutputRetry
            if active {
                outputDeadline = pad.entry.config.pulse.map { now + $0 }
            } else {
                outputDeadline = nil
            }
            observer.record(.output(active), at: now)
        } catch {
            outputState = nil
            outputDeadline = now + outputRetry
            outputRetry = min(outputRetry + outputRetry, KeypadLoopTiming.longestOutputRetry)
            observer.record(.outputFailed(error), at: now)
        }
    }

    /// Writes both machines' latest snapshots as one state (the controller's own when the entry
    /// has not persisted yet, and the reverse). False when the write failed (logged); true when it
    /// succeeded or nothing is persisted.
    private mutating func writeState() -> Bool {
        guard persistence else { return true }
        let monotonicNow = clock.now()
        let wallNow = wallClock.now()
        var state = PersistedState(controllerSnapshot ?? pad.controller.snapshot, monotonicNow: monotonicNow, wallNow: wallNow)
        state.entry = PersistedEntryState(entrySnapshot ?? pad.entry.snapshot, monotonicNow: monotonicNow, wallNow: wallNow)
        do throws(HALError) {
            try store.write(state.encoded())
            return true
        } catch {
            observer.record(.state(.writeFailed(error)), at: monotonicNow)
            return false
        }
    }

    /// Drives a configured output line inactive (stop, or waiting failed).
    private mutating func releaseOutput(now: Instant) {
        if pad.entry.config.pulse != nil { setOutput(false, now: now) }
    }
}

/// The output line's retry after a failed `set`.
enum KeypadLoopTiming {
    static let firstOutputRetry = TimeSpan.milliseconds(100)
    static let longestOutputRetry = TimeSpan.seconds(60)
}
