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
    /// The button's edges the debouncer suppressed (bounces) since the last such report; reported
    /// right after an accepted press, when there were any. Keypad keys' bounces are not counted.
    case bouncesSuppressed(count: Int)
    /// A read of the button line found it elsewhere than its edges said: edges were lost, and the
    /// debouncer took the read level instead.
    case edgesLost(ButtonLevel)
    /// Reading the button line's level failed; the edges stay the only source.
    case buttonReadFailed(HALError)
    /// A read of a keypad key's level found it elsewhere than its events said: events were lost
    /// and the debouncer took the read level. Which key is not said (it may be a digit of a code).
    case keyEdgesLost
    /// Reading a keypad key's level failed (a matrix scan); its events stay the only source.
    case keyReadFailed(HALError)
    /// Reading or writing the persisted state.
    case state(StateEvent)
    /// The code-entry flow: lengths and outcomes, never a digit.
    case entry(EntryEvent)
    /// The verify command ended like this, after `duration` (its output is not kept: it might
    /// echo the code).
    case verifyEnded(ending: CommandOutcome.Ending, duration: TimeSpan)
    /// The output line (door strike, relay) changed to the given state.
    case output(Bool)
    /// The output line could not be set; the loop goes on (and tries again at the next change).
    case outputFailed(HALError)
    /// The keypad's input device went away or came back (`LoopInput.inputDevice`).
    case keypad(InputDeviceEvent)
    /// A request from outside arrived (`LoopInput.remote`); what it did follows as other events.
    case remote(RemoteCommand)
}

/// What happened to the persisted state, for the log.
public enum StateEvent: Hashable, Sendable {
    /// Nothing was stored yet: a fresh start.
    case freshStart
    /// The stored state was read; the controller resumes from it (clamped, see
    /// `PersistedState.resumed`).
    case restored(PersistedState)
    /// The stored state could not be understood (`reason`); it was moved to `movedTo` (nil when
    /// moving it failed too, see `moveAsideFailed`) and the device starts fresh.
    case unreadable(reason: String, movedTo: String?)
    /// Reading failed (e.g. permission): the device starts fresh and leaves the file alone.
    case readFailed(HALError)
    /// The stored state needs a newer program (`versions`: after a downgrade). Without a code
    /// entry it was moved to `movedTo` and the device starts fresh, as for an unreadable state.
    /// With a code entry, or when moving it failed, `movedTo` is nil: the file is kept exactly as
    /// it is and never written over while this process runs, and code entry stays closed (the
    /// wrong codes and the lockout in it are never reset: fail closed).
    case newerFormat(StateFormatVersions, movedTo: String?)
    /// Moving an unreadable state aside failed.
    case moveAsideFailed(HALError)
    /// Writing the state failed: a restart now would not resume the current countdown.
    case writeFailed(HALError)
}

/// Receives the loop's events and is told after each step, so a simulator can redraw and a test
/// can sample the emulated screen. Implementations must not block.
public protocol LoopObserver {
    mutating func record(_ event: LoopEvent, at now: Instant)
    mutating func stepFinished(at now: Instant)
    /// The device's status changed (`DeviceStatus`, without the display's part): told right
    /// before `stepFinished`, only when it differs from the last one told.
    mutating func statusChanged(_ status: DeviceStatus, at now: Instant)
}

extension LoopObserver {
    /// Most observers do not follow the status.
    public mutating func statusChanged(_ status: DeviceStatus, at now: Instant) {}
}

