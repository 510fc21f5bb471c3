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
    public var display: LCDDisplay<PCF8574Backpack<RecordingI2CBus>, Wait>

    public static var address: I2CAddress { I2CAddress(constant: 0x27) }  // PCF8574T default

    /// `bus` defaults to a bus that does not move `clock`; on virtual time pass a blocking one
    /// (`RecordingI2CBus(clock:blocking: true)`), which, like a real synchronous write(), returns
    /// only once the bytes are on the wire, so the driver's datasheet waits start after them.
    /// `rom` defaults to the settings' (`lcd.rom` of the configuration file, else A00).
    public init(settings: BehaviourSettings, clock: Clock, delay: Wait, bus: RecordingI2CBus? = nil, rom: CharacterROM? = nil) {
        self.settings = settings
        self.bus = bus ?? RecordingI2CBus(clock: clock)
        emulator = HD44780Emulator(columns: settings.geometry.columns, rows: settings.geometry.rows, clock: clock)
        self.bus.attach(emulator, at: Self.address)
        led = RecordingLED(clock: clock)
        let backpack = PCF8574Backpack(bus: self.bus, address: Self.address)
        display = LCDDisplay(lcd: HD44780(port: backpack, delay: delay, geometry: settings.geometry), rom: rom ?? settings.rom)
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
