import HAL
import HALMock
import ResendConfig
import ResendCore
import ResendDevice

// The desktop flow of the interactive simulator: the code made on the device "arrives" as an SMS
// on a simulated phone drawn beside the LCD, the person types it on the keypad keys, the program
// checks it, the door output pulses. The phone is the send command's receiver (`InProcessSend`):
// it gets the bytes a real send command gets on its standard input and shows the message an SMS
// service would deliver with them.

/// The simulated phone: the messages delivered to it, oldest first. A class, so the send service
/// that delivers and the renderer that draws see one phone. Not thread-safe.
public final class SimulatedPhone {
    public struct Message: Hashable, Sendable {
        /// The text as the phone shows it.
        public var text: String
        /// When it arrived, on the loop's clock.
        public var at: Instant
    }

    /// Every message delivered, oldest first.
    public private(set) var messages: [Message] = []
    /// The instant the simulator started: message times are shown relative to it (`0:42`).
    public let start: Instant

    public init(start: Instant) { self.start = start }

    /// Delivers an SMS made from the send command's standard input `input` (a code made on the
    /// device and a new line), the text an SMS service would send with it, `Your code: 482913`;
    /// without one (the code is the verification service's), `A code from the verification service`.
    public func deliver(_ input: [UInt8]?, at now: Instant) {
        guard let input else {
            messages.append(Message(text: "A code from the verification service", at: now))
            return
        }
        let digits = input.filter { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        messages.append(Message(text: "Your code: " + String(decoding: digits, as: UTF8.self), at: now))
    }

    /// The phone as `height` lines of exactly `width` columns (at least 16 and 6): a frame, a
    /// title, then the newest messages that fit, each its sender and time on one line and its text
    /// wrapped below; before the first message, a hint to press Send.
    public func panel(width: Int, height: Int) -> [String] {
        let inner = max(width, 16) - 4
        let rows = max(height, 6) - 4
        func row(_ text: String) -> String {
            let cut = String(text.prefix(inner))
            return "│ " + cut + String(repeating: " ", count: inner - cut.count) + " │"
        }
        func split(_ left: String, _ right: String) -> String {
            row(left + String(repeating: " ", count: max(1, inner - left.count - right.count)) + right)
        }
        var body: [String] = []
        for message in messages.reversed() {
            let block = [split("ResendButton", minutesAndSeconds(message.at - start))] + wrap(message.text, width: inner).map(row)
            guard body.count + block.count + (body.isEmpty ? 0 : 1) <= rows else { break }
            body = block + (body.isEmpty ? [] : [row("")]) + body
        }
        if messages.isEmpty {
            body = wrap("No messages yet: press space to Send.", width: inner).map(row)
        }
        body += Array(repeating: row(""), count: max(0, rows - body.count))
        let rule = String(repeating: "─", count: inner + 2)
        return ["╭" + rule + "╮", split("Phone", "SMS"), "├" + rule + "┤"] + body.prefix(rows) + ["╰" + rule + "╯"]
    }
}

/// `m:ss` of a span (whole seconds, rounded down).
private func minutesAndSeconds(_ span: TimeSpan) -> String {
    let seconds = max(0, span.nanoseconds / 1_000_000_000)
    let rest = seconds % 60
    return String(seconds / 60) + ":" + (rest < 10 ? "0" : "") + String(rest)
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut).
func wrap(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
        var word = Substring(word)
        while word.count > width {
            if !line.isEmpty { lines.append(line); line = "" }
            lines.append(String(word.prefix(width)))
            word = word.dropFirst(width)
        }
        if line.isEmpty {
            line = String(word)
        } else if line.count + 1 + word.count <= width {
            line += " " + word
        } else {
            lines.append(line)
            line = String(word)
        }
    }
    if !line.isEmpty { lines.append(line) }
    return lines
}

extension DeviceConfig.Keypad {
    /// The keypad of the desktop flow, when the configuration file enables none: the defaults, a
    /// code made on the device of `keypad.code.length` digits (6) in a field of that length, and a
    /// door output pulsed for the default time.
    public static var desktop: DeviceConfig.Keypad {
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        keypad.code.source = .device
        keypad.entry.minLength = keypad.code.length
        keypad.entry.maxLength = keypad.code.length
        keypad.output.line = "door"
        return keypad
    }

    /// This keypad with the phone as its send command: the program makes the code (its length
    /// fitted to the field) and checks it, unless a scripted verify command (`--mock-verify`)
    /// decides; then the code is the verification service's.
    func withPhone(scriptedVerify: Bool) -> DeviceConfig.Keypad {
        var keypad = self
        keypad.code.source = scriptedVerify ? .verify : .device
        keypad.code.length = min(max(keypad.code.length, keypad.entry.minLength), keypad.entry.maxLength)
        return keypad
    }
}
