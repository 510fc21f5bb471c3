import Glibc
import HAL
import Testing

@testable import HALLinux

/// The kernel's struct input_event on a 64-bit machine (include/uapi/linux/input.h): a timeval,
/// type, code, value, little-endian.
func inputEventBytes(seconds: Int64, microseconds: Int64 = 0, type: UInt16 = 1, code: UInt16, value: Int32) -> [UInt8] {
    func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
    return bytes(seconds) + bytes(microseconds) + bytes(type) + bytes(code) + bytes(value)
}

/// An input device that a test plugs in and out: the device is "there" while a file exists at its
/// path (the by-id link udev makes), and opening it adopts a fresh pipe the test writes events
/// into. Closing the pipe's write end is the unplug (the read then fails like ENODEV).
final class FakeInputDevice {
    let directory = TemporaryDirectory()
    let path: String
    private(set) var pipe: Pipe?
    private(set) var opens = 0
    /// Set: opening fails with it (even when the file is there).
    var openError: HALError?
    /// The key codes down (what EVIOCGKEY says); set: reading them fails with it.
    var keysDown: [UInt16] = []
    var keysDownError: HALError?

    /// `relative` under a fresh temporary directory, e.g. "by-id/usb-keypad-event-kbd".
    init(_ relative: String = "by-id/usb-keypad-event-kbd") {
        path = directory.path + "/" + relative
    }

    func opener(_ path: String) throws(HALError) -> EvdevKeypad {
        if let openError { throw openError }
        guard (try? FileType.target(of: path)) != nil else {
            throw HALError(.notFound, operation: "open " + path, errno: ENOENT)
        }
        let pipe = Pipe()
        self.pipe = pipe
        opens += 1
        let fd = dup(pipe.readEnd)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return EvdevKeypad(adopting: fd, path: path) { () throws(HALError) -> [UInt16] in
            if let error = self.keysDownError { throw error }
            return self.keysDown
        }
    }

    /// udev makes the link (and its directory).
    func plugIn() { directory.write(String(path.dropFirst(directory.path.count + 1)), "") }

    /// The device goes: udev removes the link, the reader sees the device gone.
    func unplug() {
        _ = unlink(path)
        pipe?.closeWriteEnd()
    }

    func press(_ code: UInt16, value: Int32, seconds: Int64) {
        pipe?.write(inputEventBytes(seconds: seconds, code: code, value: value) + inputEventBytes(seconds: seconds, type: 0, code: 0, value: 0))
    }
}

/// Whether `fd` is readable now (poll without waiting): the loop would wake up.
func isPollReadable(_ fd: Int32) -> Bool {
    var entry = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
    return poll(&entry, 1, 0) > 0
}

/// A keypad opened on a plugged fake device that was then unplugged, the unplug already serviced
/// (the keypad is offline and watches for the device's return).
private func keypadAfterUnplug() throws -> (fake: FakeInputDevice, keypad: HotplugEvdevKeypad) {
    let fake = FakeInputDevice()
    fake.plugIn()
    let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
    fake.unplug()
    _ = try keypad.service()
    return (fake, keypad)
}

