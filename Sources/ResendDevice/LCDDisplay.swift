import CharacterLCD
import HAL
import ResendCore

/// The LCD as the event loop sees it: shows frames, and heals.
///
/// A bus error marks the display offline (one `.offline` event, not one per frame); the loop and
/// the countdown go on. While offline it re-probes with a back-off from `firstRetry` doubling up to
/// `maxRetry`; when the display answers it gets the full init, its glyphs (the driver re-uploads
/// them) and a repaint of the current frame (`.online`). With `refreshInterval` set it also
/// re-initialises and repaints periodically, against displays that noise knocks out of nibble sync.
public struct LCDDisplay<Port: HD44780Port, Wait: Delay>: FrameDisplay {
    public var lcd: HD44780<Port, Wait>
    public let rom: CharacterROM
    public let refreshInterval: TimeSpan?
    public private(set) var isOnline = false
    /// The frame the screen should show now (shown or not).
    public private(set) var current: ScreenText?
    private var retryAt: Instant?
    private var backoff: TimeSpan
    private var refreshAt: Instant?

    public static var firstRetry: TimeSpan { .milliseconds(500) }
    public static var maxRetry: TimeSpan { .seconds(5) }

    public init(lcd: HD44780<Port, Wait>, rom: CharacterROM, refreshInterval: TimeSpan? = nil) {
        self.lcd = lcd
        self.rom = rom
        self.refreshInterval = refreshInterval
        self.backoff = Self.firstRetry
    }

    /// Initialises the LCD at start-up. A failure here is reported to the caller (which decides
    /// whether a missing display at start is fatal) and leaves the display offline, retrying.
    public mutating func start(now: Instant) throws(HALError) {
        do throws(HALError) {
            try lcd.initialize()
            isOnline = true
            refreshAt = refreshInterval.map { now + $0 }
        } catch {
            goOffline(now: now)
            throw error
        }
    }

    public mutating func show(_ frame: ScreenText, now: Instant) -> [DisplayEvent] {
        current = frame
        guard isOnline else { return [] }
        do throws(HALError) {
            try lcd.render(encode(frame), focus: focus(of: frame))
            return []
        } catch {
            goOffline(now: now)
            return [.offline(error)]
        }
    }

    /// Starts with the display offline (nothing answered at its address at start-up): the first
    /// re-probe comes after `firstRetry`, and the display heals like after a bus error.
    public mutating func startOffline(now: Instant) {
        goOffline(now: now)
    }

    public var nextService: Instant? { isOnline ? refreshAt : retryAt }

    public mutating func service(now: Instant) -> [DisplayEvent] {
        if isOnline {
            guard let due = refreshAt, due <= now else { return [] }
            return reinitialize(now: now, event: .refreshed)
        }
        guard let due = retryAt, due <= now else { return [] }
        return reinitialize(now: now, event: .online)
    }

    private mutating func reinitialize(now: Instant, event: DisplayEvent) -> [DisplayEvent] {
        let wasOnline = isOnline
        do throws(HALError) {
            try lcd.initialize()
            if let current { try lcd.render(encode(current)) }
            isOnline = true
            backoff = Self.firstRetry
            retryAt = nil
            refreshAt = refreshInterval.map { now + $0 }
            return [event]
        } catch {
            if !wasOnline { backoff = min(backoff * 2, Self.maxRetry) }
            goOffline(now: now)
            return wasOnline ? [.offline(error)] : []
        }
    }

    private mutating func goOffline(now: Instant) {
        isOnline = false
        refreshAt = nil
        retryAt = now + backoff
    }

    /// The frame's focus (the key just pressed) for the driver, which writes the changed cells from
    /// there on first; nil when there is none or it is not on this display.
    private func focus(of frame: ScreenText) -> (row: Int, column: Int)? {
        guard let cell = frame.focus, cell.row >= 0, cell.row < lcd.geometry.rows, cell.column >= 0,
            cell.column < lcd.geometry.columns
        else { return nil }
        return (cell.row, cell.column)
    }

    /// Character codes for each line. Texts are checked against the ROM when the configuration is
    /// read; anything that still slips through shows as "?" rather than as a wrong glyph.
    private func encode(_ frame: ScreenText) -> [[UInt8]] {
        frame.lines.map { line in
            do throws(UnsupportedCharacter) {
                return try rom.encode(line)
            } catch {
                return line.unicodeScalars.map { scalar in
                    (try? rom.encode(String(scalar)))?.first ?? Self.questionMark
                }
            }
        }
    }

    private static var questionMark: UInt8 { 0x3F }  // "?" in both ROMs
}
