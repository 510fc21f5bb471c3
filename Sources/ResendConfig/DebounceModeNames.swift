import ResendCore

extension DebounceMode {
    /// The one table of debounce-mode words: what `button.debounceMode` and `--debounce-mode`
    /// accept, in the order help and messages list them, with what `--help` says of each.
    public static let vocabulary: [(name: String, mode: DebounceMode, note: String)] = [
        ("stable", .stable, "a change counts once the line held still for the window"),
        ("prompt", .prompt, "first edge counts, then the line is ignored for the window"),
    ]

    /// The mode a word names ("prompt"); nil for any other text.
    public init?(name: String) {
        guard let entry = Self.vocabulary.first(where: { $0.name == name }) else { return nil }
        self = entry.mode
    }

    /// The word for this mode: "stable" or "prompt".
    public var name: String {
        guard let entry = Self.vocabulary.first(where: { $0.mode == self }) else { preconditionFailure("DebounceMode.vocabulary lacks a case") }
        return entry.name
    }

    /// The choices of the schema's `button.debounceMode`.
    public static var choices: [(name: String, value: DebounceMode)] { vocabulary.map { ($0.name, $0.mode) } }

    /// The words as `--debounce-mode`'s help lists them, the default (`DeviceConfig.Button`'s)
    /// marked.
    public static var helpList: String {
        vocabularyHelp(vocabulary.map { ($0.name, $0.note, $0.mode == DeviceConfig.Button().debounceMode) })
    }
}
