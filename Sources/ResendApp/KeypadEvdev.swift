import HAL
import HALLinux
import ResendConfig

/// `run`'s evdev keypad (`keypad.backend: "evdev"`): the input device `keypad.device`, taken
/// exclusively (EVIOCGRAB), its keys delivered to the loop as `.key` inputs through
/// `LinuxEventSource`. Lives as long as the loop (the caller keeps it).
///
/// It survives unplug and replug (`HotplugEvdevKeypad`): keys held at the unplug are released, the
/// loop logs `keypad offline` and, when the device is back and grabbed again, `keypad online`;
/// nothing wakes the process while it is away (inotify, no timer). A device missing at start is
/// not an error: `run` starts without keys (the summary says `offline`, the log `keypad offline`)
/// and takes it when it appears, as it does with an LCD that does not answer at start.
/// Other start-up failures are one line with a sysexits code: no permission 77 (the `input`
/// group), not an input device 78, taken by another program 69.
final class EvdevKeypadAttachment {
    /// For the `started` line, e.g. `evdev /dev/input/by-path/...` (`... offline` when missing).
    let summary: String
    let device: HotplugEvdevKeypad

    /// Opens `keypad.device` and registers it with `source`.
    convenience init(_ keypad: DeviceConfig.Keypad, source: inout LinuxEventSource) throws(ExitError) {
        try self.init(keypad, source: &source, opener: HotplugEvdevKeypad.openGrabbed)
    }

    /// `opener` opens the device (tests hand in pipes).
    init(_ keypad: DeviceConfig.Keypad, source: inout LinuxEventSource, opener: @escaping HotplugEvdevKeypad.Opener) throws(ExitError) {
        guard let path = keypad.device else {
            throw ExitError(
                .config,
                "keypad.device: is null, but keypad.backend is \"evdev\"; allowed: the input device's path, e.g. \"/dev/input/by-id/usb-...-event-kbd\" (see ls -l /dev/input/by-id /dev/input/by-path)"
            )
        }
        do throws(HALError) {
            device = try HotplugEvdevKeypad(path: path, opener: opener)
        } catch {
            throw evdevStartupFailure(error, path: path)
        }
        let device = self.device
        _ = source.register(fileDescriptor: device.fileDescriptor) { () throws(HALError) -> [LoopInput] in try device.service() }
        // A key's level is the device's key state: kept by its events and, after the kernel
        // dropped some (SYN_DROPPED), resynchronised with EVIOCGKEY (`EvdevKeyTracker`).
        source.register { (key: Key) throws(HALError) -> ButtonLevel? in
            ButtonLevel(pressed: device.heldKeys.contains(key), time: SystemClock().now())
        }
        summary = "evdev \(path)" + (device.isOnline ? "" : " offline")
    }
}

/// The one line for an input device that cannot be used at start (not for a missing one, which
/// `run` waits for): `run: keypad.device PATH: <operation>: <errno>; <what to do>`.
func evdevStartupFailure(_ error: HALError, path: String, command: String = "run") -> ExitError {
    let subject = "\(command): keypad.device \(shown(path))"
    switch error.kind {
    case .permission:
        return ExitError(.noPermission, "\(subject): \(error.operation): \(describe(error)); \(inputAccessAdvice(path: path))")
    case .unsupported:
        let type = try? FileType.target(of: path)
        if let type, type != .characterDevice {
            return ExitError(
                .config,
                "\(subject): is \(type.description), not a character device; allowed: an input device such as /dev/input/by-id/usb-...-event-kbd or /dev/input/eventN (ls -l /dev/input/by-id /dev/input/by-path)"
            )
        }
        return ExitError(
            .config,
            "\(subject): \(error.operation): \(describe(error)): a character device, but not an input event device; allowed: a /dev/input/eventN node or a by-id/by-path link ending in -event-kbd (not mouseN, jsN or a tty)"
        )
    case .busy:
        return ExitError(
            .unavailable,
            "\(subject): \(error.operation): \(describe(error)): another program has taken it exclusively; stop that program (another resend-button? sudo systemctl stop resend-button)"
        )
    default:
        return ExitError(startupExitCode(for: error.kind), "\(subject): \(error.operation): \(describe(error))")
    }
}

/// What to do when this user may not open an input device: join the group that owns it (`input`
/// on Raspberry Pi OS and Debian: udev's 50-udev-default.rules, `SUBSYSTEM=="input", GROUP="input"`),
/// and for the service, a drop-in that grants it (the unit allows only GPIO and I2C devices).
func inputAccessAdvice(path: String) -> String {
    var group = "input"
    let node = Discovery.access(path: path)
    if let owner = node.group?.name, owner != "root" { group = owner }
    var advice = "add the user to group \(group): sudo usermod -aG \(group) $USER, then log in again"
    if let standing = node.group, standing.name == group, standing.userIsListed, !standing.processHasGroup {
        advice = "you are in group \(group) but this login session is not yet: log out and in again (or reboot)"
    }
    return advice
        + "; for the service: systemctl edit resend-button, add [Service] SupplementaryGroups=\(group) and DeviceAllow=char-input r (docs/keypad.md: the evdev keypad)"
}
