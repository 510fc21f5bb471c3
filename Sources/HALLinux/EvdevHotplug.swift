import CEvdev
import CLinuxOS
import HAL

/// An evdev keypad that survives being unplugged and plugged in again, for the event loop:
/// register `fileDescriptor` with `LinuxEventSource.register(fileDescriptor:onReadable:)` and
/// call `service()` when it is readable. It returns the keys as `.key` inputs and the device's
/// comings and goings as `.inputDevice` inputs.
///
/// - `fileDescriptor` is an epoll set that stays the same while what is inside changes: the
///   device while it is there, an inotify instance while it is not (and a one-shot notice pipe at
///   start). So the loop registers one descriptor once.
/// - Unplugged (a read fails with ENODEV, drivers/input/evdev.c: evdev_read once `exist` is
///   cleared; poll then says EPOLLHUP | EPOLLERR, evdev_poll), or any other read error: the device
///   is closed, releases are delivered for the keys it still held (at the monotonic time of the
///   read), then `.inputDevice(.offline)`.
/// - While it is away nothing wakes the process periodically: inotify watches the device path's
///   directory (e.g. /dev/input/by-id, where udev creates the link again on replug), or, when
///   that directory is gone too (udev removes an empty by-id directory), the nearest ancestor that
///   exists, moving down as the directories come back. Every event there is an attempt to open the
///   device again (and grab it); success delivers `.inputDevice(.online)`. A failed attempt stays
///   quiet while the device is simply missing, and is reported once when it fails differently (no
///   permission yet: udev sets the node's group just after devtmpfs creates it, which inotify
///   reports as IN_ATTRIB, another attempt).
/// - Missing at start (ENOENT, ENODEV, ENXIO): it starts offline, watching, and the first
///   `service()` reports `.inputDevice(.offline)` (a notice pipe makes the set readable once).
///   Other errors at start (permission, not an input device, grabbed by another program) throw.
///
/// - Events the kernel dropped (this reader fell behind: SYN_DROPPED) are made up for from the
///   keys down (EVIOCGKEY, `EvdevKeyTracker`) and reported as `.inputDevice(.eventsLost)`. After
///   every open, at start and on replug, the keys down are read too: a key already down is
///   pressed then (at the monotonic time of the open), so a key held across an unplug, or held
///   when the program starts, is down as the keypad says, and its release is a release. A
///   failed read is `.inputDevice(.keysUnreadable)`, and the keys go on as the events say.
///
/// Autorepeat is ignored (`EvdevKeys`); event times are the kernel's, on CLOCK_MONOTONIC.
public final class HotplugEvdevKeypad {
    /// Opens the device at a path (the real one: `EvdevKeypad(path:grab:)`; tests adopt pipes).
    public typealias Opener = (String) throws(HALError) -> EvdevKeypad

    public let path: String
    /// The epoll set to poll; readable when `service()` has something to do.
    public let fileDescriptor: Int32
    /// Whether the device is open now.
    public var isOnline: Bool { device != nil }
    /// The device's name (EVIOCGNAME) when it was last opened; nil before or if it has none.
    public private(set) var name: String?
    /// Why it started offline (nil: it was there).
    public private(set) var startupError: HALError?

    private let opener: Opener
    private let inotifyFD: Int32
    private var device: EvdevKeypad?
    private var deviceFD: Int32 = -1
    private var watch: (descriptor: Int32, directory: String)?
    private var held: [Key] = []
    private var reported: HALError?
    private var notice: (read: Int32, write: Int32)?
    /// What the open at start found (keys already down), delivered with the start notice.
    private var pending: [LoopInput] = []
    private let clock = SystemClock()

    /// The real device, grabbed.
    public static func openGrabbed(_ path: String) throws(HALError) -> EvdevKeypad {
        try EvdevKeypad(path: path, grab: true)
    }

    /// Opens `path` with `opener`. A missing device starts offline (see the type); any other
    /// failure to open it is thrown, as are failures to set up epoll or inotify.
    public init(path: String, opener: @escaping Opener = HotplugEvdevKeypad.openGrabbed) throws(HALError) {
        self.path = path
        self.opener = opener
        let epoll = try Syscall.run("epoll_create1") { rb_epoll_create() }
        var inotify: Int32 = -1
        do throws(HALError) {
            inotify = try Syscall.run("inotify_init1") { rb_inotify_open() }
            let watcher = inotify
            _ = try Syscall.run("epoll_ctl add inotify") { rb_epoll_add(epoll, watcher) }
        } catch {
            if inotify >= 0 { _ = CLinuxOS.close(inotify) }
            _ = CLinuxOS.close(epoll)
            throw error
        }
        fileDescriptor = epoll
        inotifyFD = inotify
        // Fully initialised from here: a throw runs deinit, which closes what is open.
        do throws(HALError) {
            pending = try adopt(try opener(path))
        } catch  where HotplugEvdevKeypad.isMissing(error) {
            startupError = error
            reported = error
            try arm()
        }
        if startupError != nil || !pending.isEmpty { try armNotice() }
    }

