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

    public static let defaultDuration = 60
    public static let durationRange = 1...86_400
    public static let defaultDebounceMilliseconds = 20
    public static let debounceRange = 0...1_000

    public init() {}

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
        OptionSpec("geometry", value: "COLSxROWS", help: "LCD size: \(LCDGeometry.supported.map(\.name).joined(separator: ", ")) (default 16x2)"),
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
            guard let geometry = LCDGeometry(parsing: text) else {
                throw ExitError(.usage, "\(command): --geometry: '\(text)' is not a supported LCD size; use one of \(LCDGeometry.supported.map(\.name).joined(separator: ", "))")
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
            default: throw ExitError(.usage, "\(command): --debounce-mode: '\(text)' is not a mode; use stable or prompt")
            }
        }
        if let text = arguments.value("title") { texts.title = text }
        if let text = arguments.value("send-label") { texts.sendLabel = text }
        if let text = arguments.value("countdown-label") { texts.countdownLabel = text }
        if let text = arguments.value("resend-label") { texts.resendLabel = text }
        if let problem = texts.problems(columns: geometry.columns, maxSeconds: durationSeconds).first {
            // Name the flag the user typed rather than the field: "--countdown-label "..." is 17 ...".
            let flags = ["title": "--title", "sendLabel": "--send-label", "countdownLabel": "--countdown-label", "resendLabel": "--resend-label"]
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
        throw ExitError(.usage, "\(command): --\(option): expected \(unit) from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
    }
    return value
}