/// The one imperative part of the product, for every device: the single button alone, or a
/// keypad with code entry and a door strike. It waits until the earliest of (next input, the
/// coordinator's deadline (keys' debounce windows, countdown, entry), the output pulse's bound,
/// display service, send and verify runner service), feeds the `DeviceCoordinator`, and carries
/// out its actions. Tests and the headless simulator drive it on a virtual clock, the interactive
/// simulator and the device on the real monotonic clock; the code is the same.
///
/// - Inputs: `.key` (the single button as `Key.button`, keypad keys from a backend), every key
///   through the coordinator's `KeyDebouncer`; only the button's raw edges and debounced changes
///   are logged (a key's identity may be a digit of the code). Every key's level is read
///   (`EventSource.readLevel(of:)`, where the source can) when its debounce window closes, and
///   every known key's after `.edgesMayBeLost`; a level that differs from its last edge is
///   reconciled (`KeyDebouncer.reconcile`: lost edges repaired, no press from a window that did
///   not hold), the button's and a keypad key's the same way.
/// - The send command runs through `environment.commands.send`, its outcomes arriving as
///   `.commandFinished(.send, _)`, from the runner's `service(now:)`, or at once from `start`. The press time
///   it is given is the press's own instant on the wall clock (worked back from the loop's `now`).
/// - The verify command runs through `environment.commands.verify` (the code goes to its standard input;
///   the loop logs only the code's length and the outcome, never a digit, and never the verify
///   command's output). Without a code entry, verify outcomes are ignored.
/// - The output line (`environment.outputs.strike`: door strike, relay) is driven inactive at start and at
///   stop (also when waiting fails and `run()` throws), and every pulse is bounded twice: by the
///   entry flow's own deadline and by the loop's (`EntryConfig.pulse` after it went active), so no
///   path leaves it active past its pulse while the loop runs. Raspberry Pi kernels keep a
///   released output at its last level: if the process dies mid-pulse the line stays active until
///   the next start drives it inactive (keep restarts fast).
/// - The state (the controller's and, with a code entry, the entry's: one file) is read once when
///   `run()` starts (a countdown persisted by an earlier process resumes; an unreadable state is
///   moved aside and logged; one of a newer format too, except with a code entry: then it is kept,
///   never written over, and code entry stays closed) and written on every `.persist` action, converted on the wall clock.
///   After the actions of one batch the coordinator is told whether all of that batch's writes
///   succeeded (`DeviceCoordinator.stateWritten`): the entry flow starts a verify command only once
///   its try is on disk, and closes code entry while writes fail (fail closed). Only the monotonic
///   clock times anything while running. Without a store (`environment.store` nil) nothing is read
///   or written.
public struct EventLoop<Environment: LoopPorts> {
    /// The loop's outside world: its parts are reachable (and inspectable in tests) here.
    public var environment: Environment
    public private(set) var coordinator: DeviceCoordinator

    private var ledState: Bool?
    /// The output line's last level set successfully; nil before the first or after a failure.
    private var outputState: Bool?
    /// The loop's own bound on a pulse (the output goes inactive here at the latest), or, after a
    /// failed `set`, when to try driving it inactive again.
    private var outputDeadline: Instant?
    /// The wait before the next retry after a failed `set` (doubling, at most a minute).
    private var outputRetry = EventLoopTiming.firstOutputRetry
    /// The button's suppressed edges (`KeyDebouncer.suppressedEdges(of:)`) at the last
    /// `.bouncesSuppressed` report.
    private var reportedBounces = 0
    /// The latest snapshots, written together (one state file).
    private var controllerSnapshot: ControllerSnapshot?
    private var entrySnapshot: EntrySnapshot?
    /// The status last told to the observer.
    private var status: DeviceStatus?
    /// The state file needs a newer program and is kept as it is: nothing is written to it, and
    /// every write counts as failed (code entry stays closed).
    private var stateKept = false
    /// The state's medium forgets at a power cut (tmpfs, an overlay root in RAM) and the operator
    /// did not accept that: the state is still written (a restart resumes the countdown), but the
    /// entry flow is told that no write succeeded, so code entry stays closed from the first frame
    /// (a power cut would forget its wrong codes: fail closed). Set before `run()`.
    public var stateForgets = false

    public init(environment: Environment, coordinator: DeviceCoordinator) {
        self.environment = environment
        self.coordinator = coordinator
    }

