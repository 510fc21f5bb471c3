/// One key of the device: a digit, `*`, `#`, a letter key of a 4x4 keypad, or the single
/// push-button. Backends (the single GPIO button, a GPIO matrix, an evdev device) report keys; what
/// a key does is decided above the HAL (the code-entry flow and a key binding for Send/Resend).
public enum Key: Hashable, Sendable {
    case digit0, digit1, digit2, digit3, digit4, digit5, digit6, digit7, digit8, digit9
    /// `*`: deletes the last digit; held, clears the field.
    case star
    /// `#`: submits the code.
    case pound
    /// The letter keys of a 4x4 keypad (`A` to `D`).
    case a, b, c, d
    /// The single push-button (the product's original input).
    case button

    /// The digit keys, 0 to 9, in order.
    public static let digits: [Key] = [.digit0, .digit1, .digit2, .digit3, .digit4, .digit5, .digit6, .digit7, .digit8, .digit9]

    /// Every key, digits first, then `*`, `#`, `A`-`D`, the button.
    public static let all: [Key] = digits + [.star, .pound, .a, .b, .c, .d, .button]

    /// The digit key for `value` (0...9); nil for anything else.
    public static func digit(_ value: Int) -> Key? {
        guard value >= 0 && value < digits.count else { return nil }
        return digits[value]
    }

    /// 0...9 for a digit key, nil for the others.
    public var digitValue: UInt8? {
        switch self {
        case .digit0: return 0
        case .digit1: return 1
        case .digit2: return 2
        case .digit3: return 3
        case .digit4: return 4
        case .digit5: return 5
        case .digit6: return 6
        case .digit7: return 7
        case .digit8: return 8
        case .digit9: return 9
        case .star, .pound, .a, .b, .c, .d, .button: return nil
        }
    }

    /// The ASCII character printed on the key (`0`-`9`, `*`, `#`, `A`-`D`); `!` for the button,
    /// which has none. For key maps and logs of non-secret keys (never log digits of a code).
    public var symbol: UInt8 {
        if let value = digitValue { return UInt8(ascii: "0") + value }
        switch self {
        case .star: return UInt8(ascii: "*")
        case .pound: return UInt8(ascii: "#")
        case .a: return UInt8(ascii: "A")
        case .b: return UInt8(ascii: "B")
        case .c: return UInt8(ascii: "C")
        case .d: return UInt8(ascii: "D")
        default: return UInt8(ascii: "!")
        }
    }

    /// The key printed with `symbol` (`0`-`9`, `*`, `#`, `A`-`D`, lower-case letters too); nil for
    /// any other character.
    public init?(symbol: UInt8) {
        switch symbol {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self = Key.digits[Int(symbol - UInt8(ascii: "0"))]
        case UInt8(ascii: "*"): self = .star
        case UInt8(ascii: "#"): self = .pound
        case UInt8(ascii: "A"), UInt8(ascii: "a"): self = .a
        case UInt8(ascii: "B"), UInt8(ascii: "b"): self = .b
        case UInt8(ascii: "C"), UInt8(ascii: "c"): self = .c
        case UInt8(ascii: "D"), UInt8(ascii: "d"): self = .d
        default: return nil
        }
    }
}

/// Which way a key moved. Logical, like `ButtonEdge.pressed`: the backend applies active-low.
public enum KeyEdge: Hashable, Sendable {
    case pressed
    case released
}

/// A change of one key, as a backend reports it (raw: not yet debounced) or as the debouncer
/// reports it (debounced). `at` is on the monotonic clock; backends use the kernel's event
/// timestamp when they have one.
public struct KeyEvent: Hashable, Sendable {
    public var key: Key
    public var edge: KeyEdge
    public var at: Instant

    public init(_ key: Key, _ edge: KeyEdge, at: Instant) {
        self.key = key
        self.edge = edge
        self.at = at
    }

    /// True for `.pressed`.
    public var isPress: Bool { edge == .pressed }
}
