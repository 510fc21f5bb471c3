import Glibc
import HAL
import Testing

@testable import HALLinux

// Codes and markers of include/uapi/linux/input-event-codes.h.
private let keyKPAsterisk: UInt16 = 55
private let keyKP4: UInt16 = 75
private let keyKP5: UInt16 = 76
private let keyKP1: UInt16 = 79
private let keyKP2: UInt16 = 80
private let keyKP3: UInt16 = 81
private let keyX: UInt16 = 45

private func key(_ code: UInt16, _ value: Int32, at seconds: Int64, _ microseconds: Int64 = 0) -> [UInt8] {
    inputEventBytes(seconds: seconds, microseconds: microseconds, code: code, value: value)
}
/// SYN_REPORT: the end of a packet.
private func report(at seconds: Int64, _ microseconds: Int64 = 0) -> [UInt8] {
    inputEventBytes(seconds: seconds, microseconds: microseconds, type: 0, code: 0, value: 0)
}
/// SYN_DROPPED: the kernel threw away what this reader had not read.
private func dropped(at seconds: Int64, _ microseconds: Int64 = 0) -> [UInt8] {
    inputEventBytes(seconds: seconds, microseconds: microseconds, type: 0, code: 3, value: 0)
}
private func at(_ seconds: Int64, _ microseconds: Int64 = 0) -> Instant {
    Instant(nanoseconds: seconds * 1_000_000_000 + microseconds * 1000)
}

/// A device whose events come through a pipe and whose keys down (EVIOCGKEY) the test sets.
private final class FakeKeys {
    let pipe = Pipe()
    var down: [UInt16] = []
    private(set) var reads = 0

    func keypad(path: String = "/dev/input/test") -> EvdevKeypad {
        let fd = dup(pipe.readEnd)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return EvdevKeypad(adopting: fd, path: path) { () throws(HALError) -> [UInt16] in
            self.reads += 1
            return self.down
        }
    }
}

