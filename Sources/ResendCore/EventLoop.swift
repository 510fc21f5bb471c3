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
    /// Edges the debouncer suppressed (bounces) since the last such report; reported right after
    /// an accepted press, when there were any.
    case bouncesSuppressed(count: Int)
    /// A read of the button line found it elsewhere than its edges said: edges were lost, and the
    /// debouncer took the read level instead.
    case edgesLost(ButtonLevel)
    /// Reading the button line's level failed; the edges stay the only source.
    case buttonReadFailed(HALError)
    /// Reading or writing the persisted state.
    case state(StateEvent)
    /// The code-entry flow (`KeypadLoop`): lengths and outcomes, never a digit.
    case entry(EntryEvent)
    /// The verify command ended like this, after `duration` (its output is not kept: it might
    /// echo the code).
    case verifyEnded(ending: SendOutcome.Ending, duration: TimeSpan)
    /// The output line (door strike, relay) changed to the given state.
    case output(Bool)
    /// The output line could not be set; the loop goes on (and tries again at the next change).
    case outputFailed(HALError)
    /// The keypad's input device went away or came back (`LoopInput.inputDevice`).
    case keypad(InputDeviceEvent)
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
}

/// The one imperative part of the product: wait until the earliest of (next input, debouncer
/// deadline, controller deadline, display service time, send runner service time), feed the pure
/// state machines, carry out their actions. Tests and the headless simulator drive it on a virtual
/// clock, the interactive simulator and the device on the real monotonic clock; the code is the same.
///
/// The send command runs through `runner` (its outcomes come back as `LoopInput.sendFinished`, from
/// `runner.service(now:)` or at once from `runner.start`). The controller's state is persisted to
/// `store` on the wall clock `wallClock`: read once when `run()` starts (a countdown persisted by
/// an earlier process resumes; an unreadable state is moved aside and logged), written on every
/// `.persist` action. Only the monotonic clock times anything while running; the wall clock is
/// read only to convert at those two moments.
public struct EventLoop<
    Source: EventSource, Display: FrameDisplay, LED: OutputLine, Clock: MonotonicClock, Observer: LoopObserver,
    Runner: CommandRunner, Store: StateStorage, Wall: WallClock
> {
    public var source: Source
    public var display: Display
    public var led: LED
    public let clock: Clock
    public var observer: Observer
    public var controller: ResendController
    public var debouncer: Debouncer
    public var runner: Runner
    public var store: Store
    public let wallClock: Wall
    /// False when there is no store: nothing is read or written.
    public let persistence: Bool

    /// The latest instant fed to the controller; its inputs never go backwards in time.
    private var controllerTime: Instant
    private var ledState: Bool?
    /// `debouncer.suppressedEdges` at the last `.bouncesSuppressed` report.
    private var reportedBounces = 0

    /// A loop with a send command runner and a state store on `wallClock`.
    public init(
        source: Source, display: Display, led: LED, clock: Clock, observer: Observer,
        controller: ResendController, debouncer: Debouncer, runner: Runner, store: Store, wallClock: Wall
    ) {
        self.init(
            source: source, display: display, led: led, clock: clock, observer: observer, controller: controller,
            debouncer: debouncer, runner: runner, store: store, wallClock: wallClock, persistence: true)
    }

    private init(
        source: Source, display: Display, led: LED, clock: Clock, observer: Observer, controller: ResendController,
        debouncer: Debouncer, runner: Runner, store: Store, wallClock: Wall, persistence: Bool
    ) {
        self.source = source
        self.display = display
        self.led = led
        self.clock = clock
        self.observer = observer
        self.controller = controller
        self.debouncer = debouncer
        self.runner = runner
        self.store = store
        self.wallClock = wallClock
        self.persistence = persistence
        self.controllerTime = .origin
    }

    /// The earliest instant anything inside the loop needs to run again; nil when idle.
    public var nextDeadline: Instant? {
        earliest(earliest(earliest(debouncer.nextDeadline, controller.nextDeadline), display.nextService), runner.nextService)
    }

    /// Runs until a `.stop` input arrives; then shows the stopped screen and returns.
    /// Throws only when waiting itself fails (the event source broke).
    public mutating func run() throws(HALError) {
        let start = clock.now()
        controllerTime = start
        var restored: ControllerSnapshot?
        if persistence, let state = store.loadState(observer: &observer, now: start) {
            restored = state.resumed(monotonicNow: start, wallNow: wallClock.now(), config: controller.config)
        }
        perform(controller.start(now: start, restoring: restored), now: start)
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
            case .key(let event):
                // This loop has one button and no keypad (`KeypadLoop` has one): other keys are dropped.
                guard event.key == .button else { continue }
                let edge = ButtonEdge(pressed: event.isPress, time: event.at)
                observer.record(.edge(edge), at: now)
                if let change = debouncer.feed(edge) { debounced(change, now: now) }
            case .verifyFinished:
                continue  // no verify command without a keypad
            case .inputDevice(let event):
                observer.record(.keypad(event), at: now)
            case .edgesMayBeLost:
                reconcileButtonLevel(now: now)
            case .sendFinished(let outcome):
                controllerTime = max(controllerTime, now)
                perform(controller.sendFinished(outcome, now: controllerTime), now: now)
            case .stop:
                controllerTime = max(controllerTime, now)
                perform(controller.stop(now: controllerTime), now: now)
                observer.stepFinished(at: now)
                return true
            }
        }
        if let due = debouncer.nextDeadline, due <= now {
            // A window closes: make sure no edge was lost in it before trusting the last one.
            reconcileButtonLevel(now: now)
        }
        if let change = debouncer.advance(to: now) { debounced(change, now: now) }
        controllerTime = max(controllerTime, now)
        if let due = runner.nextService, due <= now {
            for outcome in runner.service(now: now) {
                perform(controller.sendFinished(outcome, now: controllerTime), now: now)
            }
        }
        perform(controller.advance(to: controllerTime), now: now)
        if let due = display.nextService, due <= now {
            for event in display.service(now: now) { observer.record(.display(event), at: now) }
        }
        observer.stepFinished(at: now)
        return false
    }

    /// Reads the button line and lets the debouncer reconcile its edges with it.
    private mutating func reconcileButtonLevel(now: Instant) {
        let level: ButtonLevel?
        do throws(HALError) {
            level = try source.readButtonLevel()
        } catch {
            observer.record(.buttonReadFailed(error), at: now)
            return
        }
        guard let level, level.pressed != debouncer.rawPressed else { return }
        observer.record(.edgesLost(level), at: now)
        if let change = debouncer.reconcile(level) { debounced(change, now: now) }
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
        var immediateOutcomes: [SendOutcome] = []
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
                if case .pressAccepted = event, debouncer.suppressedEdges > reportedBounces {
                    observer.record(.bouncesSuppressed(count: debouncer.suppressedEdges - reportedBounces), at: now)
                    reportedBounces = debouncer.suppressedEdges
                }
            case .persist(let snapshot):
                guard persistence else { continue }
                // Both clocks read together: the pair anchors the conversion to wall time.
                let state = PersistedState(snapshot, monotonicNow: clock.now(), wallNow: wallClock.now())
                do throws(HALError) {
                    try store.write(state.encoded())
                } catch {
                    observer.record(.state(.writeFailed(error)), at: now)
                }
            case .runSendCommand(let attempt, let sequence, let cooldownSeconds):
                // The press was at `controllerTime`; the wall clock is read now, so step back.
                let sincePress = max(TimeSpan.zero, clock.now() - controllerTime)
                let request = SendRequest(
                    sequence: sequence, attempt: attempt, cooldownSeconds: cooldownSeconds,
                    pressTime: wallClock.now() - sincePress)
                if let outcome = runner.start(request, now: now) { immediateOutcomes.append(outcome) }
            }
        }
        for outcome in immediateOutcomes {
            perform(controller.sendFinished(outcome, now: controllerTime), now: now)
        }
    }
}

