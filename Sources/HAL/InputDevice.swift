/// An input device (an evdev keypad) came or went: what the loop logs as `keypad offline` and
/// `keypad online`. Keys held when it went were released first (as `.key` inputs).
public enum InputDeviceEvent: Hashable, Sendable {
    /// The device at `path` is gone (unplugged: ENODEV) or was missing at start (`error` says
    /// which); the program goes on without its keys and takes it back when it returns.
    case offline(path: String, error: HALError)
    /// The device at `path` is open (and taken exclusively) again; `name` as the kernel calls it.
    case online(path: String, name: String?)
}
