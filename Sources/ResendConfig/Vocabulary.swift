/// "a", "a or b", "a, b or c": a list as a sentence says it.
public func listWithOr(_ items: [String]) -> String {
    guard let last = items.last else { return "" }
    guard items.count > 1 else { return last }
    return items.dropLast().joined(separator: ", ") + " or " + last
}

/// A vocabulary's words as a flag's help lists them: each word with its note and, for the
/// default, "default" in parentheses ("stable (held still; default) or prompt (first edge)").
public func vocabularyHelp(_ words: [(name: String, note: String, isDefault: Bool)]) -> String {
    listWithOr(
        words.map { word in
            let notes = (word.note.isEmpty ? [] : [word.note]) + (word.isDefault ? ["default"] : [])
            return notes.isEmpty ? word.name : "\(word.name) (\(notes.joined(separator: "; ")))"
        })
}
