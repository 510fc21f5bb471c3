import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// Prints every change of the emulated screen and of the LED (and, with a keypad, of its output
/// line), one line each, with the virtual time since the start:
/// `12.000 screen |Verification    |Resend (48)     |`, `60.000 led on`, `7.720 output on`.
/// With `events` it also prints the loop's events as `run` logs them (`EventLogger`, plain):
/// `12.000 press ignored seconds_left=48`.
public final class HeadlessPrinter: LoopObserver {
    private let emulator: HD44780Emulator
    /// What the glass shows as text when it is not the HD44780's (the OLED's, read off its pixels).
    private let glass: (() -> [String])?
    private let led: RecordingLED
    private let start: Instant
    private let output: (String) -> Void
    private let logger: EventLogger?
    private var lastScreen: [String]?
    private var lastLED: Bool?
    /// The keypad's output line (door strike, relay), printed like the LED: `3.620 output on`.
    private let outputLine: RecordingLED?
    private var lastOutput: Bool?

    public init(
        emulator: HD44780Emulator, led: RecordingLED, start: Instant, events: Bool, outputLine: RecordingLED? = nil,
        logSendOutput: Bool = false, glass: (() -> [String])? = nil, output: @escaping (String) -> Void
    ) {
        self.emulator = emulator
        self.glass = glass
        self.led = led
        self.outputLine = outputLine
        self.start = start
        self.output = output
        logger = events ? EventLogger(format: .plain, origin: start, logSendOutput: logSendOutput, output: output) : nil
    }

    /// Called after every step until the device is stopped (`--picture` keeps the glass then, so
    /// the picture shows the last screen before the stopped one).
    public var untilStopped: (() -> Void)?
    private var stopped = false

    public func record(_ event: LoopEvent, at now: Instant) {
        if case .controller(.stopped) = event { stopped = true }
        logger?.record(event, at: now)
    }

    /// Prints `record` as `run` logs it, with `events` only.
    public func log(_ record: LogRecord, at now: Instant) {
        logger?.log(record, at: now)
    }

    public func stepFinished(at now: Instant) {
        if !stopped { untilStopped?() }
        logger?.stepFinished(at: now)
        let stamp = formatSeconds3(now - start)
        if let on = led.isOn, on != lastLED {
            lastLED = on
            output(stamp + " led " + (on ? "on" : "off"))
        }
        if let active = outputLine?.isOn, active != lastOutput {
            lastOutput = active
            output(stamp + " output " + (active ? "on" : "off"))
        }
        let screen = glass?() ?? emulator.screen
        if screen != lastScreen {
            lastScreen = screen
            output(stamp + " screen |" + screen.joined(separator: "|") + "|")
        }
    }
}

/// Runs a headless simulation on virtual time and returns when the script is done and nothing is
/// pending (or at its `end@` item). Output lines go to `output`. With `services` a press runs the
/// scripted send command and the countdown is persisted; the wall clock then starts at the real
/// wall time and moves with the virtual clock, so a later run can resume from the state file.
public func runHeadless(
    settings: BehaviourSettings, services: SimulationServices = SimulationServices(), script: [ScriptItem], events: Bool,
    output: @escaping (String) -> Void
) throws(ExitError) {
    try checkScriptNeedsNoKeypad(script, services: services)
    let coordinator = try services.coordinator(settings, command: "simulate")
    if services.realtime {
        try runHeadlessRealtime(settings: settings, services: services, coordinator: coordinator, script: script, events: events, output: output)
        return
    }
    let clock = ManualClock()
    var device = MockDevice(
        settings: settings, clock: clock, delay: VirtualDelay(clock: clock), bus: RecordingI2CBus(clock: clock, blocking: true),
        oled: services.oled)
    try device.startDisplay(now: clock.now())
    let line = RecordingLED(clock: clock)
    let start = clock.now()
    let printer = HeadlessPrinter(
        emulator: device.emulator, led: device.led, start: start, events: events, outputLine: services.keypad == nil ? nil : line,
        logSendOutput: services.logSendOutput, glass: device.oled == nil ? nil : { [device] in device.screenText }, output: output)
    let picture = GlassPicture()
    if let oled = device.oled, services.picturePath != nil {
        printer.untilStopped = { picture.bytes = oled.pgm(scale: 4) }
    }
    let wall = ManualWallClock(services.virtualWallStart ?? SystemWallClock().now(), following: clock)
    let environment = DeviceLoopEnvironment(
        source: VirtualEventSource(clock: clock, inputs: scriptInputs(script, start: start)), display: device.display,
        outputs: Outputs(led: device.led, strike: line), commands: .device(send: try services.makeRunner(), verify: try services.makeVerifier()),
        clock: clock, wallClock: wall, observer: printer, store: services.stateFile.map { StateFile(path: $0) }, random: .simulated)
    do throws(HALError) {
        try runLoop(environment, coordinator: coordinator)
    } catch {
        throw ExitError(.software, "simulate: the virtual event source failed: \(error.operation)")
    }
    for violation in device.emulator.violations {
        output("violation \(violation)")
    }
    if let oled = device.oled {
        for violation in oled.violations {
            output("violation \(violation)")
        }
        if let path = services.picturePath {
            if let problem = savePicture(picture.bytes ?? oled.pgm(scale: 4), to: path) {
                throw ExitError(.ioError, "simulate: --picture \(path): \(problem)")
            }
            output("picture \(path): the glass before the stop, 512x256 PGM")
        }
    }
}

/// The picture of the glass taken as the run stops (`--picture`), filled by the printer's stop hook.
final class GlassPicture {
    var bytes: [UInt8]?
}
