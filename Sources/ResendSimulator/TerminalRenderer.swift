import CharacterLCD
import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

/// Draws the emulated LCD in a terminal: a framed screen, the backlight and the LED, the keys,
/// and the last event; in the desktop flow also the door and the simulated phone, beside the LCD
/// when the terminal is wide enough, else below it. Every line is cut to the terminal's width.
/// Redraws only when something visible changed (or the terminal was resized).
public final class TerminalRenderer: LoopObserver {
    private let emulator: HD44780Emulator
    /// The emulated OLED shown instead of the LCD, drawn in half-block characters.
    private let oled: OLEDEmulator?
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
        emulator: HD44780Emulator, oled: OLEDEmulator? = nil, led: RecordingLED, settings: BehaviourSettings, bounceKey: Character,
        keypad: Bool = false,
        outputLine: RecordingLED? = nil, phone: SimulatedPhone? = nil, terminalSize: @escaping () -> (columns: Int, rows: Int)? = { nil },
        output: @escaping (String) -> Void
    ) {
        self.emulator = emulator
        self.oled = oled
        self.led = led
        self.bounceKey = bounceKey
        self.keypad = keypad
        self.outputLine = outputLine
        self.phone = phone
        self.terminalSize = terminalSize
        self.output = output
        let mode = settings.debounceMode.name
        header =
            "ResendButton simulator  \(oled.map { $0.chip == .ssd1306 ? "SSD1306" : "SH1106" }.map { "\($0) 128x64 OLED" } ?? "\(settings.geometry.name) LCD"), \(settings.durationSeconds) s cooldown, debounce \(settings.debounceMilliseconds) ms \(mode)"
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
        let screen = oled.map(halfBlockRows) ?? emulator.screen
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
