import HAL
import HALMock
import ResendCore

// The desktop flow of the interactive simulator: the code "arrives" as an SMS on a simulated phone
// drawn beside the LCD, the person types it on the keypad keys, the door output pulses. The phone
// is the send service's receiver: it gets the bytes a real send command gets on its standard
// input and shows the message an SMS service would deliver with them.

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

    /// Delivers an SMS with the send command's standard input `input` (the code and a new line):
    /// the text an SMS service would send with it, `Your code: 482913`.
    public func deliver(code input: [UInt8], at now: Instant) {
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

/// The send service of the desktop flow: a send delivers its code to the phone `delay` later and
/// exits 0 then (an SMS service accepting the message). Before the device makes the code itself,
/// the service draws it (`DesktopCode`) and the flow's verifier checks typed codes against it.
public struct PhoneSendService: CommandRunner {
    public let phone: SimulatedPhone
    public let code: DesktopCode
    public let delay: TimeSpan
    private var running: [(sequence: Int, input: [UInt8], due: Instant)] = []

    public init(phone: SimulatedPhone, code: DesktopCode, delay: TimeSpan = .seconds(1)) {
        self.phone = phone
        self.code = code
        self.delay = delay
    }

    public mutating func start(_ request: SendRequest, now: Instant) -> CommandOutcome? {
        running.append((request.sequence, code.draw() + [UInt8(ascii: "\n")], now + delay))
        return nil
    }

    public var nextService: Instant? { running.first?.due }

    public mutating func service(now: Instant) -> [CommandOutcome] {
        var outcomes: [CommandOutcome] = []
        while let first = running.first, first.due <= now {
            running.removeFirst()
            var input = first.input
            phone.deliver(code: input, at: first.due)
            input.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            outcomes.append(CommandOutcome(sequence: first.sequence, ending: .exited(code: 0), duration: delay))
        }
        return outcomes
    }
}

/// The code of the desktop flow, drawn at each send from the system's random source (a resend
/// draws a new one and the old one stops working), checked in constant time. A class, so the send
/// service and the verifier share it.
public final class DesktopCode {
    public let length: Int
    private var digits: [UInt8] = []

    public init(length: Int) { self.length = length }

    /// A new code of `length` ASCII digits, replacing (and overwriting) the previous one.
    func draw() -> [UInt8] {
        forget()
        var generator = SystemRandomNumberGenerator()
        digits = (0..<length).map { _ in UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &generator) }
        return digits
    }

    /// True when `typed` is the current code; the time taken does not depend on where they differ.
    func matches(_ typed: [UInt8]) -> Bool {
        guard !digits.isEmpty, typed.count == digits.count else { return false }
        var difference: UInt8 = 0
        for index in digits.indices { difference |= digits[index] ^ typed[index] }
        return difference == 0
    }

    /// Overwrites the code: nothing matches until the next draw.
    func forget() {
        digits.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        digits = []
    }
}

/// The desktop flow's verifier: the typed code against `DesktopCode`, answered `delay` later with
/// the verify command's exit status (0 accepted, 1 rejected). The typed digits are wiped at once.
public struct DesktopCodeVerifier: CodeVerifier {
    public let code: DesktopCode
    public let delay: TimeSpan
    private var running: [(outcome: CommandOutcome, due: Instant)] = []

    public init(code: DesktopCode, delay: TimeSpan = .milliseconds(300)) {
        self.code = code
        self.delay = delay
    }

    public mutating func start(_ request: VerifyRequest, now: Instant) -> CommandOutcome? {
        var typed = request.code
        let status: Int32 = code.matches(typed.digits) ? 0 : 1
        typed.wipe()
        running.append((CommandOutcome(sequence: request.sequence, ending: .exited(code: status), duration: delay), now + delay))
        return nil
    }

    public var nextService: Instant? { running.first?.due }

    public mutating func service(now: Instant) -> [CommandOutcome] {
        let due = running.prefix { $0.due <= now }.map { $0.outcome }
        running.removeFirst(due.count)
        return due
    }
}

extension DeviceConfig.Keypad {
    /// The length of the desktop flow's code.
    public static let desktopCodeLength = 6

    /// The keypad of the desktop flow, when the configuration file enables none: the defaults,
    /// a code of `desktopCodeLength` digits, and a door output pulsed for the default time.
    public static var desktop: DeviceConfig.Keypad {
        var keypad = DeviceConfig.Keypad()
        keypad.enabled = true
        keypad.entry.minLength = desktopCodeLength
        keypad.entry.maxLength = desktopCodeLength
        keypad.output.line = "door"
        return keypad
    }
}
