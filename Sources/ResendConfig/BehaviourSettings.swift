import CharacterLCD
import HAL
import ResendCore

/// What the button does, shared by `simulate` and `run`: one struct, named defaults.
public struct BehaviourSettings: Sendable {
    /// Cooldown after a press, in whole seconds.
    public var durationSeconds = BehaviourSettings.defaultDuration
    public var geometry = LCDGeometry.lcd16x2
    public var debounceMilliseconds = BehaviourSettings.defaultDebounceMilliseconds
    public var debounceMode = DebounceMode.stable
    public var texts = Texts()
    /// The LCD's character ROM (`lcd.rom` in the configuration file): what the texts may contain.
    public var rom = CharacterROM.a00
    /// True on an OLED (`display.kind`): the texts' characters and widths are checked against its
    /// font (`DeviceConfig.glyphProblems`), not against the ROM and the LCD's columns.
    public var textsCheckedByFont = false

    public static let defaultDuration = 60
    public static let durationRange = 1...86_400
    public static let defaultDebounceMilliseconds = 20
    /// A window of 0 would report every bounce: the debouncer needs at least 1 ms.
    public static let debounceRange = 1...1_000

    public init() {}

    /// The LCD sizes the button can use: at least two rows, one for the status and one for the
    /// label (the driver also runs 8x1 modules, e.g. for `check --test-pattern`).
    public static var geometries: [LCDGeometry] { LCDGeometry.supported.filter { $0.rows >= ScreenLayout.minimumRows } }

    /// The geometry named by `text` ("16x2"), or why it cannot serve: the words that follow the
    /// quoted text in a message ("is not a supported LCD size; use one of 16x2, 20x4, 40x2").
    /// `quote` formats each allowed name (the CLI leaves them bare, the config file quotes them).
    public static func geometry(parsing text: String, quote: (String) -> String = { $0 }) -> (geometry: LCDGeometry?, problem: String) {
        let allowed = geometries.map { quote($0.name) }.joined(separator: ", ")
        guard let geometry = LCDGeometry(parsing: text) else {
            return (nil, "is not a supported LCD size; use one of \(allowed)")
        }
        guard geometries.contains(geometry) else {
            return (nil, "has \(geometry.rows) row; the button needs \(ScreenLayout.minimumRows) (status and label): use one of \(allowed)")
        }
        return (geometry, "")
    }

    public var controllerConfig: ControllerConfig {
        ControllerConfig(
            duration: .seconds(Int64(durationSeconds)),
            texts: texts,
            layout: ScreenLayout(columns: geometry.columns, rows: geometry.rows))
    }

    public func makeDebouncer() -> Debouncer {
        Debouncer(window: .milliseconds(Int64(debounceMilliseconds)), mode: debounceMode)
    }
}