    /// The earliest instant anything inside the loop needs to run again; nil when idle.
    public var nextDeadline: Instant? {
        var next = earliest(coordinator.nextDeadline, environment.display.nextService)
        next = earliest(next, environment.commands.send.nextService)
        next = earliest(next, environment.commands.verify.nextService)
        return earliest(next, outputState == false ? nil : outputDeadline)
    }

    /// Runs until a `.stop` input arrives; then shows the stopped screen, drives the output line
    /// inactive and returns. Throws only when waiting itself fails (the event source broke; the
    /// output is driven inactive first).
    public mutating func run() throws(HALError) {
        let start = environment.clock.now()
        var restoredController: ControllerSnapshot?
        var restoredEntry: EntrySnapshot?
        if var store = environment.store {
            var observer = environment.observer
            let loaded = store.loadState(observer: &observer, now: start, keepNewer: coordinator.entry != nil)
            environment.observer = observer
            environment.store = store
            switch loaded {
            case .nothing:
                break
            case .restored(let state):
                let wallNow = environment.wallClock.now()
                restoredController = state.resumed(monotonicNow: start, wallNow: wallNow, config: coordinator.controller.config)
                if let entry = coordinator.entry {
                    restoredEntry = state.entry?.resumed(monotonicNow: start, wallNow: wallNow, config: entry.config)
                }
            case .kept:
                stateKept = true
            }
        }
        perform(coordinator.start(now: start, restoring: restoredController, entry: restoredEntry), now: start)
        if (stateKept || stateForgets) && coordinator.entry != nil {
            // Fail closed from the first frame: no write can record a try.
            perform(coordinator.stateWritten(false, now: start), now: start)
        }
        finishStep(at: start)
        while true {
            let inputs: [LoopInput]
            do throws(HALError) {
                inputs = try environment.source.wait(until: nextDeadline)
            } catch {
                releaseOutput(now: environment.clock.now())
                throw error
            }
            let now = environment.clock.now()
            if step(inputs, now: now) { return }
        }
    }

    /// Handles one batch of inputs at `now`. Returns true when the loop must end.
    private mutating func step(_ inputs: [LoopInput], now: Instant) -> Bool {
        for input in inputs {
            switch input {
            case .key(let event):
                // Only the button's raw edges are logged: a key's identity may be a digit of the code.
                if event.key == .button {
                    environment.observer.record(.edge(ButtonEdge(pressed: event.isPress, time: event.at)), at: now)
                }
                perform(coordinator.feed(event, now: now), now: now)
            case .edgesMayBeLost:
                // Any key may have lost an edge: read every one the source can read.
                let keys = coordinator.keys.keys
                for key in keys.contains(.button) ? keys : [.button] + keys { reconcile(key, now: now) }
            case .commandFinished(.send, let outcome):
                perform(coordinator.sendFinished(outcome, now: now), now: now)
            case .commandFinished(.verify, let outcome):
                verifyEnded(outcome, now: now)
            case .inputDevice(let event):
                environment.observer.record(.keypad(event), at: now)
            case .remote(let command):
                environment.observer.record(.remote(command), at: now)
                perform(coordinator.remote(command, now: now), now: now)
            case .stop:
                perform(coordinator.stop(now: now), now: now)
                releaseOutput(now: now)
                finishStep(at: now)
                return true
            }
        }
        // A window closes: make sure no edge of that key was lost in it before trusting the last one.
        for key in coordinator.keys.keysDue(at: now) { reconcile(key, now: now) }
        perform(coordinator.advanceKeys(to: now), now: now)
        if let due = environment.commands.send.nextService, due <= now {
            for outcome in environment.commands.send.service(now: now) { perform(coordinator.sendFinished(outcome, now: now), now: now) }
        }
        if let due = environment.commands.verify.nextService, due <= now {
            for outcome in environment.commands.verify.service(now: now) { verifyEnded(outcome, now: now) }
        }
        perform(coordinator.advance(to: now), now: now)
        if outputState != false, let bound = outputDeadline, bound <= now {
            setOutput(false, now: now)
        }
        if let due = environment.display.nextService, due <= now {
            for event in environment.display.service(now: now) { environment.observer.record(.display(event), at: now) }
        }
        finishStep(at: now)
        return false
    }

