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
/// - Events the kernel dropped (SYN_DROPPED: this reader fell behind) are made up for from the
///   keys down (EVIOCGKEY), as `EvdevKeyTracker` describes; `takeNotices()` says so for the log.
///   After an open, `synchronize(at:)` does the same for keys already down.
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
    /// The key codes believed down (pressed in what was delivered and not released since), in
    /// the order they went down. Kept across `reopen()`: `synchronize(at:)` then makes up what
    /// changed meanwhile.
    public var keysDown: [UInt16] { tracker.down }

    private var tracker = EvdevKeyTracker()
    private var notices: [EvdevNotice] = []
    /// Reads the codes down now; nil: EVIOCGKEY on the descriptor.
    private let keyStateReader: (() throws(HALError) -> [UInt16])?

    /// Opens `path` (symbolic links followed: the by-path and by-id names are links) and grabs it
    /// when `grab`. Throws `.notFound` for a missing device, `.permission` without access (the
    /// `input` group), `.unsupported` when the file is not an input device, `.busy` when another
    /// program holds the grab.
    public init(path: String, grab: Bool = true) throws(HALError) {
        self.path = path
        self.grabbed = grab
        self.keyStateReader = nil
        self.fileDescriptor = try EvdevKeypad.open(path, grab: grab)
    }

    /// Adopts an open descriptor (tests feed events through a pipe); no grab, no clock set.
    /// `keysDown` stands in for EVIOCGKEY (a pipe has no keys: none are down by default; nil
    /// makes the real call, which a pipe refuses).
    init(adopting descriptor: Int32, path: String, keysDown: (() throws(HALError) -> [UInt16])? = { [] }) {
        self.path = path
        self.grabbed = false
        self.keyStateReader = keysDown
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

    /// Reads what is pending without blocking (all of it: the keys are read again only after it,
    /// when events were dropped). Throws other read errors (EIO, ...).
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

    /// The EV_KEY events pending, unmapped (other event types dropped), with the events made up
    /// for dropped ones (`EvdevKeyTracker`); nil when the device is gone (the descriptor is then
    /// closed, as by `read()`, unless `closesWhenGone` is false). Throws other read errors.
    public func readKeyCodes() throws(HALError) -> [KeyCode]? {
        guard let fd = fileDescriptor else { return nil }
        var pending: [EvdevKeyTracker.Event] = []
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
            for event in events.prefix(Int(count)) where event.type == EvdevKeys.eventTypeKey || event.type == EvdevKeys.eventTypeSync {
                pending.append(EvdevKeyTracker.Event(type: event.type, code: event.code, value: event.value, at: Instant(nanoseconds: event.time_ns)))
            }
            if count < capacity { break }
        }
        let taken = tracker.take(pending) { () throws(HALError) -> [UInt16] in try self.keyState() }
        notices += taken.notices
        return taken.keys
    }

    /// What the reads since the last call noticed besides keys (dropped events, a key state that
    /// could not be read), for the log; oldest first.
    public func takeNotices() -> [EvdevNotice] {
        defer { notices = [] }
        return notices
    }

    /// Reads the keys down (EVIOCGKEY) and makes up the difference against `keysDown`, stamped
    /// `time`: after an open, so that a key already down (held across an unplug, or while the
    /// program was away) is pressed, one no longer down released. Throws when the keys cannot be
    /// read (the keys stay as believed).
    public func synchronize(at time: Instant) throws(HALError) -> [KeyCode] {
        tracker.synchronize(to: try keyState(), at: time)
    }

    /// The key codes down now (EVIOCGKEY), ascending.
    public func keyState() throws(HALError) -> [UInt16] {
        if let keyStateReader { return try keyStateReader() }
        guard let fd = fileDescriptor else { throw HALError(.notFound, operation: "EVIOCGKEY " + path, errno: ENODEV) }
        var bits = [UInt8](repeating: 0, count: (Int(EvdevKeys.keyMax) + 1) / 8)
        let size = Int32(bits.count)
        let filled = try Syscall.run("EVIOCGKEY " + path) { rb_evdev_key_state(fd, &bits, size) }
        return EvdevKeypad.codes(in: bits.prefix(Int(filled)))
    }

    /// The codes whose bits are set in a key bitmap (code N in bit N % 8 of byte N / 8), ascending.
    static func codes(in bits: ArraySlice<UInt8>) -> [UInt16] {
        var codes: [UInt16] = []
        for (index, byte) in bits.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
                codes.append(UInt16(index * 8 + bit))
            }
        }
        return codes
    }

    /// The key codes the device says it can report (EVIOCGBIT(EV_KEY)), ascending.
    public func keyCodes() throws(HALError) -> [UInt16] {
        guard let fd = fileDescriptor else { throw HALError(.notFound, operation: "EVIOCGBIT " + path, errno: ENODEV) }
        var bits = [UInt8](repeating: 0, count: (Int(EvdevKeys.keyMax) + 1) / 8)
        let size = Int32(bits.count)
        let filled = try Syscall.run("EVIOCGBIT " + path) { rb_evdev_key_bits(fd, &bits, size) }
        return EvdevKeypad.codes(in: bits.prefix(Int(filled)))
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
