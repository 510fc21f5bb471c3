import CharacterLCD
import HAL
import ResendCore

/// The 128x64 OLED as the event loop sees it, beside `LCDDisplay`: frames of text laid out with
/// Unifont (four 16-pixel lines), sent damage-only by the SSD130x driver, and the same healing: a
/// bus error marks it offline (one `.offline` event); it re-probes with a back-off from
/// `firstRetry` doubling to `maxRetry`, and when it answers it gets the full init and the current
/// frame (`.online`).
public struct OLEDDisplay<Bus: I2CBus, Wait: Delay>: FrameDisplay {
    public var oled: SSD130x<Bus, Wait>
    public let font: Unifont
    public private(set) var isOnline = false
    /// The frame the glass should show now (shown or not).
    public private(set) var current: ScreenText?
    private var retryAt: Instant?
    private var backoff: TimeSpan

    public static var firstRetry: TimeSpan { .milliseconds(500) }
    public static var maxRetry: TimeSpan { .seconds(5) }

    public init(oled: SSD130x<Bus, Wait>, font: Unifont) {
        self.oled = oled
        self.font = font
        self.backoff = Self.firstRetry
    }

    /// Initialises the OLED at start-up; a failure leaves it offline, retrying, and is thrown.
    public mutating func start(now: Instant) throws(HALError) {
        do throws(HALError) {
            try oled.initialize()
            isOnline = true
        } catch {
            goOffline(now: now)
            throw error
        }
    }

    /// Starts offline (nothing answered at start-up): the display heals as after a bus error.
    public mutating func startOffline(now: Instant) { goOffline(now: now) }

    /// The glass for `frame`: its lines with trailing spaces dropped (the layout pads to the
    /// column count; on pixels a space is only dark), laid out with the font.
    public func pixels(for frame: ScreenText) -> PixelFrame {
        UnifontText.render(frame.lines.map(trimmedTrailingSpaces), font: font)
    }

    public mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        current = frame
        guard isOnline else { return [] }
        do throws(HALError) {
            try oled.render(pixels(for: frame))
            return []
        } catch {
            goOffline(now: now)
            return [.offline(error)]
        }
    }

    public var nextService: Instant? { isOnline ? nil : retryAt }

    public mutating func service(now: Instant) -> [DisplayEvent] {
        guard !isOnline, let due = retryAt, due <= now else { return [] }
        do throws(HALError) {
            try oled.initialize(showing: current.map(pixels(for:)) ?? PixelFrame())
            isOnline = true
            backoff = Self.firstRetry
            retryAt = nil
            return [.online]
        } catch {
            backoff = min(backoff * 2, Self.maxRetry)
            goOffline(now: now)
            return []
        }
    }

    private mutating func goOffline(now: Instant) {
        isOnline = false
        retryAt = now + backoff
    }
}

/// `line` without its trailing spaces.
private func trimmedTrailingSpaces(_ line: String) -> String {
    var scalars = Array(line.unicodeScalars)
    while scalars.last == " " { scalars.removeLast() }
    var text = ""
    text.unicodeScalars.append(contentsOf: scalars)
    return text
}

/// The display `run` drives: the character LCD or the OLED, chosen by `display.kind`; one type
/// for the loop, without existentials.
public enum DeviceDisplay<Bus: I2CBus, Wait: Delay>: FrameDisplay {
    case lcd(LCDDisplay<PCF8574Backpack<Bus>, Wait>)
    case oled(OLEDDisplay<Bus, Wait>)

    /// Initialises the display at start-up (see `LCDDisplay.start`, `OLEDDisplay.start`).
    public mutating func start(now: Instant) throws(HALError) {
        switch self {
        case .lcd(var display):
            defer { self = .lcd(display) }
            try display.start(now: now)
        case .oled(var display):
            defer { self = .oled(display) }
            try display.start(now: now)
        }
    }

    /// Starts offline: nothing answered at start-up.
    public mutating func startOffline(now: Instant) {
        switch self {
        case .lcd(var display):
            display.startOffline(now: now)
            self = .lcd(display)
        case .oled(var display):
            display.startOffline(now: now)
            self = .oled(display)
        }
    }

    public mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        switch self {
        case .lcd(var display):
            defer { self = .lcd(display) }
            return display.show(frame, now: now)
        case .oled(var display):
            defer { self = .oled(display) }
            return display.show(frame, now: now)
        }
    }

    public var nextService: Instant? {
        switch self {
        case .lcd(let display): return display.nextService
        case .oled(let display): return display.nextService
        }
    }

    public mutating func service(now: Instant) -> [DisplayEvent] {
        switch self {
        case .lcd(var display):
            defer { self = .lcd(display) }
            return display.service(now: now)
        case .oled(var display):
            defer { self = .oled(display) }
            return display.service(now: now)
        }
    }
}
