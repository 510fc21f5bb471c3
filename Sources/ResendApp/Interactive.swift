import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore

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
/// tap of a key still down waits for its release. Enter taps `#` (submit) and Backspace taps `*`
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

    /// Presses `key` now (or once its previous tap is released) and releases it `holdFor` later.
    private mutating func tap(_ key: Key, holdFor hold: TimeSpan) {
        var at = clock.now()
        if let last = pendingKeys.last(where: { $0.key == key }) {
            at = max(at, last.at + .milliseconds(30))
        }
        pendingKeys.append(KeyEvent(key, .pressed, at: at))
        pendingKeys.append(KeyEvent(key, .released, at: at + hold))
        pendingKeys.sort { $0.at < $1.at }
    }

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

/// Draws the emulated LCD in a terminal: a framed screen, the backlight and the LED, the keys,
/// and the last event; in the desktop flow also the door and the simulated phone, beside the LCD
/// when the terminal is wide enough, else below it. Every line is cut to the terminal's width.
/// Redraws only when something visible changed (or the terminal was resized).
public final class TerminalRenderer: LoopObserver {
    private let emulator: HD44780Emulator
    private let led: RecordingLED
    private let header: String
    private let bounceKey: Character
    private let output: (String) -> Void
    /// With a keypad: its keys in the help, and the output line (nil when none is configured).
    private let keypad: Bool
    private let outputLine: RecordingLED?
    /// The desktop flow's phone; with it the output line is drawn as the door.
    private let phone: SimulatedPhone?
    /// The terminal's size, asked at every draw; nil (not a terminal) draws 80 columns, 24 rows.
    private let terminalSize: () -> (columns: Int, rows: Int)?
    private var lastDrawn: [String] = []
    private var lastEvent = ""
    public var forceRedraw = true
    /// Every event's log line (`run`'s words, plain), as it happens; nil: only the last one is kept,
    /// for the drawing.
    public var log: ((String) -> Void)?

    /// The phone panel's width and height when there is room for it.
    public static let phoneWidth = 28
    public static let phoneHeight = 10

    public init(
        emulator: HD44780Emulator, led: RecordingLED, settings: BehaviourSettings, bounceKey: Character, keypad: Bool = false,
        outputLine: RecordingLED? = nil, phone: SimulatedPhone? = nil, terminalSize: @escaping () -> (columns: Int, rows: Int)? = { nil },
        output: @escaping (String) -> Void
    ) {
        self.emulator = emulator
        self.led = led
        self.bounceKey = bounceKey
        self.keypad = keypad
        self.outputLine = outputLine
        self.phone = phone
        self.terminalSize = terminalSize
        self.output = output
        let mode = settings.debounceMode == .stable ? "stable" : "prompt"
        header =
            "ResendButton simulator  \(settings.geometry.name) LCD, \(settings.durationSeconds) s cooldown, debounce \(settings.debounceMilliseconds) ms \(mode)"
    }

    public func record(_ event: LoopEvent, at now: Instant) {
        if let record = logRecord(for: event, at: now) {
            lastEvent = record.plainText
            log?(record.plainText)
        }
    }

    public func stepFinished(at now: Instant) {
        let lines = frameLines()
        guard forceRedraw || lines != lastDrawn else { return }
        forceRedraw = false
        lastDrawn = lines
        // Home the cursor, draw, clear to the end of the screen: no flicker from a full clear.
        output("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    /// Draws again now, for a terminal that changed size.
    public func redraw(at now: Instant) {
        forceRedraw = true
        stepFinished(at: now)
    }

    /// The text of the drawing, each line cut to the terminal's width and no more lines than its
    /// rows, so that drawing in place never scrolls (tests read it; the only escapes are the
    /// dimmed LCD rows while the backlight is off).
    public func frameLines() -> [String] {
        let size = terminalSize()
        let width = max(size?.columns ?? 80, 1)
        let height = max(size?.rows ?? 24, 1)
        let screen = emulator.screen
        let border = String(repeating: "─", count: screen.first?.count ?? 0)
        let dim = emulator.backlight ? "" : "\u{1B}[2m"
        let reset = emulator.backlight ? "" : "\u{1B}[0m"
        var device = ["  ┌" + border + "┐"]
        device += screen.map { "  │" + dim + $0 + reset + "│" }
        device.append("  └" + border + "┘")
        let ledText = led.isOn == true ? "LED ● on " : "LED ○ off"
        var status = "  " + ledText + "   backlight " + (emulator.backlight ? "on" : "off")
        if phone == nil, let outputLine { status += "   output " + (outputLine.isOn == true ? "● on " : "○ off") }
        device.append(status)
        if phone != nil, let outputLine { device.append(outputLine.isOn == true ? "  door ■ DOOR OPEN" : "  door □ closed") }
        let help: [String]
        if phone != nil {
            let keys = [
                "space Send", "0-9 type the code", "enter/# submit", "backspace/* erase", "x clear", "A-D letter keys",
                "\(bounceKey) bouncy press", "q quit",
            ]
            help = flow(keys, width: width - 2).map { "  " + $0 }
        } else if keypad {
            help = [
                "  space press   enter #   backspace *   \(bounceKey) bouncy press   q quit",
                "  keypad: 0-9 * # A-D (upper case)   x hold * (clears)",
            ]
        } else {
            help = ["  space/enter press   \(bounceKey) bouncy press   q quit"]
        }
        var lines = ["  " + header, ""]
        if let phone {
            let left = device.map(visibleWidth).max() ?? 0
            let gap = 3
            if left + gap + Self.phoneWidth <= width {
                let panel = phone.panel(width: Self.phoneWidth, height: max(Self.phoneHeight, device.count))
                for (index, row) in panel.enumerated() {
                    let part = index < device.count ? device[index] : ""
                    lines.append(part + String(repeating: " ", count: left - visibleWidth(part) + gap) + row)
                }
            } else {
                // Below the LCD: as tall as the rows left allow (6 at least), the help and the last event below it.
                let room = height - lines.count - device.count - 1 - 1 - help.count - 1
                let panel = phone.panel(width: min(Self.phoneWidth, width - 2), height: min(Self.phoneHeight, max(6, room)))
                lines += device + [""] + panel.map { "  " + $0 }
            }
        } else {
            lines += device
        }
        lines.append("")
        lines += help
        lines.append("  " + lastEvent)
        return lines.prefix(height).map { cut($0, to: width) }
    }
}

/// `items` joined by three spaces into lines of at most `width` characters (an item never split).
private func flow(_ items: [String], width: Int) -> [String] {
    var lines: [String] = []
    for item in items {
        if let last = lines.last, last.count + 3 + item.count <= width {
            lines[lines.count - 1] = last + "   " + item
        } else {
            lines.append(item)
        }
    }
    return lines
}

/// The columns `line` takes on a terminal: its characters, less its escape sequences (ESC [ ... letter).
private func visibleWidth(_ line: String) -> Int {
    var count = 0
    var inEscape = false
    for character in line {
        if inEscape {
            if character.isLetter { inEscape = false }
        } else if character == "\u{1B}" {
            inEscape = true
        } else {
            count += 1
        }
    }
    return count
}

/// `line` with at most `width` visible characters; its escape sequences are kept.
private func cut(_ line: String, to width: Int) -> String {
    guard visibleWidth(line) > width else { return line }
    var result = ""
    var count = 0
    var inEscape = false
    for character in line {
        if inEscape {
            result.append(character)
            if character.isLetter { inEscape = false }
        } else if character == "\u{1B}" {
            inEscape = true
            result.append(character)
        } else if count < width {
            result.append(character)
            count += 1
        }
    }
    return result
}
