/// The keys of a Linux input device (evdev) that mean something to the keypad, by the kernel's key
/// code. The codes are the kernel ABI in include/uapi/linux/input-event-codes.h (KEY_1 = 2 ...
/// KEY_0 = 11, KEY_KP7 = 71 ..., KEY_NUMERIC_0 = 0x200 ...); a table, so an evdev backend and its
/// tests share one mapping.
///
/// Covered: the top-row digits (KEY_0..KEY_9), the numeric keypad (KEY_KP0..KEY_KP9,
/// KEY_KPASTERISK, KEY_KPENTER), the phone-style keys the kernel's matrix-keypad and gpio-keys
/// drivers are usually given in device trees (KEY_NUMERIC_0..9, KEY_NUMERIC_STAR/POUND/A..D), and
/// KEY_BACKSPACE / KEY_ENTER as `*` (delete) and `#` (submit) for USB keypads that send those.
public enum EvdevKeys {
    /// EV_SYN: the event type of the markers between packets of events.
    public static let eventTypeSync: UInt16 = 0x00
    /// EV_KEY: the event type of key events.
    public static let eventTypeKey: UInt16 = 0x01
    /// EV_SYN codes: SYN_REPORT ends a packet (the events since the last one happened at once);
    /// SYN_DROPPED says the reader's buffer overflowed and the kernel dropped events before it
    /// (the kernel's Documentation/input/event-codes.rst: "Client should ignore all events up to
    /// and including next SYN_REPORT event and query the device (using EVIOCG* ioctls) to obtain
    /// its current state").
    public static let syncReport: UInt16 = 0
    public static let syncDropped: UInt16 = 3
    /// KEY_MAX (0x2ff): key codes go up to it, so a key bitmap has 0x300 bits.
    public static let keyMax: UInt16 = 0x2ff
    /// `value` of an EV_KEY event: released, pressed, autorepeat (input-event-codes.h / the
    /// kernel's Documentation/input/input.rst, "EV_KEY events take the form KEY_<name> ... value
    /// 0 for release, 1 for press, 2 for autorepeat").
    public static let valueReleased: Int32 = 0
    public static let valuePressed: Int32 = 1
    public static let valueAutorepeat: Int32 = 2

    /// (code, key) pairs, the kernel's name in the comment.
    public static let table: [(code: UInt16, key: Key)] = [
        (2, .digit1), (3, .digit2), (4, .digit3), (5, .digit4), (6, .digit5),  // KEY_1..KEY_5
        (7, .digit6), (8, .digit7), (9, .digit8), (10, .digit9), (11, .digit0),  // KEY_6..KEY_9, KEY_0
        (14, .star),  // KEY_BACKSPACE: delete
        (28, .pound),  // KEY_ENTER: submit
        (55, .star),  // KEY_KPASTERISK
        (71, .digit7), (72, .digit8), (73, .digit9),  // KEY_KP7..KEY_KP9
        (75, .digit4), (76, .digit5), (77, .digit6),  // KEY_KP4..KEY_KP6
        (79, .digit1), (80, .digit2), (81, .digit3),  // KEY_KP1..KEY_KP3
        (82, .digit0),  // KEY_KP0
        (96, .pound),  // KEY_KPENTER
        (0x200, .digit0), (0x201, .digit1), (0x202, .digit2), (0x203, .digit3), (0x204, .digit4),  // KEY_NUMERIC_0..4
        (0x205, .digit5), (0x206, .digit6), (0x207, .digit7), (0x208, .digit8), (0x209, .digit9),  // KEY_NUMERIC_5..9
        (0x20a, .star), (0x20b, .pound),  // KEY_NUMERIC_STAR, KEY_NUMERIC_POUND
        (0x20c, .a), (0x20d, .b), (0x20e, .c), (0x20f, .d),  // KEY_NUMERIC_A..D
    ]

    /// The key for a kernel key code; nil for codes the keypad does not use.
    public static func key(forCode code: UInt16) -> Key? {
        for entry in table where entry.code == code { return entry.key }
        return nil
    }

    /// The key event for one evdev event, or nil when it is not a key the keypad uses: another
    /// event type (EV_SYN, EV_MSC, ...), an unmapped code, or an autorepeat (value 2: holding a
    /// key must not type it again; the flow times holds itself) or any other value.
    public static func keyEvent(type: UInt16, code: UInt16, value: Int32, at time: Instant) -> KeyEvent? {
        guard type == eventTypeKey, let key = key(forCode: code) else { return nil }
        switch value {
        case valuePressed: return KeyEvent(key, .pressed, at: time)
        case valueReleased: return KeyEvent(key, .released, at: time)
        default: return nil
        }
    }
}
