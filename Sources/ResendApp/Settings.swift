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

    /// The flags every subcommand that drives the button accepts.
    public static let optionSpecs: [OptionSpec] = [
        OptionSpec("duration", value: "SECONDS", help: "cooldown after a press, whole seconds \(durationRange.lowerBound)-\(durationRange.upperBound) (default \(defaultDuration))"),
        OptionSpec("geometry", value: "COLSxROWS", help: "LCD size: \(geometries.map { $0.name }.joined(separator: ", ")) (default 16x2)"),
        OptionSpec("debounce", value: "MS", help: "debounce window in milliseconds \(debounceRange.lowerBound)-\(debounceRange.upperBound) (default \(defaultDebounceMilliseconds))"),
        OptionSpec("debounce-mode", value: "MODE", help: "stable (a change counts once the line held still for the window; default) or prompt (first edge counts, then the line is ignored for the window)"),
        OptionSpec("title", value: "TEXT", help: "status line when ready (default \"\(Texts().title)\")"),
        OptionSpec("send-label", value: "TEXT", help: "label before the first press (default \"\(Texts().sendLabel)\")"),
        OptionSpec("countdown-label", value: "TEXT", help: "label during the cooldown, {s} is the seconds left (default \"\(Texts().countdownLabel)\")"),
        OptionSpec("resend-label", value: "TEXT", help: "label once the cooldown is over (default \"\(Texts().resendLabel)\")"),
    ]

    /// Applies the flags in `arguments` over these settings and checks the result as a whole.
    public mutating func apply(_ arguments: ParsedArguments, command: String) throws(ExitError) {
        if let text = arguments.value("duration") {
            durationSeconds = try parseInteger(text, option: "duration", range: Self.durationRange, unit: "whole seconds", command: command)
        }
        if let text = arguments.value("geometry") {
            let parsed = Self.geometry(parsing: text)
            guard let geometry = parsed.geometry else {
                throw ExitError(.usage, "\(command): --geometry: \(shown(text)) \(parsed.problem)")
            }
            self.geometry = geometry
        }
        if let text = arguments.value("debounce") {
            debounceMilliseconds = try parseInteger(text, option: "debounce", range: Self.debounceRange, unit: "milliseconds", command: command)
        }
        if let text = arguments.value("debounce-mode") {
            switch text {
            case "stable": debounceMode = .stable
            case "prompt": debounceMode = .prompt
            default: throw ExitError(.usage, "\(command): --debounce-mode: \(shown(text)) is not a mode; use stable or prompt")
            }
        }
        if let text = arguments.value("title") { texts.title = text }
        if let text = arguments.value("send-label") { texts.sendLabel = text }
        if let text = arguments.value("countdown-label") { texts.countdownLabel = text }
        if let text = arguments.value("resend-label") { texts.resendLabel = text }
        // Name the flag the user typed rather than the field: "--countdown-label "..." is 17 ...".
        let flags = ["title": "--title", "sendLabel": "--send-label", "countdownLabel": "--countdown-label", "resendLabel": "--resend-label"]
        // The characters first, with the configuration file's check (`textROMProblem`): the
        // driver shows one ROM glyph per Unicode scalar, so "e\u{301}" is refused here, not trapped on.
        for (field, text) in texts.fields {
            if let problem = textROMProblem(text, rom: rom, romSetting: "lcd.rom in the configuration file") {
                throw ExitError(.usage, "\(command): \(flags[field] ?? field) \(problem)")
            }
        }
        if let problem = texts.problems(columns: geometry.columns, maxSeconds: durationSeconds).first {
            var message = problem.message
            if let flag = flags[problem.field], message.hasPrefix(problem.field) {
                message = flag + message.dropFirst(problem.field.count)
            }
            throw ExitError(.usage, "\(command): \(message)")
        }
    }
}

/// Parses a decimal integer within `range`, or throws a usage error naming the option and the range.
public func parseInteger(_ text: String, option: String, range: ClosedRange<Int>, unit: String, command: String) throws(ExitError) -> Int {
    guard let value = Int(text), range.contains(value) else {
        throw ExitError(.usage, "\(command): --\(option): expected \(unit) from \(range.lowerBound) to \(range.upperBound), got \(shown(text))")
    }
    return value
}
