import Glibc
import HAL
import ResendCore
import Testing

@testable import HALLinux
@testable import ResendApp
@testable import ResendConfig
@testable import ResendDevice
@testable import ResendSimulator

/// A temporary directory standing in for /dev/input/by-id: a file at `path` is the device's link;
/// opening it adopts a pipe the test writes struct input_event records into (64-bit layout).
private final class PluggableKeypad {
    let directory: String
    let path: String
    var pipe: (read: Int32, write: Int32)?
    var openError: HALError?

    init() {
        var template = Array("/tmp/resend-evdev-XXXXXX".utf8CString)
        precondition(mkdtemp(&template) != nil, "mkdtemp failed")
        directory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        path = directory + "/usb-keypad-event-kbd"
    }

    deinit {
        closePipe()
        _ = unlink(path)
        _ = rmdir(directory)
    }

    func plugIn() {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        precondition(fd >= 0)
        _ = close(fd)
    }

    func unplug() {
        _ = unlink(path)
        if let pipe { _ = close(pipe.write) }
        pipe = pipe.map { ($0.read, -1) }
    }

    func closePipe() {
        if let pipe {
            _ = close(pipe.read)
            if pipe.write >= 0 { _ = close(pipe.write) }
        }
        pipe = nil
    }

    func opener(_ path: String) throws(HALError) -> EvdevKeypad {
        if let openError { throw openError }
        guard access(path, F_OK) == 0 else { throw HALError(.notFound, operation: "open " + path, errno: ENOENT) }
        closePipe()
        var fds: [Int32] = [-1, -1]
        precondition(Glibc.pipe(&fds) == 0)
        pipe = (fds[0], fds[1])
        let fd = dup(fds[0])
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return EvdevKeypad(adopting: fd, path: path)
    }

    /// One EV_KEY event and its EV_SYN, at `seconds` on the monotonic clock.
    func key(_ code: UInt16, _ value: Int32, seconds: Int64) {
        func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        let event = bytes(seconds) + bytes(Int64(0)) + bytes(UInt16(1)) + bytes(code) + bytes(value)
        let sync = bytes(seconds) + bytes(Int64(0)) + bytes(UInt16(0)) + bytes(UInt16(0)) + bytes(Int32(0))
        let all = event + sync
        guard let pipe else { return }
        precondition(write(pipe.write, all, all.count) == all.count)
    }
}

private func evdevKeypad(_ path: String?) -> DeviceConfig.Keypad {
    var keypad = DeviceConfig.Keypad()
    keypad.enabled = true
    keypad.backend = .evdev
    keypad.device = path
    return keypad
}

private func seconds(_ s: Int64) -> Instant { Instant(nanoseconds: s * 1_000_000_000) }