    /// Tells the observer the status when it changed, then that the step is finished.
    private mutating func finishStep(at now: Instant) {
        let current = DeviceStatus(coordinator: coordinator, now: now)
        if current != status {
            status = current
            environment.observer.statusChanged(current, at: now)
        }
        environment.observer.stepFinished(at: now)
    }

    /// Reads `key`'s level (when the source can) and lets the key debouncer reconcile the key's
    /// events with it: the same repair for the button and every keypad key.
    private mutating func reconcile(_ key: Key, now: Instant) {
        let level: ButtonLevel?
        do throws(HALError) {
            level = try environment.source.readLevel(of: key)
        } catch {
            environment.observer.record(key == .button ? .buttonReadFailed(error) : .keyReadFailed(error), at: now)
            return
        }
        guard let level, level.pressed != coordinator.keys.rawPressed(key) else { return }
        environment.observer.record(key == .button ? .edgesLost(level) : .keyEdgesLost, at: now)
        perform(coordinator.reconcile(key, level: level, now: now), now: now)
    }

    private mutating func verifyEnded(_ outcome: CommandOutcome, now: Instant) {
        guard coordinator.entry != nil else { return }  // no verify command without a code entry
        environment.observer.record(.verifyEnded(ending: outcome.ending, duration: outcome.duration), at: now)
        let result = VerifyOutcome(sequence: outcome.sequence, result: VerifyResult(outcome.ending))
        perform(coordinator.verifyFinished(result, now: now), now: now)
    }

    private mutating func perform(_ actions: [DeviceAction], now: Instant) {
        var immediateSends: [CommandOutcome] = []
        var immediateVerifies: [CommandOutcome] = []
        // Fail closed: whether every state write of this batch succeeded (nil: none was asked).
        var written: Bool?
        for action in actions {
            switch action {
            case .show(let frame):
                for event in environment.display.show(frame, now: now) { environment.observer.record(.display(event), at: now) }
            case .buttonChanged(let change):
                environment.observer.record(.debounced(change), at: now)
            case .controller(.persist(let snapshot)):
                controllerSnapshot = snapshot
                written = writeState() && !stateForgets && (written ?? true)
            case .controller(let action):
                if let outcome = performController(action, now: now) { immediateSends.append(outcome) }
            case .entry(let action):
                switch action {
                case .runVerify(let request):
                    if let outcome = environment.commands.verify.start(request, now: now) { immediateVerifies.append(outcome) }
                case .setOutput(let active):
                    setOutput(active, now: now)
                case .persist(let snapshot):
                    entrySnapshot = snapshot
                    written = writeState() && !stateForgets && (written ?? true)
                case .log(let event):
                    environment.observer.record(.entry(event), at: now)
                }
            }
        }
        // Fail closed: the entry flow learns whether the state reached the disk before it acts on
        // it (a submitted code's verify command starts only from this answer).
        if let written { perform(coordinator.stateWritten(written, now: now), now: now) }
        for outcome in immediateSends { perform(coordinator.sendFinished(outcome, now: now), now: now) }
        for outcome in immediateVerifies { verifyEnded(outcome, now: now) }
    }