@Suite("evdev keypad: events the kernel dropped (SYN_DROPPED)")
struct EvdevDroppedEventsTests {
    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aLostReleaseIsMadeUpAtTheReportThatEndsTheDrop() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.pipe.write(key(keyKPAsterisk, 1, at: 1) + report(at: 1))
        #expect(try pad.read() == .keys([KeyEvent(.star, .pressed, at: at(1))]))
        #expect(pad.keysDown == [keyKPAsterisk])
        // The release went in the overflow; then the tail of a packet whose start is gone.
        fake.down = []
        fake.pipe.write(dropped(at: 2) + key(keyX, 0, at: 2, 500) + report(at: 2, 500))
        #expect(try pad.read() == .keys([KeyEvent(.star, .released, at: at(2, 500))]))
        #expect(pad.takeNotices() == [.eventsDropped(changes: 1)])
        #expect(pad.keysDown.isEmpty)
        #expect(fake.reads == 1)
        #expect(pad.takeNotices() == [], "taken")
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aLostPressOfAKeyStillDownIsMadeUpAndItsReleaseThenCounts() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.down = [keyKP5]
        fake.pipe.write(dropped(at: 3) + report(at: 3, 10))
        #expect(try pad.read() == .keys([KeyEvent(.digit5, .pressed, at: at(3, 10))]))
        #expect(pad.takeNotices() == [.eventsDropped(changes: 1)])
        fake.pipe.write(key(keyKP5, 0, at: 4) + report(at: 4))
        #expect(try pad.read() == .keys([KeyEvent(.digit5, .released, at: at(4))]))
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func eventsFromTheDropUpToTheNextReportAreDiscardedAndLaterPacketsDelivered() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.down = []
        fake.pipe.write(
            dropped(at: 5)
                + key(keyKP1, 1, at: 5) + key(keyKP1, 0, at: 5) + key(keyKP2, 1, at: 5)  // discarded
                + report(at: 5)
                + key(keyKP3, 1, at: 6) + report(at: 6) + key(keyKP3, 0, at: 6, 100) + report(at: 6, 100))
        #expect(
            try pad.read()
                == .keys([
                    KeyEvent(.digit3, .pressed, at: at(6)),
                    KeyEvent(.digit3, .released, at: at(6, 100)),
                ]))
        #expect(pad.takeNotices() == [.eventsDropped(changes: 0)])
        #expect(pad.keysDown.isEmpty)
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aKeyWhosePressWasLostButWhoseReleaseCameAfterTheDropStillTypesOnce() throws {
        // EVIOCGKEY is read after the whole queue: the 4 is up by then. Before its release (read
        // behind the report) it was down: the press is made up at the report.
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.down = []
        fake.pipe.write(dropped(at: 7) + report(at: 7) + key(keyKP4, 0, at: 7, 300) + report(at: 7, 300))
        #expect(
            try pad.read()
                == .keys([
                    KeyEvent(.digit4, .pressed, at: at(7)),
                    KeyEvent(.digit4, .released, at: at(7, 300)),
                ]))
        #expect(pad.takeNotices() == [.eventsDropped(changes: 1)])
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aPressReadAfterTheKeysWereReadIsNotDeliveredTwice() throws {
        // A press that came between the last read and EVIOCGKEY: made up at the report, then read.
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.down = [keyKP2]
        fake.pipe.write(dropped(at: 8) + report(at: 8))
        #expect(try pad.read() == .keys([KeyEvent(.digit2, .pressed, at: at(8))]))
        fake.pipe.write(key(keyKP2, 1, at: 8, 1) + report(at: 8, 1) + key(keyKP2, 0, at: 9) + report(at: 9))
        #expect(try pad.read() == .keys([KeyEvent(.digit2, .released, at: at(9))]))
        #expect(pad.keysDown.isEmpty)
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func aDropWhoseReportComesInALaterReadIsDiscardedUntilThen() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.pipe.write(key(keyKPAsterisk, 1, at: 1) + report(at: 1))
        _ = try pad.read()
        fake.down = [keyKP1]
        fake.pipe.write(dropped(at: 2) + key(keyKP3, 1, at: 2))
        #expect(try pad.read() == .keys([]))
        #expect(fake.reads == 0, "the keys are read at the report, not before")
        fake.pipe.write(key(keyKP3, 0, at: 2) + report(at: 2, 40))
        #expect(
            try pad.read()
                == .keys([
                    KeyEvent(.star, .released, at: at(2, 40)),
                    KeyEvent(.digit1, .pressed, at: at(2, 40)),
                ]))
        #expect(pad.keysDown == [keyKP1])
        #expect(pad.takeNotices() == [.eventsDropped(changes: 2)])
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func twoDropsInOneReadAreMadeUpOnceAfterTheLast() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.pipe.write(key(keyKPAsterisk, 1, at: 1) + report(at: 1))
        _ = try pad.read()
        fake.down = []
        fake.pipe.write(dropped(at: 2) + report(at: 2) + key(keyKP3, 1, at: 3) + report(at: 3) + dropped(at: 4) + report(at: 4, 5))
        #expect(
            try pad.read()
                == .keys([
                    KeyEvent(.digit3, .pressed, at: at(3)),
                    KeyEvent(.star, .released, at: at(4, 5)),
                    KeyEvent(.digit3, .released, at: at(4, 5)),
                ]))
        #expect(fake.reads == 1)
        #expect(pad.takeNotices() == [.eventsDropped(changes: 2)])
    }

    @Test(.enabled(if: MemoryLayout<Int>.size == 8, "the byte layout is the 64-bit one"))
    func whenTheKeysCannotBeReadThatIsReportedAndTheEventsGoOn() throws {
        let pipe = Pipe()
        let fd = dup(pipe.readEnd)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let pad = EvdevKeypad(adopting: fd, path: "/dev/input/test", keysDown: nil)  // the real EVIOCGKEY
        pipe.write(key(keyKPAsterisk, 1, at: 1) + report(at: 1))
        _ = try pad.read()
        pipe.write(dropped(at: 2) + report(at: 2) + key(keyKP3, 1, at: 3) + report(at: 3))
        let (read, unused) = try Syscall.withScript([.passThrough, .fail(EIO)]) { try pad.read() }
        #expect(unused == 0)
        #expect(read == .keys([KeyEvent(.digit3, .pressed, at: at(3))]))
        #expect(pad.takeNotices() == [.keysUnreadable(HALError(.io, operation: "EVIOCGKEY /dev/input/test", errno: EIO))])
        #expect(pad.keysDown == [keyKPAsterisk, keyKP3], "as the events said")
        // A pipe is no input device: the real ioctl says so.
        #expect(thrownError { _ = try pad.keyState() } == HALError(.unsupported, operation: "EVIOCGKEY /dev/input/test", errno: ENOTTY))
    }

    @Test func synchronizingAfterAnOpenPressesTheKeysDownAndReleasesTheOnesNoLongerDown() throws {
        let fake = FakeKeys()
        let pad = fake.keypad()
        fake.down = [keyKP5, keyKPAsterisk]
        #expect(
            try pad.synchronize(at: at(10)) == [
                EvdevKeypad.KeyCode(code: keyKPAsterisk, value: 1, at: at(10)),
                EvdevKeypad.KeyCode(code: keyKP5, value: 1, at: at(10)),
            ])
        fake.down = [keyKP5]
        #expect(try pad.synchronize(at: at(11)) == [EvdevKeypad.KeyCode(code: keyKPAsterisk, value: 0, at: at(11))])
        #expect(try pad.synchronize(at: at(12)) == [])
        #expect(pad.keysDown == [keyKP5])
    }

    @Test func keyBitmapsAreReadBitByBit() {
        #expect(EvdevKeypad.codes(in: [0b0000_0100, 0, 0, 0, 0, 0, 0b1000_0000][...]) == [2, 55])
        #expect(EvdevKeypad.codes(in: [][...]) == [])
    }
}
