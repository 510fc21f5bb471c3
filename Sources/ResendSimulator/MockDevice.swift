import CharacterLCD
import HAL
import HALLinux
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// The mock device: the real driver and controller, an emulated PCF8574 + HD44780 on a recording
/// bus, a recording LED. Shared by the headless and the interactive simulator and by tests.
public struct MockDevice<Clock: MonotonicClock, Wait: Delay> {
    public let settings: BehaviourSettings
    public let bus: RecordingI2CBus
    public let emulator: HD44780Emulator
    public let led: RecordingLED
    public var display: DeviceDisplay<RecordingI2CBus, Wait>
    /// The emulated OLED at 0x3C when the simulator shows one (`SimulatedOLED`) instead of the LCD.
    public let oled: OLEDEmulator?
    /// The glyphs the OLED shows, with it.
    public let font: Unifont?

    public static var address: I2CAddress { I2CAddress(constant: 0x27) }  // PCF8574T default

    /// `bus` defaults to a bus that does not move `clock`; on virtual time pass a blocking one
    /// (`RecordingI2CBus(clock:blocking: true)`), which, like a real synchronous write(), returns
    /// only once the bytes are on the wire, so the driver's datasheet waits start after them.
    /// `rom` defaults to the settings' (`lcd.rom` of the configuration file, else A00).
    /// With `oled` an emulated SSD1306/SH1106 at 0x3C takes the LCD's place (the HD44780
    /// emulator stays, detached and blank).
    public init(
        settings: BehaviourSettings, clock: Clock, delay: Wait, bus: RecordingI2CBus? = nil, rom: CharacterROM? = nil,
        oled: SimulatedOLED? = nil
    ) {
        self.settings = settings
        self.bus = bus ?? RecordingI2CBus(clock: clock)
        emulator = HD44780Emulator(columns: settings.geometry.columns, rows: settings.geometry.rows, clock: clock)
        led = RecordingLED(clock: clock)
        if let oled {
            let emulated = OLEDEmulator(chip: oled.controller == .ssd1306 ? .ssd1306 : .sh1106)
            self.bus.attach(emulated, at: Self.oledAddress)
            self.oled = emulated
            font = oled.font
            display = .oled(
                OLEDDisplay(
                    oled: SSD130x(
                        bus: self.bus, delay: delay, address: Self.oledAddress, controller: oled.controller, contrast: oled.contrast,
                        flipped: oled.flip), font: oled.font))
        } else {
            self.bus.attach(emulator, at: Self.address)
            self.oled = nil
            font = nil
            let backpack = PCF8574Backpack(bus: self.bus, address: Self.address)
            display = .lcd(LCDDisplay(lcd: HD44780(port: backpack, delay: delay, geometry: settings.geometry), rom: rom ?? settings.rom))
        }
    }

    /// The OLED's usual address (SA0 low).
    public static var oledAddress: I2CAddress { I2CAddress(constant: 0x3C) }

    /// What the glass shows as text: the LCD's rows, or what a person reads on the OLED.
    public var screenText: [String] {
        if let oled, let font { return readGlass(oled, font: font) }
        return emulator.screen
    }

    /// Initialises the emulated LCD; the emulator always answers, so a failure is our bug in the
    /// simulator's wiring, reported as exit 70.
    public mutating func startDisplay(now: Instant) throws(ExitError) {
        do throws(HALError) {
            try display.start(now: now)
        } catch {
            throw ExitError(.software, "simulate: the emulated LCD did not initialise: \(error.operation)")
        }
    }
}
