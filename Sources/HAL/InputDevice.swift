/// An input device (an evdev keypad) came or went, or lost events: what the loop logs as `keypad
/// offline`, `keypad online`, `keypad events lost` and `keypad keys unreadable`. Keys held when it
/// went were released first (as `.key` inputs).
public enum InputDeviceEvent: Hashable, Sendable {
    /// The device at `path` is gone (unplugged: ENODEV) or was missing at start (`error` says
    /// which); the program goes on without its keys and takes it back when it returns.
    case offline(path: String, error: HALError)
    /// The device at `path` is open (and taken exclusively) again; `name` as the kernel calls it.
    case online(path: String, name: String?)
    /// The kernel dropped events of the device at `path` (this reader's buffer overflowed:
    /// SYN_DROPPED); its keys were read again and `changes` key events (releases and presses)
    /// made up the difference, delivered as `.key` inputs before this. Never says which keys.
    case eventsLost(path: String, changes: Int)
    /// The keys down on the device at `path` could not be read (EVIOCGKEY) after lost events or
    /// an open; the keys stay as the events said (a lost release or press is not repaired).
    case keysUnreadable(path: String, error: HALError)
}