    /// Makes the epoll set readable once (a pipe with a byte in it), for what start found.
    private func armNotice() throws(HALError) {
        let epoll = fileDescriptor
        var read: Int32 = -1
        var write: Int32 = -1
        _ = try Syscall.run("pipe for the keypad's start notice") { rb_output_pipe(&read, &write) }
        notice = (read, write)
        var byte: UInt8 = 1
        _ = try Syscall.run("write the keypad's start notice") { CLinuxOS.write(write, &byte, 1) }
        _ = try Syscall.run("epoll_ctl add notice pipe") { rb_epoll_add(epoll, read) }
    }

    deinit { closeAll() }

    /// What a readable `fileDescriptor` stands for: keys (releases of held keys first when the
    /// device went), `.inputDevice` changes. Consumes the readiness. Throws only when epoll itself
    /// fails; device and inotify errors become `.inputDevice(.offline)`.
    public func service() throws(HALError) -> [LoopInput] {
        var ready = [Int32](repeating: -1, count: 16)
        let epoll = fileDescriptor
        let count = try Syscall.run("epoll_wait") { rb_epoll_ready(epoll, &ready, 16) }
        var inputs: [LoopInput] = []
        for fd in ready.prefix(Int(count)) {
            if let notice, fd == notice.read {
                closeNotice()
                if let error = startupError, device == nil { inputs.append(.inputDevice(.offline(path: path, error: error))) }
                inputs += pending
                pending = []
            } else if fd == deviceFD, let device {
                inputs += readDevice(device)
            } else if fd == inotifyFD {
                _ = try? Syscall.run("read inotify") { rb_inotify_drain(inotifyFD) }
                if device == nil { inputs += attemptReturn() }
            }
        }
        return inputs
    }

    /// Keys held now (pressed and not yet released), in the order they went down.
    public var heldKeys: [Key] { held }

    // MARK: - Private

    private func readDevice(_ device: EvdevKeypad) -> [LoopInput] {
        let read: EvdevRead
        do throws(HALError) {
            read = try device.read()
        } catch {
            return goOffline(error)
        }
        switch read {
        case .keys(let keys):
            return deliver(keys)
                + device.takeNotices().map { notice in
                    switch notice {
                    case .eventsDropped(let changes): .inputDevice(.eventsLost(path: path, changes: changes))
                    case .keysUnreadable(let error): .inputDevice(.keysUnreadable(path: path, error: error))
                    }
                }
        case .disconnected:
            return goOffline(HALError(.notFound, operation: "read " + path, errno: ENODEV))
        }
    }

    /// The keys as `.key` inputs, noting which are held.
    private func deliver(_ keys: [KeyEvent]) -> [LoopInput] {
        for key in keys {
            if key.isPress {
                if !held.contains(key.key) { held.append(key.key) }
            } else {
                held.removeAll { $0 == key.key }
            }
        }
        return keys.map { .key($0) }
    }

    /// Closes the device, releases its held keys, watches for its return (and tries once at once).
    private func goOffline(_ error: HALError) -> [LoopInput] {
        let now = clock.now()
        var inputs: [LoopInput] = held.map { .key(KeyEvent($0, .released, at: now)) }
        held = []
        dropDevice()
        inputs.append(.inputDevice(.offline(path: path, error: error)))
        reported = error
        return inputs + attemptReturn()
    }

    /// Watches (again: the nearest directory may have changed), then tries to open the device.
    private func attemptReturn() -> [LoopInput] {
        let found: [LoopInput]
        do throws(HALError) {
            try arm()
            found = try adopt(try opener(path))
        } catch {
            // Offline was said already: quiet while it is simply still missing; a failure of
            // another kind (no permission yet, grabbed by another program) is said once.
            if HotplugEvdevKeypad.isMissing(error) || error == reported { return [] }
            reported = error
            return [.inputDevice(.offline(path: path, error: error))]
        }
        reported = nil
        return [.inputDevice(.online(path: path, name: name))] + found
    }