extension EventLoop where Runner == NoCommandRunner, Store == NoStateStorage, Wall == NoWallClock {
    /// A loop without a send command and without persistence.
    public init(
        source: Source, display: Display, led: LED, clock: Clock, observer: Observer,
        controller: ResendController, debouncer: Debouncer
    ) {
        self.init(
            source: source, display: display, led: led, clock: clock, observer: observer, controller: controller,
            debouncer: debouncer, runner: NoCommandRunner(), store: NoStateStorage(), wallClock: NoWallClock(),
            persistence: false)
    }
}

extension EventLoop where Store == NoStateStorage {
    /// A loop with a send command runner but without persistence (`wallClock` stamps the press
    /// time given to the command).
    public init(
        source: Source, display: Display, led: LED, clock: Clock, observer: Observer,
        controller: ResendController, debouncer: Debouncer, runner: Runner, wallClock: Wall
    ) {
        self.init(
            source: source, display: display, led: led, clock: clock, observer: observer, controller: controller,
            debouncer: debouncer, runner: runner, store: NoStateStorage(), wallClock: wallClock, persistence: false)
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

/// No send command: every start fails at once (a controller configured with a send command needs
/// a real runner).
public struct NoCommandRunner: CommandRunner {
    public init() {}
    public mutating func start(_ request: SendRequest, now: Instant) -> SendOutcome? {
        SendOutcome(sequence: request.sequence, ending: .couldNotStart(reason: "no send command is configured", errno: 0), duration: .zero)
    }
    public var nextService: Instant? { nil }
    public mutating func service(now: Instant) -> [SendOutcome] { [] }
}

extension StateStorage {
    /// Reads the stored state at a loop's start and logs what happened to `observer`: restored,
    /// a fresh start, a read failure, or an unreadable file moved aside (or the move's failure).
    /// Nil for a fresh start. Shared by `EventLoop` and `KeypadLoop`.
    mutating func loadState<Observer: LoopObserver>(observer: inout Observer, now: Instant) -> PersistedState? {
        let bytes: [UInt8]?
        do throws(HALError) {
            bytes = try read()
        } catch where isUnreadableContent(error) {
            // Too large to be ours (the read cap): moved aside like any unreadable state, not
            // left for the next write to replace silently.
            moveUnreadableAside(reason: error.operation, observer: &observer, now: now)
            return nil
        } catch {
            observer.record(.state(.readFailed(error)), at: now)
            return nil
        }
        guard let bytes else {
            observer.record(.state(.freshStart), at: now)
            return nil
        }
        do throws(StateFormatError) {
            let state = try PersistedState(decoding: bytes)
            observer.record(.state(.restored(state)), at: now)
            return state
        } catch {
            moveUnreadableAside(reason: error.message, observer: &observer, now: now)
            return nil
        }
    }

    private mutating func moveUnreadableAside<Observer: LoopObserver>(reason: String, observer: inout Observer, now: Instant) {
        var movedTo: String?
        do throws(HALError) {
            movedTo = try moveAside()
        } catch let moveError {
            observer.record(.state(.moveAsideFailed(moveError)), at: now)
        }
        observer.record(.state(.unreadable(reason: reason, movedTo: movedTo)), at: now)
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
