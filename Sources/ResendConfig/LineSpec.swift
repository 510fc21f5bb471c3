/// Where a GPIO line is, as the user wrote it: a line name ("GPIO17", found on whichever chip has
/// it) or a chip and offset ("gpiochip0:17").
public enum LineSpec: Hashable, Sendable {
    case named(String)
    case chipOffset(chip: Int, offset: UInt32)

    /// The Pi's GPIO17 (header pin 11): the default button line.
    public static let defaultButton = LineSpec.named("GPIO17")

    /// Parses `GPIO17` (any name without spaces or a colon) or `gpiochipN:OFFSET`; nil otherwise.
    public init?(parsing text: String) {
        guard lineNameProblem(text) == nil else { return nil }
        guard let colon = text.firstIndex(of: ":") else {
            self = .named(text)
            return
        }
        let chip = text[..<colon]
        let offset = text[text.index(after: colon)...]
        let prefix = "gpiochip"
        guard chip.hasPrefix(prefix), let number = parseDecimalDigits(chip.dropFirst(prefix.count)),
            let offsetNumber = parseDecimalDigits(offset), let line = UInt32(exactly: offsetNumber),
            let chipNumber = Int(exactly: number)
        else { return nil }
        self = .chipOffset(chip: chipNumber, offset: line)
    }

    /// The spec of a configuration file's line: what `init(parsing:)` makes of it, else the text
    /// as a line name (the schema has already refused names with spaces or control characters).
    public init(configured text: String) {
        self = LineSpec(parsing: text) ?? .named(text)
    }

    /// "GPIO17" or "gpiochip0:17", as the user writes it.
    public var text: String {
        switch self {
        case .named(let name): return name
        case .chipOffset(let chip, let offset): return "gpiochip\(chip):\(offset)"
        }
    }
}

/// Digits only (no sign, no spaces), at most 9 of them; nil otherwise.
public func parseDecimalDigits(_ text: Substring) -> UInt64? {
    guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return UInt64(text)
}

extension DeviceConfig.Button {
    /// `line` as a `LineSpec`; setting it writes the spec's text into `line`.
    public var lineSpec: LineSpec {
        get { LineSpec(configured: line) }
        set { line = newValue.text }
    }
}

extension DeviceConfig.LED {
    /// `line` as a `LineSpec`; nil: no LED. Setting it writes the spec's text into `line`.
    public var lineSpec: LineSpec? {
        get { line.map(LineSpec.init(configured:)) }
        set { line = newValue?.text }
    }
}