    /// Carries out one of the controller's actions; the outcome of a send that could not start.
    private mutating func performController(_ action: ControllerAction, now: Instant) -> CommandOutcome? {
        switch action {
        case .show:
            return nil  // the coordinator merges frames; it never passes this on
        case .setLED(let on):
            guard ledState != on else { return nil }
            do throws(HALError) {
                try environment.outputs.led?.set(on)
                ledState = on
                environment.observer.record(.led(on), at: now)
            } catch {
                ledState = nil
                environment.observer.record(.ledFailed(error), at: now)
            }
        case .log(let event):
            environment.observer.record(.controller(event), at: now)
            let suppressed = coordinator.keys.suppressedEdges(of: .button)
            if case .pressAccepted = event, suppressed > reportedBounces {
                environment.observer.record(.bouncesSuppressed(count: suppressed - reportedBounces), at: now)
                reportedBounces = suppressed
            }
        case .persist:
            return nil  // written by `perform`, which reports the write to the entry flow
        case .runSendCommand(let attempt, let sequence, let cooldownSeconds):
            // The press was at the coordinator's time; the wall clock is read now, so step back.
            let sincePress = max(TimeSpan.zero, environment.clock.now() - coordinator.controllerTime)
            var request = SendRequest(
                sequence: sequence, attempt: attempt, cooldownSeconds: cooldownSeconds,
                pressTime: environment.wallClock.now() - sincePress)
            if coordinator.issuesCodes {
                // A new code for this send, on the command's standard input only.
                do throws(HALError) {
                    request.input = try coordinator.issueCode(from: &environment.random)
                } catch {
                    return CommandOutcome(
                        sequence: sequence, ending: .couldNotStart(reason: error.operation, errno: error.errno), duration: .zero)
                }
            }
            return environment.commands.send.start(request, now: now)
        }
        return nil
    }

    /// Sets the output line. A failure is logged and the level counts as unknown: the loop tries
    /// to drive it inactive again after `outputRetry` (100 ms, doubling up to a minute), until that
    /// succeeds.
    private mutating func setOutput(_ active: Bool, now: Instant) {
        if !active && outputState == false { return }
        do throws(HALError) {
            try environment.outputs.strike?.set(active)
            outputState = active
            outputRetry = EventLoopTiming.firstOutputRetry
            if active {
                outputDeadline = coordinator.entry?.config.pulse.map { now + $0 }
            } else {
                outputDeadline = nil
            }
            environment.observer.record(.output(active), at: now)
        } catch {
            outputState = nil
            outputDeadline = now + outputRetry
            outputRetry = min(outputRetry + outputRetry, EventLoopTiming.longestOutputRetry)
            environment.observer.record(.outputFailed(error), at: now)
        }
    }

    /// Writes the latest snapshots as one state (the controller's, and with a code entry the
    /// entry's; a machine that has not persisted yet contributes its current snapshot), both
    /// clocks read together: the pair anchors the conversion to wall time. False when the write
    /// failed (logged); true when it succeeded or nothing is persisted.
    private mutating func writeState() -> Bool {
        guard var store = environment.store else { return true }
        if stateKept { return false }  // said once at start (`StateEvent.newerFormat`)
        let monotonicNow = environment.clock.now()
        let wallNow = environment.wallClock.now()
        var state = PersistedState(controllerSnapshot ?? coordinator.controller.snapshot, monotonicNow: monotonicNow, wallNow: wallNow)
        if let entry = coordinator.entry {
            state.entry = PersistedEntryState(entrySnapshot ?? entry.snapshot, monotonicNow: monotonicNow, wallNow: wallNow)
        }
        var written = true
        do throws(HALError) {
            try store.write(state.encoded())
        } catch {
            environment.observer.record(.state(.writeFailed(error)), at: monotonicNow)
            written = false
        }
        environment.store = store
        return written
    }

    /// Drives a configured output line inactive (stop, or waiting failed).
    private mutating func releaseOutput(now: Instant) {
        if coordinator.entry?.config.pulse != nil { setOutput(false, now: now) }
    }
}