@Suite("run's evdev keypad", .timeLimit(.minutes(1)))
struct KeypadEvdevTests {
    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func keysOfANumericKeypadReachTheLoopAsKeyInputsAndAutorepeatIsIgnored() throws {
        let pad = PluggableKeypad()
        pad.plugIn()
        var source = try LinuxEventSource(button: nil)
        let attachment = try EvdevKeypadAttachment(evdevKeypad(pad.path), source: &source, opener: pad.opener)
        #expect(attachment.summary == "evdev " + pad.path)
        #expect(try source.wait(until: .origin) == [], "idle: nothing pending")
        pad.key(79, 1, seconds: 1)  // KEY_KP1
        pad.key(79, 2, seconds: 2)  // autorepeat
        pad.key(79, 0, seconds: 3)
        pad.key(55, 1, seconds: 4)  // KEY_KPASTERISK
        pad.key(96, 1, seconds: 5)  // KEY_KPENTER
        pad.key(0x20c, 1, seconds: 6)  // KEY_NUMERIC_A
        pad.key(30, 1, seconds: 7)  // KEY_A: no keypad key
        #expect(
            try source.wait(until: SystemClock().now() + .seconds(10)) == [
                .key(KeyEvent(.digit1, .pressed, at: seconds(1))),
                .key(KeyEvent(.digit1, .released, at: seconds(3))),
                .key(KeyEvent(.star, .pressed, at: seconds(4))),
                .key(KeyEvent(.pound, .pressed, at: seconds(5))),
                .key(KeyEvent(.a, .pressed, at: seconds(6))),
            ])
        withExtendedLifetime(attachment) {}
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func unplugReleasesTheHeldKeyAndReplugResumes() throws {
        let pad = PluggableKeypad()
        pad.plugIn()
        var source = try LinuxEventSource(button: nil)
        let attachment = try EvdevKeypadAttachment(evdevKeypad(pad.path), source: &source, opener: pad.opener)
        pad.key(0x205, 1, seconds: 1)  // KEY_NUMERIC_5 held
        #expect(try source.wait(until: SystemClock().now() + .seconds(10)) == [.key(KeyEvent(.digit5, .pressed, at: seconds(1)))])
        pad.unplug()
        let gone = try source.wait(until: SystemClock().now() + .seconds(10))
        #expect(gone.count == 2)
        if case .key(let release)? = gone.first {
            #expect(release.key == .digit5 && release.edge == .released)
        } else {
            Issue.record("the held key was not released: \(gone)")
        }
        let unplugged = HALError(.notFound, operation: "read " + pad.path, errno: ENODEV)
        #expect(gone.last == .inputDevice(.offline(path: pad.path, error: unplugged)))
        #expect(try source.wait(until: .origin) == [], "away: nothing pending, no timer")
        pad.plugIn()
        #expect(try source.wait(until: SystemClock().now() + .seconds(10)) == [.inputDevice(.online(path: pad.path, name: nil))])
        pad.key(2, 1, seconds: 8)  // KEY_1
        #expect(try source.wait(until: SystemClock().now() + .seconds(10)) == [.key(KeyEvent(.digit1, .pressed, at: seconds(8)))])
        withExtendedLifetime(attachment) {}
    }

