import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice
import Testing

/// The loop `run` drives, with the OLED display port on an emulated SSD1306 or SH1106 and the
/// Chinese texts of board/examples/chinese.json5 (glyphs from the Unifont fixture), on virtual time.
private final class GlassLog {
    var samples: [(time: Instant, rows: [String])] = []
    func glass(at time: Instant) -> [String]? { samples.last { $0.time <= time }?.rows }
}

/// Shows through the OLED port, then samples the emulated glass (what a person sees then).
private struct SampledOLED: FrameDisplay {
    var inner: OLEDDisplay<RecordingI2CBus, VirtualDelay>
    let emulator: OLEDEmulator
    let log: GlassLog
    let clock: ManualClock

    mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        let events = inner.show(frame, now: now)
        log.samples.append((clock.now(), emulator.rows))
        return events
    }
    var nextService: Instant? { inner.nextService }
    mutating func service(now: Instant) -> [DisplayEvent] { inner.service(now: now) }
}

@Suite("OLED on the event loop: the countdown in Chinese")
struct OLEDLoopTests {
    @Test("a 60 s countdown in Chinese: each label on the glass at its second, pixels equal to the font's glyphs", arguments: OLEDController.all)
    func countdown(controller: OLEDController) throws {
        let clock = ManualClock()
        let bus = RecordingI2CBus(clock: clock, blocking: true)
        let emulator = OLEDEmulator(chip: controller == .ssd1306 ? .ssd1306 : .sh1106)
        let address = I2CAddress(0x3C)!
        bus.attach(emulator, at: address)
        let font = try Unifont(parsing: fileBytes(unifontFixturePath)!)
        let reference = ReferenceFont(path: unifontFixturePath)
        var display = OLEDDisplay(
            oled: SSD130x(bus: bus, delay: VirtualDelay(clock: clock), address: address, controller: controller), font: font)
        try display.start(now: clock.now())

        var settings = BehaviourSettings()
        settings.texts.title = "短信验证"
        settings.texts.sendLabel = "获取验证码"
        settings.texts.countdownLabel = "重新获取({s})"
        settings.texts.resendLabel = "重新获取"
        let log = GlassLog()
        let press = Instant.origin + .seconds(1)
        var inputs = ButtonScript.inputs(ButtonScript.press(at: press, holdFor: .milliseconds(200)))
        inputs.append((press + .seconds(62), .stop))
        let environment = LoopEnvironment(
            source: VirtualEventSource(clock: clock, inputs: inputs),
            display: SampledOLED(inner: display, emulator: emulator, log: log, clock: clock),
            outputs: Outputs(led: RecordingLED(clock: clock)), commands: .none, clock: clock, wallClock: NoWallClock(),
            observer: NoObserver(), store: NoStateStorage?.none)
        var loop = EventLoop(
            environment: environment,
            coordinator: deviceCoordinator(controller: settings.controllerConfig, button: settings.makeDebouncer(), keypad: nil))
        try loop.run()

        #expect(log.glass(at: press - .milliseconds(1)) == reference.glass(["短信验证", "获取验证码"]))
        // The press is accepted after the 20 ms debounce window.
        let accepted = press + .milliseconds(20)
        for elapsed in 0..<60 {
            let number = 60 - elapsed < 10 ? "0\(60 - elapsed)" : "\(60 - elapsed)"
            let due = accepted + .seconds(Int64(elapsed))
            // On the glass once its bytes are on the wire (100 kHz, a blocking bus): the press
            // repaints the whole label (about 17 ms), a tick one or two digits (under 5 ms).
            let onWire: TimeSpan = elapsed == 0 ? .milliseconds(20) : .milliseconds(5)
            #expect(log.glass(at: due + onWire) == reference.glass(["短信验证", "重新获取(\(number))"]), "at \(elapsed) s")
            if elapsed > 0 {
                let before = 60 - elapsed + 1
                #expect(
                    log.glass(at: due - .milliseconds(1)) == reference.glass(["短信验证", "重新获取(\(before < 10 ? "0" : "")\(before))"]),
                    "just before \(elapsed) s")
            }
        }
        #expect(log.glass(at: accepted + .seconds(60) + .milliseconds(20)) == reference.glass(["短信验证", "重新获取"]))
        #expect(emulator.violations.isEmpty, "\(emulator.violations)")
    }
}
