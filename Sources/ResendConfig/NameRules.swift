// The rules of the names and paths a flag or the configuration file gives, and the suggestion
// for a name that is almost right.

/// A file path from a flag or the configuration file: not empty, no control characters (a new
/// line or an escape in a path is a mistake, and would garble every message naming the file).
/// The words that follow the quoted path in a message, or nil when the path is acceptable.
public func pathProblem(_ path: String) -> String? {
    if path.isEmpty { return "is empty; give a path to a file" }
    if path.unicodeScalars.contains(where: isControl) { return "contains a control character; a path must not" }
    return nil
}

/// A GPIO line name or `gpiochipN:OFFSET` from a flag or the configuration file: not empty, no
/// spaces or control characters. The words that follow the quoted name, or nil when acceptable.
public func lineNameProblem(_ name: String) -> String? {
    if name.isEmpty { return "is empty; give a line name like GPIO17 or gpiochipN:OFFSET like gpiochip0:17" }
    if name.unicodeScalars.contains(where: isControl) { return "contains a control character; a GPIO line name must not" }
    if name.contains(where: { $0.isWhitespace }) { return "contains a space; a GPIO line name has none (see gpioinfo)" }
    return nil
}

/// The candidate within edit distance 2 of `name` (or sharing its prefix), if there is a clear one.
public func closestName(to name: String, among candidates: [String]) -> String? {
    var best: (name: String, distance: Int)?
    for candidate in candidates {
        let distance = editDistance(name, candidate)
        if distance <= 2, distance < best?.distance ?? Int.max { best = (candidate, distance) }
    }
    if let best { return best.name }
    let prefixed = candidates.filter { $0.hasPrefix(name) || name.hasPrefix($0) }
    return prefixed.count == 1 ? prefixed[0] : nil
}

/// Levenshtein distance over characters.
public func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
            current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
