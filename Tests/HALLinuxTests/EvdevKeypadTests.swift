import Glibc
import HAL
import Testing

@testable import HALLinux

/// The kernel's struct input_event on a 64-bit machine (include/uapi/linux/input.h): a timeval
/// (seconds, microseconds; 8 bytes each), type, code (2 bytes each), value (4 bytes), little-endian.
private func inputEvent(seconds: Int64, microseconds: Int64, type: UInt16, code: UInt16, value: Int32) -> [UInt8] {
    func bytes<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
    return bytes(seconds) + bytes(microseconds) + bytes(type) + bytes(code) + bytes(value)
}

/// An `EvdevKeypad` reading the read end of `pipe` (a duplicate, non-blocking).
private func keypad(on pipe: Pipe) -> EvdevKeypad {
    let fd = dup(pipe.readEnd)
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return EvdevKeypad(adopting: fd, path: "/dev/input/test")
}

@Suite("evdev keypad")
struct EvdevKeypadTests {
    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout below is the 64-bit one"))
    func keyEventsAreMappedWithTheirKernelTimesAndAutorepeatIsDropped() throws {
        let pipe = Pipe()
        let pad = keypad(on: pipe)
        #expect(try pad.read() == .keys([]), "nothing pending: no blocking")
        pipe.write(
            inputEvent(seconds: 12, microseconds: 345_678, type: 4, code: 4, value: 0x5d)  // EV_MSC MSC_SCAN
                + inputEvent(seconds: 12, microseconds: 345_678, type: 1, code: 76, value: 1)  // KEY_KP5 down
                + inputEvent(seconds: 12, microseconds: 345_678, type: 0, code: 0, value: 0)  // EV_SYN
                + inputEvent(seconds: 12, microseconds: 600_000, type: 1, code: 76, value: 2)  // autorepeat
                + inputEvent(seconds: 12, microseconds: 700_000, type: 1, code: 76, value: 0)  // KEY_KP5 up
                + inputEvent(seconds: 13, microseconds: 0, type: 1, code: 30, value: 1)  // KEY_A: not a keypad key
                + inputEvent(seconds: 13, microseconds: 1, type: 1, code: 96, value: 1))  // KEY_KPENTER
        let read = try pad.read()
        #expect(
            read
                == .keys([
                    KeyEvent(.digit5, .pressed, at: Instant(nanoseconds: 12_345_678_000)),
                    KeyEvent(.digit5, .released, at: Instant(nanoseconds: 12_700_000_000)),
                    KeyEvent(.pound, .pressed, at: Instant(nanoseconds: 13_000_001_000)),
                ]))
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout below is the 64-bit one"))
    func moreEventsThanOneBatchAreAllRead() throws {
        let pipe = Pipe()
        let pad = keypad(on: pipe)
        var bytes: [UInt8] = []
        for index in 0..<100 {
            bytes += inputEvent(seconds: 1, microseconds: Int64(index), type: 1, code: 2, value: Int32(1 - index % 2))
        }
        pipe.write(bytes)
        guard case .keys(let keys) = try pad.read() else {
            Issue.record("disconnected")
            return
        }
        #expect(keys.count == 100)
        #expect(keys.last == KeyEvent(.digit1, .released, at: Instant(nanoseconds: 1_000_099_000)))
    }

    @Test func anUnpluggedDeviceIsDisconnectedAndClosed() throws {
        let pipe = Pipe()
        let pad = keypad(on: pipe)
        let (read, unused) = try Syscall.withInjectedErrors([ENODEV]) { try pad.read() }
        #expect(read == .disconnected)
        #expect(unused == 0)
        #expect(pad.fileDescriptor == nil)
        #expect(try pad.read() == .disconnected)
    }

    @Test func anotherReadErrorIsThrownAndKeepsTheDevice() {
        let pipe = Pipe()
        let pad = keypad(on: pipe)
        let error = thrownError { _ = try Syscall.withInjectedErrors([EIO]) { try pad.read() } }
        #expect(error == HALError(.io, operation: "read /dev/input/test", errno: EIO))
        #expect(pad.fileDescriptor != nil)
    }

    @Test func aMissingDeviceIsNotFound() {
        let error = thrownError { _ = try EvdevKeypad(path: "/nonexistent/input/event99") }
        #expect(error == HALError(.notFound, operation: "open /nonexistent/input/event99", errno: ENOENT))
    }

    @Test func aFileThatIsNotAnInputDeviceIsUnsupported() {
        let directory = TemporaryDirectory()
        directory.write("event0", "not a device")
        let path = directory.path + "/event0"
        let error = thrownError { _ = try EvdevKeypad(path: path) }
        #expect(error == HALError(.unsupported, operation: "open " + path, errno: ENOTTY))
    }
}