@Suite("evdev keypad across unplug and replug", .timeLimit(.minutes(1)))
struct EvdevHotplugTests {
    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func keysArriveAsKeyInputsWithTheirKernelTimesAndAutorepeatIsIgnored() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        #expect(keypad.isOnline)
        #expect(keypad.startupError == nil)
        #expect(!isPollReadable(keypad.fileDescriptor), "idle: nothing wakes the loop")
        fake.press(76, value: 1, seconds: 5)  // KEY_KP5 down
        fake.press(76, value: 2, seconds: 6)  // autorepeat
        fake.press(76, value: 0, seconds: 7)  // up
        fake.press(30, value: 1, seconds: 8)  // KEY_A: not a keypad key
        #expect(isPollReadable(keypad.fileDescriptor))
        #expect(
            try keypad.service() == [
                .key(KeyEvent(.digit5, .pressed, at: Instant(nanoseconds: 5_000_000_000))),
                .key(KeyEvent(.digit5, .released, at: Instant(nanoseconds: 7_000_000_000))),
            ])
        #expect(!isPollReadable(keypad.fileDescriptor), "consumed")
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func anUnpluggedDeviceReleasesTheKeysStillHeldAndGoesOffline() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        fake.press(2, value: 1, seconds: 1)  // KEY_1 down and held
        fake.press(0x20b, value: 1, seconds: 1)  // KEY_NUMERIC_POUND down
        fake.press(0x20b, value: 0, seconds: 2)  // and up
        _ = try keypad.service()
        #expect(keypad.heldKeys == [.digit1])
        let before = SystemClock().now()
        fake.unplug()
        #expect(isPollReadable(keypad.fileDescriptor))
        let inputs = try keypad.service()
        #expect(inputs.count == 2)
        guard inputs.count == 2, case .key(let release) = inputs[0] else {
            Issue.record("expected a release first: \(inputs)")
            return
        }
        #expect(release.key == .digit1 && release.edge == .released)
        #expect(release.at >= before, "released at the time the unplug was seen")
        #expect(inputs[1] == .inputDevice(.offline(path: fake.path, error: HALError(.notFound, operation: "read " + fake.path, errno: ENODEV))))
        #expect(!keypad.isOnline)
        #expect(keypad.heldKeys.isEmpty)
        #expect(!isPollReadable(keypad.fileDescriptor), "away: nothing wakes the loop")
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aReplugTakesTheDeviceBackAndItsKeysArriveAgain() throws {
        let (fake, keypad) = try keypadAfterUnplug()
        #expect(!keypad.isOnline)
        fake.plugIn()
        #expect(isPollReadable(keypad.fileDescriptor), "the link's return wakes the loop")
        #expect(try keypad.service() == [.inputDevice(.online(path: fake.path, name: nil))])
        #expect(keypad.isOnline)
        #expect(fake.opens == 2)
        fake.press(11, value: 1, seconds: 9)  // KEY_0
        #expect(try keypad.service() == [.key(KeyEvent(.digit0, .pressed, at: Instant(nanoseconds: 9_000_000_000)))])
        // Online again, the directory is no longer watched: other files there wake nothing.
        fake.directory.write("by-id/another-device", "")
        #expect(try keypad.service() == [])
        #expect(!isPollReadable(keypad.fileDescriptor))
    }

    @Test func aDeviceMissingAtStartStartsOfflineSaysSoOnceAndIsTakenWhenItAppears() throws {
        let fake = FakeInputDevice("usb-keypad-event-kbd")
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        let missing = HALError(.notFound, operation: "open " + fake.path, errno: ENOENT)
        #expect(!keypad.isOnline)
        #expect(keypad.startupError == missing)
        #expect(isPollReadable(keypad.fileDescriptor), "the start notice")
        #expect(try keypad.service() == [.inputDevice(.offline(path: fake.path, error: missing))])
        #expect(!isPollReadable(keypad.fileDescriptor), "said once; then nothing wakes the loop")
        fake.directory.write("something-else", "")
        #expect(try keypad.service() == [], "another file: still missing, quiet")
        fake.plugIn()
        #expect(try keypad.service() == [.inputDevice(.online(path: fake.path, name: nil))])
        #expect(keypad.isOnline)
    }

    @Test func theDirectoryItselfMissingIsWatchedFromTheNearestParentDownwards() throws {
        // udev removes /dev/input/by-id when its last link goes.
        let fake = FakeInputDevice("input/by-id/usb-keypad-event-kbd")
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        _ = try keypad.service()
        #expect(HotplugEvdevKeypad.nearestDirectory(of: fake.path) == fake.directory.path)
        #expect(mkdir(fake.directory.path + "/input", 0o755) == 0)
        #expect(try keypad.service() == [])
        #expect(mkdir(fake.directory.path + "/input/by-id", 0o755) == 0)
        #expect(try keypad.service() == [])
        fake.plugIn()
        #expect(try keypad.service() == [.inputDevice(.online(path: fake.path, name: nil))])
        // Unplugged again, and the directory goes too; then both come back.
        fake.unplug()
        _ = try keypad.service()
        #expect(rmdir(fake.directory.path + "/input/by-id") == 0)
        _ = try keypad.service()
        #expect(!isPollReadable(keypad.fileDescriptor))
        fake.plugIn()
        #expect(isPollReadable(keypad.fileDescriptor))
        var inputs = try keypad.service()
        if inputs.isEmpty { inputs = try keypad.service() }
        #expect(inputs == [.inputDevice(.online(path: fake.path, name: nil))])
    }

    @Test func aDifferentFailureOnReplugIsSaidOnceAndTheNextAttemptMayStillSucceed() throws {
        let (fake, keypad) = try keypadAfterUnplug()
        let denied = HALError(.permission, operation: "open " + fake.path, errno: EACCES)
        fake.openError = denied
        fake.plugIn()
        #expect(try keypad.service() == [.inputDevice(.offline(path: fake.path, error: denied))])
        // udev then sets the node's group and mode (IN_ATTRIB): the same failure is not repeated.
        #expect(chmod(fake.path, 0o600) == 0)
        #expect(try keypad.service() == [])
        fake.openError = nil
        #expect(chmod(fake.path, 0o660) == 0)
        #expect(try keypad.service() == [.inputDevice(.online(path: fake.path, name: nil))])
    }

    @Test func anotherReadErrorAlsoTakesTheDeviceOfflineInsteadOfStoppingTheLoop() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        fake.press(3, value: 1, seconds: 1)
        _ = unlink(fake.path)  // so that the attempt right after finds nothing
        let (inputs, unused) = try Syscall.withScript([.passThrough, .fail(EIO)]) { try keypad.service() }
        #expect(unused == 0)
        #expect(inputs.last == .inputDevice(.offline(path: fake.path, error: HALError(.io, operation: "read " + fake.path, errno: EIO))))
        #expect(!keypad.isOnline)
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aKeyStillHeldWhenTheDeviceIsBackIsPressedAgainAndItsReleaseCounts() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        fake.press(55, value: 1, seconds: 1)  // KEY_KPASTERISK down, held on
        _ = try keypad.service()
        fake.unplug()
        _ = try keypad.service()
        #expect(keypad.heldKeys.isEmpty, "released at the unplug")
        fake.keysDown = [55]  // still held when it comes back
        let before = SystemClock().now()
        fake.plugIn()
        let inputs = try keypad.service()
        #expect(inputs.count == 2)
        #expect(inputs.first == .inputDevice(.online(path: fake.path, name: nil)))
        guard inputs.count == 2, case .key(let press) = inputs[1] else {
            Issue.record("expected the held key's press after online: \(inputs)")
            return
        }
        #expect(press.key == .star && press.edge == .pressed)
        #expect(press.at >= before, "pressed at the time of the open")
        #expect(keypad.heldKeys == [.star])
        fake.press(55, value: 0, seconds: 1_000_000)
        #expect(try keypad.service() == [.key(KeyEvent(.star, .released, at: Instant(nanoseconds: 1_000_000 * 1_000_000_000)))])
        #expect(keypad.heldKeys.isEmpty)
    }

    @Test func keysDownAtStartArePressedWithTheFirstService() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        fake.keysDown = [2]  // KEY_1
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        #expect(isPollReadable(keypad.fileDescriptor), "what the open found wakes the loop once")
        let inputs = try keypad.service()
        #expect(inputs.count == 1)
        if case .key(let press)? = inputs.first {
            #expect(press.key == .digit1 && press.edge == .pressed)
        } else {
            Issue.record("expected a press: \(inputs)")
        }
        #expect(!isPollReadable(keypad.fileDescriptor))
        #expect(keypad.heldKeys == [.digit1])
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func droppedEventsAreMadeUpAndSaidForTheLog() throws {
        let fake = FakeInputDevice()
        fake.plugIn()
        let keypad = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener)
        fake.press(55, value: 1, seconds: 1)
        _ = try keypad.service()
        fake.keysDown = []
        fake.pipe?.write(inputEventBytes(seconds: 2, type: 0, code: 3, value: 0) + inputEventBytes(seconds: 3, type: 0, code: 0, value: 0))
        #expect(
            try keypad.service() == [
                .key(KeyEvent(.star, .released, at: Instant(nanoseconds: 3_000_000_000))),
                .inputDevice(.eventsLost(path: fake.path, changes: 1)),
            ])
        #expect(keypad.heldKeys.isEmpty)
    }

    @Test func keysThatCannotBeReadAtAReplugAreSaidAndTheDeviceIsUsed() throws {
        let (fake, keypad) = try keypadAfterUnplug()
        let failure = HALError(.io, operation: "EVIOCGKEY " + fake.path, errno: EIO)
        fake.keysDownError = failure
        fake.plugIn()
        #expect(
            try keypad.service() == [
                .inputDevice(.online(path: fake.path, name: nil)),
                .inputDevice(.keysUnreadable(path: fake.path, error: failure)),
            ])
        #expect(keypad.isOnline)
    }

    @Test func anyOtherFailureAtStartIsThrown() {
        let fake = FakeInputDevice()
        fake.plugIn()
        fake.openError = HALError(.permission, operation: "open " + fake.path, errno: EACCES)
        let error = thrownError { _ = try HotplugEvdevKeypad(path: fake.path, opener: fake.opener) }
        #expect(error == fake.openError)
    }

    @Test func theRealOpenerRefusesAFileThatIsNotAnInputDevice() throws {
        let directory = TemporaryDirectory()
        directory.write("event0", "")
        let path = directory.path + "/event0"
        let error = thrownError { _ = try HotplugEvdevKeypad(path: path) }
        #expect(error == HALError(.unsupported, operation: "open " + path, errno: ENOTTY))
        #expect(try FileType.target(of: path) == .regular)
        #expect(try FileType.target(of: "/dev/null") == .characterDevice)
        #expect(try FileType.target(of: directory.path + "/none") == nil)
    }

    @Test func parentDirectories() {
        #expect(HotplugEvdevKeypad.parent(of: "/dev/input/by-id/kbd") == "/dev/input/by-id")
        #expect(HotplugEvdevKeypad.parent(of: "/dev/input/by-id/") == "/dev/input")
        #expect(HotplugEvdevKeypad.parent(of: "/event0") == "/")
        #expect(HotplugEvdevKeypad.parent(of: "/") == "/")
        #expect(HotplugEvdevKeypad.parent(of: "event0") == ".")
        #expect(HotplugEvdevKeypad.nearestDirectory(of: "/nonexistent-dir/by-id/kbd") == "/")
    }
}