    /// Takes the opened device into the epoll set, then reads its keys down: returns them as
    /// presses (or the failure to read them).
    private func adopt(_ opened: EvdevKeypad) throws(HALError) -> [LoopInput] {
        guard let fd = opened.fileDescriptor else { throw HALError(.notFound, operation: "open " + path, errno: ENODEV) }
        let epoll = fileDescriptor
        _ = try Syscall.run("epoll_ctl add " + path) { rb_epoll_add(epoll, fd) }
        // Gone, it stays open until `dropDevice` took it out of the epoll set: a descriptor
        // closed first would stay in the set if another descriptor shared its open file.
        opened.closesWhenGone = false
        device = opened
        deviceFD = fd
        name = try? opened.name()
        if let watch {
            _ = try? Syscall.run("inotify_rm_watch") { rb_inotify_unwatch(inotifyFD, watch.descriptor) }
            self.watch = nil
        }
        let synchronized: [EvdevKeypad.KeyCode]
        do throws(HALError) {
            synchronized = try opened.synchronize(at: clock.now())
        } catch {
            return [.inputDevice(.keysUnreadable(path: path, error: error))]
        }
        return deliver(synchronized.compactMap { EvdevKeys.keyEvent(type: EvdevKeys.eventTypeKey, code: $0.code, value: $0.value, at: $0.at) })
    }

    private func dropDevice() {
        if let device {
            if let fd = device.fileDescriptor {
                let epoll = fileDescriptor
                _ = try? Syscall.run("epoll_ctl remove " + path) { rb_epoll_remove(epoll, fd) }
            }
            device.close()
        }
        device = nil
        deviceFD = -1
    }

    /// Watches the nearest existing directory on the way to `path` (its own directory when that
    /// exists). Adding a watch for a directory already watched is harmless (the same watch
    /// descriptor); it also re-adds one the kernel dropped because the directory was deleted and
    /// made again. A directory made between the look and the watch is caught by looking again.
    private func arm() throws(HALError) {
        for _ in 0..<16 {
            let directory = HotplugEvdevKeypad.nearestDirectory(of: path)
            let added: Int32
            do throws(HALError) {
                added = try Syscall.run("inotify_add_watch " + directory) { rb_inotify_watch_directory(inotifyFD, directory) }
            } catch  where HotplugEvdevKeypad.isMissing(error) || error.errno == ENOTDIR {
                continue  // it went away meanwhile: look again
            }
            if let watch, watch.descriptor != added {
                _ = try? Syscall.run("inotify_rm_watch") { rb_inotify_unwatch(inotifyFD, watch.descriptor) }
            }
            watch = (added, directory)
            if HotplugEvdevKeypad.nearestDirectory(of: path) == directory { return }
        }
        throw HALError(.io, operation: "watch the directories of " + path + ": they keep changing", errno: 0)
    }

    private func closeNotice() {
        guard let notice else { return }
        let epoll = fileDescriptor
        _ = try? Syscall.run("epoll_ctl remove notice pipe") { rb_epoll_remove(epoll, notice.read) }
        _ = CLinuxOS.close(notice.read)
        _ = CLinuxOS.close(notice.write)
        self.notice = nil
    }

    private func closeAll() {
        dropDevice()
        closeNotice()
        _ = CLinuxOS.close(inotifyFD)
        _ = CLinuxOS.close(fileDescriptor)
    }

    /// Errors that mean "not there (yet)": no such file (ENOENT), a node whose device is gone
    /// (ENODEV, ENXIO).
    public static func isMissing(_ error: HALError) -> Bool {
        error.errno == ENOENT || error.errno == ENODEV || error.errno == ENXIO
    }

    /// The deepest directory among `path`'s ancestors that exists ("/" at worst).
    static func nearestDirectory(of path: String) -> String {
        var directory = parent(of: path)
        while true {
            if (try? FileType.target(of: directory)) == .directory { return directory }
            let up = parent(of: directory)
            if up == directory { return directory }
            directory = up
        }
    }

    /// "/dev/input/by-id" for "/dev/input/by-id/usb-kbd"; "/" for "/x" and "/"; "." for a bare name
    /// and ".".
    static func parent(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == 0 { return "/" }
        return String(decoding: bytes[..<slash], as: UTF8.self)
    }
}

extension FileType {
    /// The type of what `path` leads to, following symbolic links (stat(2)); nil when nothing is
    /// there (ENOENT, a dangling link). Other failures throw.
    public static func target(of path: String) throws(HALError) -> FileType? {
        try statType("stat \(path)") { stat(path, $0) }
    }
}
