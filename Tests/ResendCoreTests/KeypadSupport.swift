import HAL
import ResendCore

/// Seconds and milliseconds after the keypad tests' start instant.
func kt(_ seconds: Double) -> Instant {
    Instant(nanoseconds: 5_000_000_000 + Int64((seconds * 1_000_000_000).rounded()))
}

/// The device with a keypad as a user meets it: the coordinator's actions carried out as the loop
/// would, on virtual time. Keys go in raw (through the debouncer, 20 ms).
struct KeypadRig {
    var pad: DeviceCoordinator
    var now: Instant = kt(0)
    var screen: [String] = []
    var led: Bool?
    /// The output line (door strike); nil before it is first set.
    var output: Bool?
    var outputHistory: [(time: Instant, on: Bool)] = []
    var verifies: [VerifyRequest] = []
    var sendSequences: [Int] = []
    var entryPersisted: [EntrySnapshot] = []
    /// When each of `entryPersisted` was asked for.
    var entryPersistTimes: [Instant] = []
    var controllerPersisted: [ControllerSnapshot] = []
    var entryLog: [EntryEvent] = []
    var controllerLog: [ControllerEvent] = []
    var shows = 0
    /// Every frame shown, with its focus, and when.
    var frames: [(time: Instant, frame: ScreenText)] = []
    /// Whether the state can be written: after a batch with `persist` actions the rig reports
    /// this to the coordinator (`stateWritten`), as the loop does.
    var stateWritable = true
    /// Every action of the entry flow in order (verify starts and persists, for order checks).
    var entryActions: [EntryAction] = []

    init(
        layout: ScreenLayout = .sixteenByTwo, entry: EntryConfig = KeypadRig.defaultEntry, hasSendCommand: Bool = true,
        duration: Int64 = 60, send: [Key] = [.button]
    ) {
        pad = DeviceCoordinator(
            controller: ResendController(config: ControllerConfig(duration: .seconds(duration), layout: layout, hasSendCommand: hasSendCommand)),
            entry: CodeEntry(config: entry), bindings: KeyBindings(send: send))
    }

    /// The defaults, plus a 2 s output pulse.
    static var defaultEntry: EntryConfig {
        var config = EntryConfig()
        config.pulse = .seconds(2)
        return config
    }

    /// Every line without its padding.
    var lines: [String] { screen.map(trimmedLine) }
    var line1: String { lines[0] }
    var line2: String { lines[1] }

    mutating func start(restoring controller: ControllerSnapshot? = nil, entry: EntrySnapshot? = nil) {
        apply(pad.start(now: now, restoring: controller, entry: entry))
    }

    /// Runs every deadline, each at its instant, up to `end`; then the time is `end`.
    mutating func run(until end: Instant) {
        precondition(end >= now, "KeypadRig.run: time goes forward only")
        while let due = pad.nextDeadline, due <= end {
            now = max(now, due)
            apply(pad.advance(to: now))
        }
        now = end
    }

    /// A raw key edge at `time`.
    mutating func edge(_ key: Key, _ edge: KeyEdge, at time: Instant) {
        run(until: time)
        apply(pad.feed(KeyEvent(key, edge, at: time), now: time))
    }

    /// A clean press of `key` at `time`, held `hold`; the press counts at `time` + 20 ms.
    mutating func tap(_ key: Key, at time: Instant, hold: TimeSpan = .milliseconds(100)) {
        edge(key, .pressed, at: time)
        edge(key, .released, at: time + hold)
    }

    /// Types `keys` ("12*3#": digits, `*`, `#`, `A`-`D`) from `time`, one key every 300 ms.
    mutating func type(_ keys: String, at time: Instant) {
        var at = time
        for byte in keys.utf8 {
            tap(Key(symbol: byte)!, at: at)
            at = at + .milliseconds(300)
        }
    }

    /// The button at `time`, then the send command succeeds at `time` + 1 s.
    mutating func sendCode(at time: Instant) {
        tap(.button, at: time)
        finishSend(.exited(code: 0), at: time + .seconds(1))
    }

    mutating func finishSend(_ ending: CommandOutcome.Ending, at time: Instant) {
        run(until: time)
        let sequence = sendSequences.last!
        apply(pad.sendFinished(CommandOutcome(sequence: sequence, ending: ending, duration: .seconds(1)), now: time))
    }

    /// The verify command of the last submission answers at `time`.
    mutating func answer(_ result: VerifyResult, at time: Instant) {
        run(until: time)
        apply(pad.verifyFinished(VerifyOutcome(sequence: verifies.last!.sequence, result: result), now: time))
    }

    mutating func stop(at time: Instant) {
        run(until: time)
        apply(pad.stop(now: time))
    }

    mutating func apply(_ actions: [DeviceAction]) {
        var persisted = false
        for action in actions {
            if case .entry(let action) = action { entryActions.append(action) }
            if case .entry(.persist) = action { persisted = true }
            if case .controller(.persist) = action { persisted = true }
            switch action {
            case .show(let frame):
                screen = frame.lines
                shows += 1
                frames.append((now, frame))
            case .buttonChanged:
                break
            case .controller(let action):
                switch action {
                case .show: preconditionFailure("the coordinator passed a controller frame through")
                case .setLED(let on): led = on
                case .persist(let snapshot): controllerPersisted.append(snapshot)
                case .runSendCommand(_, let sequence, _): sendSequences.append(sequence)
                case .log(let event): controllerLog.append(event)
                }
            case .entry(let action):
                switch action {
                case .runVerify(let request): verifies.append(request)
                case .setOutput(let on):
                    output = on
                    outputHistory.append((now, on))
                case .persist(let snapshot):
                    entryPersisted.append(snapshot)
                    entryPersistTimes.append(now)
                case .log(let event): entryLog.append(event)
                }
            }
        }
        if persisted { apply(pad.stateWritten(stateWritable, now: now)) }
    }
}
