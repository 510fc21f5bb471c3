import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// What a terminal delivers to the interactive simulator.
public enum KeyInput: Hashable, Sendable {
    /// A byte read from the terminal in raw mode (space 0x20, enter 0x0D/0x0A, Ctrl-C 0x03).
    case key(UInt8)
    /// SIGINT or SIGTERM arrived.
    case stop
    /// The terminal changed size: redraw.
    case resized
}

/// A blocking source of key presses with a deadline, like `EventSource` (HALLinux's
/// TerminalKeyboard on a device, a scripted fake in tests).
public protocol KeySource {
    mutating func waitForKeys(until deadline: Instant?) throws(HALError) -> [KeyInput]
}

/// Turns key presses into button edges: a terminal has no key-release event, so a press is a
/// pressed edge now and a release `holdTime` later; the bounce key gives a burst that settles
/// pressed. `q`, Ctrl-C, Ctrl-D and SIGINT/SIGTERM stop. Edges scheduled for the future are
/// delivered at their time, so the debouncer sees exactly what a real bouncing contact produces.
///
/// With a keypad (`clearHold` given), `0`-`9`, `*`, `#` and `A`-`D` (upper case: lower case is the
/// simulator's own) tap that keypad key: pressed now, released `ScriptItem.keyHoldTime` later; a
/// tap while an earlier one is still down waits for its release, so keys typed at once (a paste, a
/// fast typist) are tapped one after another, in the order typed. Enter taps `#` (submit) and Backspace taps `*`
/// (erase a digit); space stays the button. `x` holds `*` for `clearHold` and 100 ms more, which
/// clears the field (a terminal has no key-release event, so a held `*` cannot be seen).
public struct KeyboardButton<Keys: KeySource, Clock: MonotonicClock>: EventSource {
    public var keys: Keys
    public let clock: Clock
    public let bounceKey: UInt8
    /// The keypad's hold-to-clear time; nil without a keypad.
    public let clearHold: TimeSpan?
    private var pending: [ButtonEdge] = []
    /// Keypad key events scheduled, sorted by time.
    private var pendingKeys: [KeyEvent] = []
    /// Called when the terminal changed size (the renderer redraws for the new width).
    public var onResize: (() -> Void)?

    public init(keys: Keys, clock: Clock, bounceKey: Character, clearHold: TimeSpan? = nil) {
        self.keys = keys
        self.clock = clock
        self.bounceKey = bounceKey.asciiValue ?? 0x62
        self.clearHold = clearHold
    }

    static var space: UInt8 { 0x20 }
    static var carriageReturn: UInt8 { 0x0D }
    static var lineFeed: UInt8 { 0x0A }
    static var endOfText: UInt8 { 0x03 }  // Ctrl-C in raw mode
    static var endOfTransmission: UInt8 { 0x04 }  // Ctrl-D
    static var quitKeys: Set<UInt8> { [0x71, 0x51] }  // q, Q

    public mutating func wait(until deadline: Instant?) throws(HALError) -> [LoopInput] {
        while true {
            let now = clock.now()
            let due = pending.prefix { $0.time <= now }
            let dueKeys = pendingKeys.prefix { $0.at <= now }
            if !due.isEmpty || !dueKeys.isEmpty {
                pending.removeFirst(due.count)
                pendingKeys.removeFirst(dueKeys.count)
                return due.map { .button($0) } + dueKeys.map { .key($0) }
            }
            if let deadline, deadline <= now { return [] }
            let inputs = try keys.waitForKeys(until: earliest(earliest(deadline, pending.first?.time), pendingKeys.first?.at))
            var result: [LoopInput] = []
            for input in inputs {
                switch input {
                case .stop:
                    result.append(.stop)
                case .resized:
                    onResize?()
                case .key(let byte):
                    if Self.quitKeys.contains(byte) || byte == Self.endOfText || byte == Self.endOfTransmission {
                        result.append(.stop)
                    } else if clearHold != nil, let key = Self.keypadAlias(byte) {
                        tap(key, holdFor: ScriptItem.keyHoldTime)
                    } else if byte == Self.space || byte == Self.carriageReturn || byte == Self.lineFeed {
                        schedule(edges(for: .press(at: .zero), start: clock.now()))
                    } else if byte == bounceKey {
                        schedule(edges(for: .bounce(at: .zero), start: clock.now()))
                    } else if clearHold != nil, let key = interactiveKeypadKey(byte) {
                        tap(key, holdFor: ScriptItem.keyHoldTime)
                    } else if let clearHold, byte == interactiveClearKey {
                        tap(.star, holdFor: clearHold + .milliseconds(100))
                    }
                }
            }
            if !result.isEmpty { return result }
        }
    }

    /// With a keypad, Enter is `#` and Backspace (DEL or Ctrl-H, as terminals send it) is `*`.
    static func keypadAlias(_ byte: UInt8) -> Key? {
        switch byte {
        case carriageReturn, lineFeed: return .pound
        case 0x7F, 0x08: return .star
        default: return nil
        }
    }

    /// Presses `key` now, or `tapGap` after the release of a tap still pending (keys typed in one
    /// read, a paste or a fast typist, follow each other: one key down at a time, in the order
    /// typed), and releases it `holdFor` later.
    private mutating func tap(_ key: Key, holdFor hold: TimeSpan) {
        var at = clock.now()
        if let last = pendingKeys.last {
            at = max(at, last.at + Self.tapGap)
        }
        pendingKeys.append(KeyEvent(key, .pressed, at: at))
        pendingKeys.append(KeyEvent(key, .released, at: at + hold))
    }

    /// From one tap's release to the next tap's press when keys arrive faster than they are held.
    static var tapGap: TimeSpan { .milliseconds(30) }

    private mutating func schedule(_ edges: [ButtonEdge]) {
        // A new press while the previous burst is still pending continues after it.
        let offset = max(TimeSpan.zero, (pending.last?.time ?? .origin) - (edges.first?.time ?? .origin))
        pending += edges.map { ButtonEdge(pressed: $0.pressed, time: $0.time + offset) }
    }
}

/// The key that holds `*` in the interactive simulator with a keypad: `x`.
let interactiveClearKey = UInt8(ascii: "x")

/// The keypad key of a terminal byte in the interactive simulator: digits, `*`, `#`, upper-case
/// `A`-`D` (lower case stays the simulator's own, `b` the bouncy press).
func interactiveKeypadKey(_ byte: UInt8) -> Key? {
    guard byte < UInt8(ascii: "a") || byte > UInt8(ascii: "d") else { return nil }
    return Key(symbol: byte)
}
