import CharacterLCD
import HAL
import HALMock
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
public struct KeyboardButton<Keys: KeySource, Clock: MonotonicClock>: EventSource {
    public var keys: Keys
    public let clock: Clock
    public let bounceKey: UInt8
    private var pending: [ButtonEdge] = []

    public init(keys: Keys, clock: Clock, bounceKey: Character) {
        self.keys = keys
        self.clock = clock
        self.bounceKey = bounceKey.asciiValue ?? 0x62
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
            if !due.isEmpty {
                pending.removeFirst(due.count)
                return due.map { .edge($0) }
            }
            if let deadline, deadline <= now { return [] }
            let inputs = try keys.waitForKeys(until: earliest(deadline, pending.first?.time))
            var result: [LoopInput] = []
            for input in inputs {
                switch input {
                case .stop:
                    result.append(.stop)
                case .resized:
                    break  // The renderer homes the cursor on every draw; nothing to do.
                case .key(let byte):
                    if Self.quitKeys.contains(byte) || byte == Self.endOfText || byte == Self.endOfTransmission {
                        result.append(.stop)
                    } else if byte == Self.space || byte == Self.carriageReturn || byte == Self.lineFeed {
                        schedule(edges(for: .press(at: .zero), start: clock.now()))
                    } else if byte == bounceKey {
                        schedule(edges(for: .bounce(at: .zero), start: clock.now()))
                    }
                }
            }
            if !result.isEmpty { return result }
        }
    }

    private mutating func schedule(_ edges: [ButtonEdge]) {
        // A new press while the previous burst is still pending continues after it.
        let offset = max(TimeSpan.zero, (pending.last?.time ?? .origin) - (edges.first?.time ?? .origin))
        pending += edges.map { ButtonEdge(pressed: $0.pressed, time: $0.time + offset) }
    }
}

/// Draws the emulated LCD in a terminal: a framed screen, the backlight and the LED, the keys,
/// and the last event. Redraws only when something visible changed.
public final class TerminalRenderer: LoopObserver {
    private let emulator: HD44780Emulator
    private let led: RecordingLED
    private let header: String
    private let bounceKey: Character
    private let output: (String) -> Void
    private var lastDrawn: [String] = []
    private var lastEvent = ""
    public var forceRedraw = true

    public init(emulator: HD44780Emulator, led: RecordingLED, settings: BehaviourSettings, bounceKey: Character, output: @escaping (String) -> Void) {
        self.emulator = emulator
        self.led = led
        self.bounceKey = bounceKey
        self.output = output
        let mode = settings.debounceMode == .stable ? "stable" : "prompt"
        header = "ResendButton simulator  \(settings.geometry.name) LCD, \(settings.durationSeconds) s cooldown, debounce \(settings.debounceMilliseconds) ms \(mode)"
    }

    public func record(_ event: LoopEvent, at now: Instant) {
        if let record = logRecord(for: event, at: now) { lastEvent = record.plainText }
    }

    public func stepFinished(at now: Instant) {
        let lines = frameLines()
        guard forceRedraw || lines != lastDrawn else { return }
        forceRedraw = false
        lastDrawn = lines
        // Home the cursor, draw, clear to the end of the screen: no flicker from a full clear.
        output("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }

    /// The text of the drawing without escapes for colour (tests read it).
    public func frameLines() -> [String] {
        let screen = emulator.screen
        let width = screen.first?.count ?? 0
        let border = String(repeating: "─", count: width)
        let dim = emulator.backlight ? "" : "\u{1B}[2m"
        let reset = emulator.backlight ? "" : "\u{1B}[0m"
        var lines = ["  " + header, "", "  ┌" + border + "┐"]
        lines += screen.map { "  │" + dim + $0 + reset + "│" }
        lines.append("  └" + border + "┘")
        let ledText = led.isOn == true ? "LED ● on " : "LED ○ off"
        lines.append("  " + ledText + "   backlight " + (emulator.backlight ? "on" : "off"))
        lines.append("")
        lines.append("  space/enter press   \(bounceKey) bouncy press   q quit")
        lines.append("  " + lastEvent)
        return lines
    }
}
