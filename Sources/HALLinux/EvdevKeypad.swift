import CEvdev
import CLinuxOS
import HAL

/// What one read of an input device gave.
public enum EvdevRead: Hashable, Sendable {
    /// The key events pending (maybe none), mapped by `EvdevKeys`; other events are dropped.
    case keys([KeyEvent])
    /// The device is gone (unplugged: ENODEV). The descriptor is closed; `reopen()` when it is
    /// back (the path names it again).
    case disconnected
}

/// A Linux input device (evdev) as a keypad: the kernel's matrix-keypad or gpio-keys driver, or
/// a USB numeric keypad. `run` polls it through `HotplugEvdevKeypad`, which also takes it back
/// after an unplug; `check` lists and tests it.
///
/// - Opened non-blocking and close-on-exec; event times are asked for on CLOCK_MONOTONIC
///   (EVIOCSCLOCKID, drivers/input/evdev.c), the clock everything else is timed on, so they can
///   go straight to the debouncer.
/// - Taken exclusively (EVIOCGRAB) unless told not to, so keys do not also type into a console.
/// - Keys are mapped by `EvdevKeys`; autorepeat (value 2) is ignored.
/// - Unplugged, reads fail with ENODEV (evdev.c: evdev_read once the device no longer exists):
///   `read()` then closes the descriptor and says `.disconnected`; `reopen()` opens the same path
///   again (a /dev/input/by-path or by-id name comes back on replug; an eventN number may not).
public final class EvdevKeypad {
    public let path: String
    public let grabbed: Bool
    /// The open descriptor; nil while disconnected.
    public private(set) var fileDescriptor: Int32?
    /// Whether a read that finds the device gone closes the descriptor (the default); false
    /// leaves that to the owner (`close()`), which must first take it out of its poll set.
    public var closesWhenGone = true

    /// Opens `path` (symbolic links followed: the by-path and by-id names are links) and grabs it
    /// when `grab`. Throws `.notFound` for a missing device, `.permission` without access (the
    /// `input` group), `.unsupported` when the file is not an input device, `.busy` when another
    /// program holds the grab.
    public init(path: String, grab: Bool = true) throws(HALError) {
        self.path = path
        self.grabbed = grab
        self.fileDescriptor = try EvdevKeypad.open(path, grab: grab)
    }

    /// Adopts an open descriptor (tests feed events through a pipe); no grab, no clock set.
    init(adopting descriptor: Int32, path: String) {
        self.path = path
        self.grabbed = false
        self.fileDescriptor = descriptor
    }

    deinit {
        if let fileDescriptor { _ = CLinuxOS.close(fileDescriptor) }
    }

    /// Opens the device again after `.disconnected` (or does nothing while it is open).
    public func reopen() throws(HALError) {
        guard fileDescriptor == nil else { return }
        fileDescriptor = try EvdevKeypad.open(path, grab: grabbed)
    }

    /// Closes the device (the grab ends with it).
    public func close() {
        if let fileDescriptor { _ = CLinuxOS.close(fileDescriptor) }
        fileDescriptor = nil
    }

    /// The device's name as the kernel reports it (EVIOCGNAME), for `check` and the log.
    public func name() throws(HALError) -> String {
        guard let fd = fileDescriptor else { throw HALError(.notFound, operation: "name of " + path, errno: ENODEV) }
        var buffer = [CChar](repeating: 0, count: 256)
        let size = Int32(buffer.count)
        _ = try Syscall.run("EVIOCGNAME " + path) { rb_evdev_name(fd, &buffer, size) }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads what is pending without blocking. Throws other read errors (EIO, ...).
    public func read() throws(HALError) -> EvdevRead {
        guard let raw = try readKeyCodes() else { return .disconnected }
        return .keys(raw.compactMap { EvdevKeys.keyEvent(type: EvdevKeys.eventTypeKey, code: $0.code, value: $0.value, at: $0.at) })
    }

    /// One EV_KEY event as the kernel reported it: any key code, any value (1 pressed, 0 released,
    /// 2 autorepeat), for `check`'s key test, which also names keys the keypad does not use.
    public struct KeyCode: Hashable, Sendable {
        public var code: UInt16
        public var value: Int32
        public var at: Instant

        public init(code: UInt16, value: Int32, at: Instant) {
            self.code = code
            self.value = value
            self.at = at
        }
    }

    /// The EV_KEY events pending, unmapped (other event types dropped); nil when the device is
    /// gone (the descriptor is then closed, as by `read()`, unless `closesWhenGone` is false).
    /// Throws other read errors.
    public func readKeyCodes() throws(HALError) -> [KeyCode]? {
        guard let fd = fileDescriptor else { return nil }
        var keys: [KeyCode] = []
        var events = [rb_input_event](repeating: rb_input_event(), count: 64)
        let capacity = Int32(events.count)
        while true {
            let count: Int32
            do throws(HALError) {
                count = try Syscall.run("read " + path) { rb_evdev_read(fd, &events, capacity) }
            } catch {
                if error.errno == ENODEV {
                    if closesWhenGone { close() }
                    return nil
                }
                throw error
            }
            for event in events.prefix(Int(count)) where event.type == EvdevKeys.eventTypeKey {
                keys.append(KeyCode(code: event.code, value: event.value, at: Instant(nanoseconds: event.time_ns)))
            }
            if count < capacity { return keys }
        }
    }

    /// The key codes the device says it can report (EVIOCGBIT(EV_KEY)), ascending.
    public func keyCodes() throws(HALError) -> [UInt16] {
        guard let fd = fileDescriptor else { throw HALError(.notFound, operation: "EVIOCGBIT " + path, errno: ENODEV) }
        // KEY_MAX is 0x2ff (input-event-codes.h): 0x300 bits.
        var bits = [UInt8](repeating: 0, count: 0x300 / 8)
        let size = Int32(bits.count)
        let filled = try Syscall.run("EVIOCGBIT " + path) { rb_evdev_key_bits(fd, &bits, size) }
        var codes: [UInt16] = []
        for (index, byte) in bits.prefix(Int(filled)).enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                codes.append(UInt16(index * 8 + bit))
            }
        }
        return codes
    }

    /// The keypad's keys among `keyCodes()` (each once, in `Key.all` order).
    public func supportedKeys() throws(HALError) -> [Key] {
        let mapped = Set(try keyCodes().compactMap { EvdevKeys.key(forCode: $0) })
        return Key.all.filter { mapped.contains($0) }
    }

    /// Blocks until an event is pending, the device is gone, or `milliseconds` passed (then false).
    /// For `check`'s key test; the event loop polls `fileDescriptor` itself.
    public func waitReadable(milliseconds: Int32) throws(HALError) -> Bool {
        guard let fd = fileDescriptor else { return true }
        var entry = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        return try Syscall.run("poll " + path) { poll(&entry, 1, milliseconds) } > 0
    }

    private static func open(_ path: String, grab: Bool) throws(HALError) -> Int32 {
        let fd = try Syscall.run("open " + path) { rb_evdev_open(path, 1) }
        if grab {
            do throws(HALError) {
                _ = try Syscall.run("EVIOCGRAB " + path) { rb_evdev_grab(fd, 1) }
            } catch {
                _ = CLinuxOS.close(fd)
                throw error
            }
        }
        return fd
    }
}
