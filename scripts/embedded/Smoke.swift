// Instantiates the generic driver, controller and event loop with concrete types, so that
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
        return [.edge(ButtonEdge(pressed: true, time: .origin))]
    }
}

struct LCDFrames: FrameDisplay {
    var lcd: HD44780<PCF8574Backpack<NullBus>, NullDelay>
    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        var codes: [[UInt8]] = []
        for line in frame.lines {
            do throws(UnsupportedCharacter) { codes.append(try CharacterROM.a00.encode(line)) } catch { return [] }
        }
        do throws(HALError) { try lcd.render(codes) } catch { return [.offline(error)] }
        return []
    }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [DisplayEvent] { [] }
}

public func embeddedSmoke() -> Bool {
    var lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: I2CAddress(0x27)!), delay: NullDelay(), geometry: .lcd16x2)
    do throws(HALError) { try lcd.initialize() } catch { return false }
    var loop = EventLoop(
        source: OneShotSource(), display: LCDFrames(lcd: lcd), led: NoLED(), clock: TickClock(), observer: NoObserver(),
        controller: ResendController(config: ControllerConfig(duration: .seconds(60))), debouncer: Debouncer())
    do throws(HALError) { try loop.run() } catch { return false }
    return loop.display.lcd.port.bus.sent > 0
}

struct FixedWall: WallClock {
    func now() -> WallTime { WallTime(millisecondsSinceEpoch: 1_718_000_000_000) }
}

struct ImmediateRunner: CommandRunner {
    mutating func start(_ request: SendRequest, now: Instant) -> SendOutcome? {
        SendOutcome(sequence: request.sequence, ending: .exited(code: 0), duration: .zero)
    }
    var nextService: Instant? { nil }
    mutating func service(now: Instant) -> [SendOutcome] { [] }
}

struct RAMStorage: StateStorage {
    var bytes: [UInt8]?
    func read() throws(HALError) -> [UInt8]? { bytes }
    mutating func write(_ bytes: [UInt8]) throws(HALError) { self.bytes = bytes }
    mutating func moveAside() throws(HALError) -> String { bytes = nil; return "aside" }
}

/// The loop with a send command, persistence and the resend policy.
public func embeddedServicesSmoke() -> Bool {
    let lcd = HD44780(port: PCF8574Backpack(bus: NullBus(), address: I2CAddress(0x27)!), delay: NullDelay(), geometry: .lcd16x2)
    let policy = ResendPolicy(cooldowns: [.seconds(60), .seconds(120)], cap: ResendPolicy.Cap(maxSends: 3, window: .seconds(3_600)))
    var loop = EventLoop(
        source: OneShotSource(), display: LCDFrames(lcd: lcd), led: NoLED(), clock: TickClock(), observer: NoObserver(),
        controller: ResendController(config: ControllerConfig(duration: .seconds(60), hasSendCommand: true, policy: policy)),
        debouncer: Debouncer(), runner: ImmediateRunner(), store: RAMStorage(), wallClock: FixedWall())
    do throws(HALError) { try loop.run() } catch { return false }
    return loop.store.bytes != nil
}
