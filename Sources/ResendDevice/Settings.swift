import CharacterLCD
import HAL
import ResendConfig
import ResendCore

extension BehaviourSettings {
    /// The flags every subcommand that drives the button accepts.
    public static let optionSpecs: [OptionSpec] = [
        OptionSpec(
            "duration", value: "SECONDS",
            help: "cooldown after a press, whole seconds \(durationRange.lowerBound)-\(durationRange.upperBound) (default \(defaultDuration))"),
        OptionSpec("geometry", value: "COLSxROWS", help: "LCD size: \(geometries.map { $0.name }.joined(separator: ", ")) (default 16x2)"),
        OptionSpec(
            "debounce", value: "MS",
            help: "debounce window in milliseconds \(debounceRange.lowerBound)-\(debounceRange.upperBound) (default \(defaultDebounceMilliseconds))"),
        OptionSpec("debounce-mode", value: "MODE", help: DebounceMode.helpList),
        OptionSpec("title", value: "TEXT", help: "status line when ready (default \"\(Texts().title)\")"),
        OptionSpec("send-label", value: "TEXT", help: "label before the first press (default \"\(Texts().sendLabel)\")"),
        OptionSpec(
            "countdown-label", value: "TEXT", help: "label during the cooldown, {s} is the seconds left (default \"\(Texts().countdownLabel)\")"),
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
            guard let mode = DebounceMode(name: text) else {
                throw ExitError(
                    .usage, "\(command): --debounce-mode: \(shown(text)) is not a mode; use \(listWithOr(DebounceMode.vocabulary.map { $0.name }))")
            }
            debounceMode = mode
        }
        if let text = arguments.value("title") { texts.title = text }
        if let text = arguments.value("send-label") { texts.sendLabel = text }
        if let text = arguments.value("countdown-label") { texts.countdownLabel = text }
        if let text = arguments.value("resend-label") { texts.resendLabel = text }
        // Name the flag the user typed rather than the field: "--countdown-label "..." is 17 ...".
        let flags = ["title": "--title", "sendLabel": "--send-label", "countdownLabel": "--countdown-label", "resendLabel": "--resend-label"]
        // The characters first, with the configuration file's check (`textROMProblem`): the
        // driver shows one ROM glyph per Unicode scalar, so "e\u{301}" is refused here, not trapped on.
        for (field, text) in texts.fields where !textsCheckedByFont {
            if let problem = textROMProblem(text, rom: rom, romSetting: "lcd.rom in the configuration file") {
                throw ExitError(.usage, "\(command): \(flags[field] ?? field) \(problem)")
            }
        }
        // On an OLED the widths are the font's pixels (`glyphProblems`); `{s}` is still checked here.
        if let problem = texts.problems(columns: geometry.columns, maxSeconds: durationSeconds).first(where: {
            !textsCheckedByFont || $0.kind != .tooWide
        }) {
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
