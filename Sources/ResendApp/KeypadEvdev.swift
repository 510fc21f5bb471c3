import HAL
import HALLinux

/// `run`'s evdev keypad (`keypad.backend: "evdev"`): the input device `keypad.device`, taken
/// exclusively, its keys delivered to the loop as `.key` inputs through `LinuxEventSource`.
/// Lives as long as the loop (the caller keeps it). Not wired yet: `run` refuses the backend.
final class EvdevKeypadAttachment {
    /// For the `started` line, e.g. `evdev /dev/input/by-path/...`.
    let summary: String

    /// Opens `keypad.device` and registers it with `source`.
    init(_ keypad: DeviceConfig.Keypad, source: inout LinuxEventSource) throws(ExitError) {
        throw ExitError(.config, "keypad.backend \"evdev\": run does not drive an input device yet")
    }
}
