import ResendConfig

/// A flag the command line accepts. `valueName` is nil for a switch (`--headless`).
public struct OptionSpec: Sendable {
    public var name: String
    public var valueName: String?
    public var help: String

    public init(_ name: String, value valueName: String? = nil, help: String) {
        self.name = name
        self.valueName = valueName
        self.help = help
    }
}

/// Renders the options of a subcommand for `--help`.
public func helpText(usage: String, summary: String, specs: [OptionSpec]) -> String {
    var lines = ["usage: \(usage)", "", summary, "", "options:"]
    let labels = specs.map { spec in "--\(spec.name)" + (spec.valueName.map { " \($0)" } ?? "") }
    let width = (labels.map { $0.count }.max() ?? 0) + 2
    for (label, spec) in zip(labels, specs) {
        lines.append("  " + label + String(repeating: " ", count: width - label.count) + spec.help)
    }
    return lines.joined(separator: "\n")
}