    @Test func aDeviceMissingAtStartStartsWithoutKeysLogsItAndIsTakenWhenItAppears() throws {
        let pad = PluggableKeypad()
        var source = try LinuxEventSource(button: nil)
        let attachment = try EvdevKeypadAttachment(evdevKeypad(pad.path), source: &source, opener: pad.opener)
        #expect(attachment.summary == "evdev \(pad.path) offline")
        let missing = HALError(.notFound, operation: "open " + pad.path, errno: ENOENT)
        let first = try source.wait(until: SystemClock().now() + .seconds(10))
        #expect(first == [.inputDevice(.offline(path: pad.path, error: missing))])
        #expect(
            logRecord(for: .keypad(.offline(path: pad.path, error: missing)), at: .origin)?.plainText
                == "keypad offline device=\(pad.path) op=\"open \(pad.path)\" error=\"ENOENT (2): no such file or directory\"")
        #expect(try source.wait(until: .origin) == [])
        pad.plugIn()
        #expect(try source.wait(until: SystemClock().now() + .seconds(10)) == [.inputDevice(.online(path: pad.path, name: nil))])
        withExtendedLifetime(attachment) {}
    }

    @Test func theKeypadsComingsAndGoingsAreLoggedWithTheDevicePath() {
        let gone = HALError(.notFound, operation: "read /dev/input/by-id/usb-kp-event-kbd", errno: ENODEV)
        let offline = logRecord(for: .keypad(.offline(path: "/dev/input/by-id/usb-kp-event-kbd", error: gone)), at: .origin)
        #expect(
            offline.map { LogFormat.plain.line($0, seconds: .seconds(3)) }
                == #"3.000 keypad offline device=/dev/input/by-id/usb-kp-event-kbd op="read /dev/input/by-id/usb-kp-event-kbd" error="ENODEV (19): no such device""#
        )
        let online = logRecord(for: .keypad(.online(path: "/dev/input/by-id/usb-kp-event-kbd", name: "USB Keypad")), at: .origin)
        #expect(
            online.map { LogFormat.json.line($0, seconds: .seconds(4)) }
                == #"{"t":4.000,"event":"keypad_online","device":"/dev/input/by-id/usb-kp-event-kbd","name":"USB Keypad"}"#)
    }

    @Test func lostEventsAndUnreadableKeysAreLoggedWithTheDevicePathAndNoKey() {
        let lost = logRecord(for: .keypad(.eventsLost(path: "/dev/input/by-id/usb-kp-event-kbd", changes: 2)), at: .origin)
        #expect(
            lost.map { LogFormat.plain.line($0, seconds: .seconds(5)) }
                == "5.000 keypad events lost device=/dev/input/by-id/usb-kp-event-kbd changes=2")
        let failure = HALError(.io, operation: "EVIOCGKEY /dev/input/by-id/usb-kp-event-kbd", errno: EIO)
        let unreadable = logRecord(for: .keypad(.keysUnreadable(path: "/dev/input/by-id/usb-kp-event-kbd", error: failure)), at: .origin)
        #expect(
            unreadable.map { LogFormat.plain.line($0, seconds: .seconds(6)) }
                == #"6.000 keypad keys unreadable device=/dev/input/by-id/usb-kp-event-kbd op="EVIOCGKEY /dev/input/by-id/usb-kp-event-kbd" error="EIO (5): input/output error on the bus or device""#
        )
    }

    @Test func noPermissionIsExit77NamingTheDeviceAndTheInputGroup() {
        let pad = PluggableKeypad()
        pad.plugIn()
        pad.openError = HALError(.permission, operation: "open " + pad.path, errno: EACCES)
        var source = try! LinuxEventSource(button: nil)
        let error = exitError { () throws(ExitError) in _ = try EvdevKeypadAttachment(evdevKeypad(pad.path), source: &source, opener: pad.opener) }
        #expect(error?.code == .noPermission)
        #expect(
            error?.message.hasPrefix("run: keypad.device '\(pad.path)': open \(pad.path): EACCES (13): permission denied; add the user to group ")
                == true)
        #expect(error?.message.contains("SupplementaryGroups=") == true)
        #expect(error?.message.contains("\n") == false)
    }

    @Test func aPathThatIsNotACharacterDeviceIsOneClearLine() {
        let pad = PluggableKeypad()
        pad.plugIn()
        var source = try! LinuxEventSource(button: nil)
        let file = exitError { () throws(ExitError) in _ = try EvdevKeypadAttachment(evdevKeypad(pad.path), source: &source) }
        #expect(file?.code == .config)
        #expect(
            file?.message
                == "run: keypad.device '\(pad.path)': is a regular file, not a character device; allowed: an input device such as /dev/input/by-id/usb-...-event-kbd or /dev/input/eventN (ls -l /dev/input/by-id /dev/input/by-path)"
        )
        let directory = exitError { () throws(ExitError) in _ = try EvdevKeypadAttachment(evdevKeypad(pad.directory), source: &source) }
        #expect(directory?.message.contains("is a directory, not a character device") == true)
        let null = exitError { () throws(ExitError) in _ = try EvdevKeypadAttachment(evdevKeypad("/dev/null"), source: &source) }
        #expect(null?.code == .config)
        #expect(
            null?.message.hasPrefix(
                "run: keypad.device '/dev/null': open /dev/null: ENOTTY (25): not supported by this device: a character device, but not an input event device"
            ) == true)
    }

    @Test func noDeviceConfiguredIsAConfigError() {
        var source = try! LinuxEventSource(button: nil)
        let error = exitError { () throws(ExitError) in _ = try EvdevKeypadAttachment(evdevKeypad(nil), source: &source) }
        #expect(error?.code == .config)
        #expect(error?.message.hasPrefix("keypad.device: is null") == true)
    }
}
