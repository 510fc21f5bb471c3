import ResendCore

extension DebounceMode {
    /// The one table of debounce-mode words: what `button.debounceMode` and `--debounce-mode`
    /// accept, in the order messages list them.
    public static let vocabulary: [(name: String, mode: DebounceMode)] = [("stable", .stable), ("prompt", .prompt)]

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
}
