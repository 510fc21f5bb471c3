import CharacterLCD
import HAL
import HALMock
import ResendApp
import ResendConfig
import ResendCore
import ResendDevice
import ResendSimulator

/// What a display wrapper saw: every frame shown and every service call, with the loop's `now`.
final class DisplayRecord {
    var shows: [(time: Instant, frame: ScreenText)] = []
    var services: [Instant] = []
}

/// A `FrameDisplay` that records the controller's frames (the instant the loop handed them over)
/// and the service calls, and passes everything on to the real display.
struct RecordingDisplay<Inner: FrameDisplay>: FrameDisplay {
    var inner: Inner
    let record: DisplayRecord

    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        record.shows.append((now, frame))
        return inner.show(frame, now: now)
    }

    var nextService: Instant? { inner.nextService }

    mutating func service(now: Instant) -> [DisplayEvent] {
        record.services.append(now)
        return inner.service(now: now)
    }
}

/// Records the loop's events and, after each step, what the emulated screen shows; can forward
/// to an `EventLogger` and run a hook (e.g. a power cycle) after a step.
final class StepSampler: LoopObserver {
    let emulator: HD44780Emulator
    var logger: EventLogger?
    var afterStep: ((Instant) -> Void)?
    var events: [(time: Instant, event: LoopEvent)] = []
    var samples: [(time: Instant, screen: [String])] = []

    init(emulator: HD44780Emulator) { self.emulator = emulator }

    func record(_ event: LoopEvent, at now: Instant) {
        events.append((now, event))
        logger?.record(event, at: now)
    }

    func stepFinished(at now: Instant) {
        logger?.stepFinished(at: now)
        samples.append((now, emulator.screen))
        afterStep?(now)
    }

    var displayEvents: [(time: Instant, event: DisplayEvent)] {
        events.compactMap { item in
            if case .display(let event) = item.event { return (item.time, event) }
            return nil
        }
    }
}

/// The real driver, controller and loop on virtual time against an emulated LCD on a blocking
/// recording bus (writes take their wire time), like the headless simulator.
struct HealingRig {
    let clock = ManualClock()
    let bus: RecordingI2CBus
    let emulator: HD44780Emulator
    let led: RecordingLED
    let record = DisplayRecord()
    let sampler: StepSampler
    let settings: BehaviourSettings
    var display: LCDDisplay<PCF8574Backpack<RecordingI2CBus>, VirtualDelay>

    static let address = I2CAddress(0x27)!

    init(durationSeconds: Int = 60, refresh: TimeSpan? = nil) {
        var settings = BehaviourSettings()
        settings.durationSeconds = durationSeconds
        self.settings = settings
        bus = RecordingI2CBus(clock: clock, blocking: true)
        emulator = HD44780Emulator(columns: 16, rows: 2, clock: clock)
        bus.attach(emulator, at: Self.address)
        led = RecordingLED(clock: clock)
        sampler = StepSampler(emulator: emulator)
        display = LCDDisplay(
            lcd: HD44780(port: PCF8574Backpack(bus: bus, address: Self.address), delay: VirtualDelay(clock: clock), geometry: .lcd16x2),
            rom: .a00, refreshInterval: refresh)
    }

    /// Starts the display at 0 s (or, with `startOffline`, marks it offline as `run` does when
    /// nothing answered at its address), then runs the loop with clean presses at `presses` (held 200 ms)
    /// until `stopAt`.
    mutating func run(presses: [Instant], stopAt: Instant, startOffline: Bool = false) throws {
        if startOffline {
            display.startOffline(now: clock.now())
        } else {
            try display.start(now: clock.now())
        }
        var inputs = presses.flatMap { ButtonScript.inputs(ButtonScript.press(at: $0, holdFor: .milliseconds(200))) }
        inputs.append((stopAt, .stop))
        let environment = LoopEnvironment(
            source: VirtualEventSource(clock: clock, inputs: inputs), display: RecordingDisplay(inner: display, record: record),
            outputs: Outputs(led: led), commands: .none, clock: clock, wallClock: NoWallClock(), observer: sampler, store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: settings.controllerConfig, button: settings.makeDebouncer(), keypad: nil))
        try loop.run()
        display = loop.display.inner
    }

    /// The frame the controller last handed over at or before `time`.
    func frame(at time: Instant) -> ScreenText? {
        record.shows.last { $0.time <= time }?.frame
    }
}

/// A 16x2 frame from its two lines (padded).
func frame16(_ status: String, _ label: String) -> ScreenText {
    ScreenLayout(columns: 16, rows: 2).frame(status: status, label: label)
}
