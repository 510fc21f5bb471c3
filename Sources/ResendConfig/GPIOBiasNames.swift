import HAL

extension GPIOBias {
    /// The one table of bias words: what `button.bias` and `--button-bias` accept (in the order
    /// help and messages list them), what `run --help` adds after a word, and how `config check`'s
    /// summary names the bias.
    public static let vocabulary: [(name: String, bias: GPIOBias, note: String, summary: String)] = [
        ("pull-up", .pullUp, "", "pull-up"),
        ("pull-down", .pullDown, "", "pull-down"),
        ("disabled", .disabled, "external resistor", "no bias"),
        ("as-is", .asIs, "", "bias as-is"),
    ]

    /// The bias a word names ("pull-down"); nil for any other text.
    public init?(name: String) {
        guard let entry = Self.vocabulary.first(where: { $0.name == name }) else { return nil }
        self = entry.bias
    }

    /// The word for this bias in the file and on the command line: "pull-up".
    public var name: String { Self.entry(self).name }

    /// How `config check`'s summary names this bias: "pull-up", "no bias".
    public var summary: String { Self.entry(self).summary }

    /// The choices of the schema's `button.bias`.
    public static var choices: [(name: String, value: GPIOBias)] { vocabulary.map { ($0.name, $0.bias) } }

    /// The words as `run --help` lists them: notes and the default in parentheses ("pull-up
    /// (default), pull-down, disabled (external resistor) or as-is").
    public static var helpList: String {
        vocabularyHelp(vocabulary.map { ($0.name, $0.note, $0.bias == DeviceConfig.Button().bias) })
    }

    private static func entry(_ bias: GPIOBias) -> (name: String, bias: GPIOBias, note: String, summary: String) {
        guard let entry = vocabulary.first(where: { $0.bias == bias }) else { preconditionFailure("GPIOBias.vocabulary lacks a case") }
        return entry
    }
}
