// Instantiates the generic driver, controller, event loop and keypad types with concrete types, so that
// Embedded Swift compiles their bodies (it only specialises generics that are used). Compiled by
// scripts/embedded-check; never linked or run.
import CharacterLCD
import HAL
import ResendCore

struct NullBus: I2CBus {
    var supportsMultiByteWrite: Bool { true }
    var sent = 0
    mutating func write(_ bytes: [UInt8], to address: I2CAddress) throws(HALError) { sent += bytes.count }
    mutating func probe(_ address: I2CAddress) throws(HALError) -> Bool { true }
}

struct TickClock: MonotonicClock {
    func now() -> Instant { .origin }
}

struct NullDelay: Delay {
    mutating func delay(_ span: TimeSpan) {}
}

struct OneShotSource: EventSource {
    var done = false
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        if done { return [.stop] }
        done = true
        return [.button(ButtonEdge(pressed: true, time: .origin))]
    }
}

struct LCDFrames: FrameDisplay {
    var lcd: HD44780<PCF8574Backpack<NullBus>, NullDelay>
    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        var codes: [[UInt8]] = []
        for line in frame.lines {
            do throws(UnsupportedCharacter) { codes.append(try CharacterROM.a00.encode(line)) } catch { return [] }
        }
        let focus = frame.focus.map { (row: $0.row, column: $0.column) }
        do throws(HALError) { try lcd.render(codes, focus: focus) } catch { return [.offline(error)] }
        return []
    }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [DisplayEvent] { [] }
}

/// The loop's environment on a microcontroller: the parts below, no output line, the state in RAM.
func smokeEnvironment<Source: EventSource, Sender: CommandRunner, Verifier: CodeVerifier, Store: StateStorage>(
    source: Source, display: LCDFrames, sender: Sender, verifier: Verifier, store: Store?
) -> LoopEnvironment<Source, LCDFrames, NoLine, Sender, Verifier, TickClock, FixedWall, NoObserver, Store, NoRandomSource> {
    LoopEnvironment(
        source: source, display: display, outputs: .none, commands: Commands(send: sender, verify: verifier), clock: TickClock(),
        wallClock: FixedWall(), observer: NoObserver(), store: store)
}

/// The single button: a key debouncer whose button has its own debouncer, no code entry.
func buttonCoordinator(_ config: ControllerConfig) -> DeviceCoordinator {
    var keys = KeyDebouncer()
    keys.use(Debouncer(window: .milliseconds(20), mode: .stable, pressed: false), for: .button)
    return DeviceCoordinator(controller: ResendController(config: config), keys: keys)
}

public func embeddedSmoke() -> Bool {
    var lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: I2CAddress(constant: 0x27)), delay: NullDelay(), geometry: .lcd16x2)
    do throws(HALError) { try lcd.initialize() } catch { return false }
    var loop = EventLoop(
        environment: smokeEnvironment(
            source: OneShotSource(), display: LCDFrames(lcd: lcd), sender: NoCommandRunner(), verifier: NoCodeVerifier(), store: RAMStorage?.none),
        coordinator: buttonCoordinator(ControllerConfig(duration: .seconds(60))))
    do throws(HALError) { try loop.run() } catch { return false }
    return loop.environment.display.lcd.port.bus.sent > 0
}

struct FixedWall: WallClock {
    func now() -> WallTime { WallTime(millisecondsSinceEpoch: 1_718_000_000_000) }
}

struct ImmediateRunner: CommandRunner {
    mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        CommandOutcome(sequence: request.sequence, ending: .exited(code: 0), duration: .zero)
    }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [CommandOutcome] { [] }
}

struct RAMStorage: StateStorage {
    var bytes: [UInt8]?
    func read() throws(HALError) -> [UInt8]? { bytes }
    mutating func write(_ bytes: [UInt8]) throws(HALError) { self.bytes = bytes }
    mutating func moveAside() throws(HALError) -> String { bytes = nil; return "aside" }
}

/// The loop with a send command, persistence and the resend policy.
public func embeddedServicesSmoke() -> Bool {
    let lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: I2CAddress(constant: 0x27)), delay: NullDelay(), geometry: .lcd16x2)
    let policy = ResendPolicy(cooldowns: [.seconds(60), .seconds(120)], cap: ResendPolicy.Cap(maxSends: 3, window: .seconds(3_600)))
    var loop = EventLoop(
        environment: smokeEnvironment(
            source: OneShotSource(), display: LCDFrames(lcd: lcd), sender: ImmediateRunner(), verifier: NoCodeVerifier(),
            store: RAMStorage()),
        coordinator: buttonCoordinator(ControllerConfig(duration: .seconds(60), hasSendCommand: true, policy: policy)))
    do throws(HALError) { try loop.run() } catch { return false }
    return loop.environment.store?.bytes != nil
}

struct NullRows: MatrixRowLines {
    var count: Int { 4 }
    var driven: UInt32 = 0
    mutating func setActive(_ index: Int, _ active: Bool) throws(HALError) {
        if active { driven |= 1 << UInt32(index) } else { driven &= ~(1 << UInt32(index)) }
    }
}

struct NullColumns: MatrixColumnLines {
    var count: Int { 3 }
    mutating func read() throws(HALError) -> UInt32 { 0b010 }
}