/// The output line's retry after a failed `set`.
enum EventLoopTiming {
    static let firstOutputRetry = TimeSpan.milliseconds(100)
    static let longestOutputRetry = TimeSpan.seconds(60)
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

/// No send command: every start fails at once (a controller configured with a send command needs
/// a real runner).
public struct NoCommandRunner: CommandRunner {
    public init() {}
    public mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        CommandOutcome(sequence: request.sequence, ending: .couldNotStart(reason: "no send command is configured", errno: 0), duration: .zero)
    }
    public var nextService: Instant? { nil }
    public mutating func service(now: Instant) -> [CommandOutcome] { [] }
}

/// What `StateStorage.loadState` found.
enum LoadedState {
    /// Nothing to resume: a fresh start, a read failure, or an unreadable file moved aside.
    case nothing
    case restored(PersistedState)
    /// A file of a newer format, left in place: never to be written over (`StateEvent.newerFormat`).
    case kept
}

extension StateStorage {
    /// Reads the stored state at a loop's start and logs what happened to `observer`: restored,
    /// a fresh start, a read failure, an unreadable file moved aside (or the move's failure), or
    /// a file of a newer format, moved aside too unless `keepNewer` (a code entry) or the move
    /// failed: then it is kept and never written over.
    mutating func loadState<Observer: LoopObserver>(observer: inout Observer, now: Instant, keepNewer: Bool) -> LoadedState {
        let bytes: [UInt8]?
        do throws(HALError) {
            bytes = try read()
        } catch  where isUnreadableContent(error) {
            // Too large to be ours (the read cap): moved aside like any unreadable state, not
            // left for the next write to replace silently.
            let movedTo = tryMoveAside(observer: &observer, now: now)
            observer.record(.state(.unreadable(reason: error.operation, movedTo: movedTo)), at: now)
            return .nothing
        } catch {
            observer.record(.state(.readFailed(error)), at: now)
            return .nothing
        }
        guard let bytes else {
            observer.record(.state(.freshStart), at: now)
            return .nothing
        }
        do throws(StateFormatError) {
            let state = try PersistedState(decoding: bytes)
            observer.record(.state(.restored(state)), at: now)
            return .restored(state)
        } catch {
            guard let newer = error.newer else {
                let movedTo = tryMoveAside(observer: &observer, now: now)
                observer.record(.state(.unreadable(reason: error.message, movedTo: movedTo)), at: now)
                return .nothing
            }
            let movedTo = keepNewer ? nil : tryMoveAside(observer: &observer, now: now)
            observer.record(.state(.newerFormat(newer, movedTo: movedTo)), at: now)
            return movedTo == nil ? .kept : .nothing
        }
    }

    /// Where the stored state was moved; nil when that failed (logged).
    private mutating func tryMoveAside<Observer: LoopObserver>(observer: inout Observer, now: Instant) -> String? {
        do throws(HALError) {
            return try moveAside()
        } catch {
            observer.record(.state(.moveAsideFailed(error)), at: now)
            return nil
        }
    }

    /// The versions of the stored state when it needs a newer program; nil otherwise (nothing
    /// stored, readable, damaged, or not readable at all: the loop deals with those). For a
    /// check at start-up, before anything runs.
    public func storedNewerFormat() -> StateFormatVersions? {
        guard let bytes = try? read() else { return nil }  // nothing stored, or not readable
        do throws(StateFormatError) {
            _ = try PersistedState(decoding: bytes)
            return nil
        } catch {
            return error.newer
        }
    }
}

/// No persistence: nothing stored, writes go nowhere.
public struct NoStateStorage: StateStorage {
    public init() {}
    public func read() throws(HALError) -> [UInt8]? { nil }
    public mutating func write(_ bytes: [UInt8]) throws(HALError) {}
    public mutating func moveAside() throws(HALError) -> String { "" }
}

/// No wall clock: always the Unix epoch. Only for loops that neither persist nor send.
public struct NoWallClock: WallClock {
    public init() {}
    public func now() -> WallTime { WallTime(nanosecondsSinceEpoch: 0) }
}
