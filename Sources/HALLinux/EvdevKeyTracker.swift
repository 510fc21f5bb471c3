import HAL

/// The keys of one evdev reader as its events said, kept right when the kernel drops events.
///
/// The kernel gives each reader a buffer of whole events (drivers/input/evdev.c: at least 64,
/// `evdev_compute_buffer_size`). When it is full, `__pass_event` throws away everything unread and
/// leaves SYN_DROPPED plus the newest event: a lost release leaves a key "held", a lost press
/// loses it. What libevdev does, done here (the kernel's Documentation/input/event-codes.rst says
/// the same):
/// - From SYN_DROPPED up to and including the next SYN_REPORT every event is discarded (the rest
///   of a packet whose start is gone).
/// - At that SYN_REPORT the keys down are read (EVIOCGKEY) and the difference against the keys
///   believed down is made up: releases first, then presses, in code order.
/// - Stamped with that SYN_REPORT's time (the kernel's, like every event): the state is the
///   state as of that packet (below), a lost change happened at or before it, and the events
///   still queued after it keep their order behind the made-up ones. The debouncer and the
///   entry flow see a lost `*` release at about the time it happened, not when a stalled reader
///   woke up (seconds later: its hold-to-clear would have run out).
/// - EVIOCGKEY says how the keys are now, after the events read behind that SYN_REPORT (the
///   whole pending queue is read before the ioctl). Those events are undone to get the state as
///   of the SYN_REPORT: the kernel passes a key event only when it changes the key
///   (`input_handle_event`), so before a key's first later press it was up, before its first
///   later release down. So a key pressed while the reader stalled, whose press was lost and
///   whose release was not, still types once.
/// - Events that would not change a key as believed (a press of a key down, a release of a key
///   up: an event the ioctl had already counted, read after it) are dropped, so the keys believed
///   down are always the keys the events delivered say are down.
/// - When reading the keys fails, the failure is reported and the events go on as they come.
///
/// A value: no clock, no descriptor; `EvdevKeypad` feeds it the events it read.
struct EvdevKeyTracker {
    /// One event as read from the device.
    struct Event {
        var type: UInt16
        var code: UInt16
        var value: Int32
        var at: Instant
    }

    /// Key codes believed down, in the order they went down.
    private(set) var down: [UInt16] = []
    /// Between a SYN_DROPPED and the next SYN_REPORT (which may come in a later read).
    private(set) var discarding = false

    /// Takes one read's events, in order. `keysDown` reads the codes down now; it is called at
    /// most once, when a drop ends in these events. Returns the key events to deliver (made-up
    /// ones included; autorepeats passed on) and what to log.
    mutating func take(_ events: [Event], keysDown: () throws(HALError) -> [UInt16]) -> (keys: [EvdevKeypad.KeyCode], notices: [EvdevNotice]) {
        var keys: [EvdevKeypad.KeyCode] = []
        var notices: [EvdevNotice] = []
        for (index, event) in events.enumerated() {
            if EvdevKeyTracker.isDrop(event) {
                discarding = true
                continue
            }
            if discarding {
                guard event.type == EvdevKeys.eventTypeSync && event.code == EvdevKeys.syncReport else { continue }
                discarding = false
                let later = events[(index + 1)...]
                // Another drop further on: the state cannot be taken back past it; its resync covers this one.
                if later.contains(where: EvdevKeyTracker.isDrop) { continue }
                let now: [UInt16]
                do throws(HALError) {
                    now = try keysDown()
                } catch {
                    notices.append(.keysUnreadable(error))
                    continue
                }
                let made = synchronize(to: EvdevKeyTracker.state(now, before: later), at: event.at)
                keys += made
                notices.append(.eventsDropped(changes: made.count))
                continue
            }
            guard event.type == EvdevKeys.eventTypeKey else { continue }
            switch event.value {
            case EvdevKeys.valuePressed:
                if down.contains(event.code) { continue }
                down.append(event.code)
            case EvdevKeys.valueReleased:
                guard let position = down.firstIndex(of: event.code) else { continue }
                down.remove(at: position)
            default:
                break
            }
            keys.append(EvdevKeypad.KeyCode(code: event.code, value: event.value, at: event.at))
        }
        return (keys, notices)
    }

    /// Makes the keys believed down `state`: a release for each key down that is not in it, then a
    /// press for each key in it not down (each in code order), stamped `at`.
    mutating func synchronize(to state: [UInt16], at time: Instant) -> [EvdevKeypad.KeyCode] {
        var made: [EvdevKeypad.KeyCode] = []
        for code in down.sorted() where !state.contains(code) {
            made.append(EvdevKeypad.KeyCode(code: code, value: EvdevKeys.valueReleased, at: time))
        }
        down.removeAll { !state.contains($0) }
        for code in state.sorted() where !down.contains(code) {
            made.append(EvdevKeypad.KeyCode(code: code, value: EvdevKeys.valuePressed, at: time))
            down.append(code)
        }
        return made
    }

    /// The codes down before `later` happened, given the codes down after them.
    static func state(_ after: [UInt16], before later: ArraySlice<Event>) -> [UInt16] {
        var state = after
        var seen: [UInt16] = []
        for event in later where event.type == EvdevKeys.eventTypeKey && !seen.contains(event.code) {
            switch event.value {
            case EvdevKeys.valuePressed:
                state.removeAll { $0 == event.code }
            case EvdevKeys.valueReleased:
                if !state.contains(event.code) { state.append(event.code) }
            default:
                continue  // an autorepeat changes nothing: look on for the key's first change
            }
            seen.append(event.code)
        }
        return state
    }

    static func isDrop(_ event: Event) -> Bool {
        event.type == EvdevKeys.eventTypeSync && event.code == EvdevKeys.syncDropped
    }
}

/// What an evdev reader noticed besides keys, for the log.
public enum EvdevNotice: Hashable, Sendable {
    /// The kernel dropped events (SYN_DROPPED); the keys were read again and `changes` key events
    /// made up the difference.
    case eventsDropped(changes: Int)
    /// The keys down could not be read (EVIOCGKEY failed); the keys stay as the events said.
    case keysUnreadable(HALError)
}