/// The keypad: a matrix scan through the key debouncer into the coordinator (resend controller +
/// code entry), an evdev event, and the entry state's clamp.
public func embeddedKeypadSmoke() -> Bool {
    var scanner = MatrixScanner(rows: NullRows(), columns: NullColumns(), delay: NullDelay(), layout: .threeByFour)
    var entryConfig = EntryConfig()
    entryConfig.pulse = .seconds(2)
    var pad = DeviceCoordinator(
        controller: ResendController(config: ControllerConfig(duration: .seconds(60), layout: .twentyByFour, hasSendCommand: true)),
        entry: CodeEntry(config: entryConfig), bindings: KeyBindings(send: [.a]))
    var shown = 0
    var verified = 0
    func count(_ actions: [DeviceAction]) {
        for action in actions {
            switch action {
            case .show: shown += 1
            case .entry(.runVerify(var request)):
                verified += 1
                request.code.wipe()
            default: break
            }
        }
    }
    count(pad.start(now: .origin))
    do throws(HALError) {
        try scanner.start()
        for event in try scanner.scan(now: .origin) { count(pad.feed(event, now: .origin)) }
    } catch {
        return false
    }
    if let event = EvdevKeys.keyEvent(type: EvdevKeys.eventTypeKey, code: 0x20c, value: 1, at: .origin) {
        count(pad.feed(event, now: .origin))
    }
    count(pad.advance(to: Instant(nanoseconds: 1_000_000_000)))
    count(pad.verifyFinished(VerifyOutcome(sequence: 1, result: VerifyResult(.exited(code: 1))), now: Instant(nanoseconds: 2_000_000_000)))
    guard let entry = pad.entry else { return false }
    let stored = PersistedEntryState(entry.snapshot, monotonicNow: .origin, wallNow: FixedWall().now())
    let resumed = stored.resumed(monotonicNow: .origin, wallNow: FixedWall().now(), config: entryConfig)
    return shown > 0 && verified == 0 && resumed.failures == 0 && pad.mergedFrame != nil
}

struct ImmediateVerifier: CodeVerifier {
    mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        var code = request.code
        code.wipe()
        return CommandOutcome(sequence: request.sequence, ending: .exited(code: 1), duration: .zero)
    }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [CommandOutcome] { [] }
}

struct KeySource: EventSource {
    var step = 0
    mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        step += 1
        switch step {
        case 1: return [.key(KeyEvent(.a, .pressed, at: .origin))]
        case 2:
            return [
                .key(KeyEvent(.digit1, .pressed, at: .origin)),
                .commandFinished(.verify, CommandOutcome(sequence: 1, ending: .exited(code: 0), duration: .zero)),
            ]
        default: return [.stop]
        }
    }
}

/// The loop with a code entry, a send command, a verify command, an output line and the state (the
/// `entry` object included) in RAM.
public func embeddedKeypadLoopSmoke() -> Bool {
    let lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: I2CAddress(constant: 0x27)), delay: NullDelay(), geometry: .lcd16x2)
    var entryConfig = EntryConfig()
    entryConfig.pulse = .seconds(2)
    let pad = DeviceCoordinator(
        controller: ResendController(config: ControllerConfig(duration: .seconds(60), hasSendCommand: true)),
        entry: CodeEntry(config: entryConfig), bindings: KeyBindings(send: [.a]))
    var loop = EventLoop(
        environment: smokeEnvironment(
            source: KeySource(), display: LCDFrames(lcd: lcd), sender: ImmediateRunner(), verifier: ImmediateVerifier(), store: RAMStorage()),
        coordinator: pad)
    do throws(HALError) { try loop.run() } catch { return false }
    guard let bytes = loop.environment.store?.bytes else { return false }
    do throws(StateFormatError) {
        return try PersistedState(decoding: bytes).entry != nil
    } catch {
        return false
    }
}

/// The matrix keypad's watch (run's GPIO matrix backend): start, a column edge, the re-scan timer.
public func embeddedMatrixWatchSmoke() -> Bool {
    var watch = MatrixWatch(
        scanner: MatrixScanner(rows: NullRows(), columns: NullColumns(), delay: NullDelay(), layout: .threeByFour),
        clock: TickClock())
    do throws(HALError) {
        try watch.start()
        let edge = try watch.columnEdges(newest: Instant(nanoseconds: 5_000_000), now: Instant(nanoseconds: 5_000_000))
        let polled = try watch.timerFired(now: watch.nextScan ?? .origin)
        try watch.stop()
        return edge.count + polled.count >= 0 && watch.scans >= 1
    } catch {
        return false
    }
}

/// The OLED path: Unifont glyphs rendered and sent damage-only by the SSD130x driver.
func smokeOLED(hex: [UInt8]) -> Int {
    guard let font = try? Unifont(parsing: hex, wanted: [0x83B7, 0x41]) else { return -1 }
    var oled = SSD130x(bus: NullBus(), delay: NullDelay(), address: I2CAddress(constant: 0x3C), controller: .sh1106, maxWriteLength: 32)
    do throws(HALError) {
        try oled.render(UnifontText.render(["获A"], font: font))
        try oled.setFlipped(true)
        try oled.setContrast(0x40)
        try oled.setDisplayOn(false)
    } catch {
        return -1
    }
    return oled.bus.sent
}
