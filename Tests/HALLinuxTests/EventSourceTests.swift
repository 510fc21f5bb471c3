import Glibc
import HAL
import HALLinux
import Testing

// These tests raise signals at their own thread (raise(3) is thread-directed) after the source has
// blocked them there, so the signal waits in the signalfd: deterministic, no sleeping. Each test is
// synchronous, so it stays on one thread from blocking to reading.
@Suite("the Linux event source", .timeLimit(.minutes(1)))
struct EventSourceTests {
    @Test("a deadline in the past returns at once with nothing")
    func pastDeadline() throws {
        var source = try LinuxEventSource(button: nil)
        let clock = SystemClock()
        let inputs = try source.wait(until: clock.now() - .seconds(1))
        #expect(inputs.isEmpty)
        #expect(try source.wait(until: .origin).isEmpty)
    }

    @Test("a future deadline returns empty, not before the deadline")
    func futureDeadline() throws {
        var source = try LinuxEventSource(button: nil)
        let clock = SystemClock()
        let deadline = clock.now() + .milliseconds(20)
        let inputs = try source.wait(until: deadline)
        #expect(inputs.isEmpty)
        #expect(clock.now() >= deadline)
    }

    @Test("a stop signal is delivered as stop", arguments: [SIGTERM, SIGINT])
    func signalStops(signal: Int32) throws {
        var source = try LinuxEventSource(button: nil)
        #expect(raise(signal) == 0)
        #expect(try source.wait(until: nil) == [.stop])
        // Consumed: nothing is left pending.
        #expect(try source.wait(until: .origin) == [])
    }

    @Test("a pending signal is reported even when the deadline has passed")
    func signalWithPastDeadline() throws {
        var source = try LinuxEventSource(button: nil)
        #expect(raise(SIGTERM) == 0)
        #expect(try source.wait(until: .origin) == [.stop])
    }

    @Test("a readable registered descriptor runs its handler and returns its inputs")
    func registeredDescriptor() throws {
        var source = try LinuxEventSource(button: nil)
        let pipe = Pipe()
        let edge = ButtonEdge(pressed: true, time: Instant(nanoseconds: 42))
        var handled: [UInt8] = []
        let readEnd = pipe.readEnd
        _ = source.register(fileDescriptor: readEnd) { () throws(HALError) -> [LoopInput] in
            var byte: UInt8 = 0
            _ = try Syscall.run("read pipe") { read(readEnd, &byte, 1) }
            handled.append(byte)
            return [.button(edge)]
        }
        // Nothing written yet: the descriptor is not readable.
        #expect(try source.wait(until: .origin) == [])
        #expect(handled.isEmpty)
        pipe.write([7])
        #expect(try source.wait(until: nil) == [.button(edge)])
        #expect(handled == [7])
    }

    @Test("an unregistered descriptor is no longer watched")
    func unregisteredDescriptor() throws {
        var source = try LinuxEventSource(button: nil)
        let pipe = Pipe()
        var calls = 0
        let registration = source.register(fileDescriptor: pipe.readEnd) { () throws(HALError) -> [LoopInput] in
            calls += 1
            return [.stop]
        }
        source.unregister(registration)
        pipe.write([1])
        #expect(try source.wait(until: .origin) == [])
        #expect(calls == 0)
    }
}

@Suite("the terminal keyboard", .timeLimit(.minutes(1)))
struct TerminalKeyboardTests {
    @Test("keys from a pipe arrive byte by byte, then the end of input")
    func keysFromPipe() throws {
        let pipe = Pipe()
        let keyboard = try TerminalKeyboard(fileDescriptor: pipe.readEnd)
        #expect(!keyboard.isTerminal)
        pipe.write([UInt8(ascii: "p"), 3])
        #expect(try keyboard.wait(until: nil) == [.key(UInt8(ascii: "p")), .key(3)])
        #expect(try keyboard.wait(until: .origin) == [])
        pipe.closeWriteEnd()
        #expect(try keyboard.wait(until: nil) == [.endOfInput])
        // After the end only signals and deadlines remain.
        #expect(try keyboard.wait(until: .origin) == [])
    }

    @Test("SIGTERM reaches the keyboard as stop")
    func signalStops() throws {
        let pipe = Pipe()
        let keyboard = try TerminalKeyboard(fileDescriptor: pipe.readEnd)
        #expect(raise(SIGTERM) == 0)
        #expect(try keyboard.wait(until: nil) == [.stop])
    }

    @Test("restoring twice is harmless")
    func restoreTwice() throws {
        let pipe = Pipe()
        let keyboard = try TerminalKeyboard(fileDescriptor: pipe.readEnd)
        try keyboard.restore()
        try keyboard.restore()
    }

    @Test("a pipe has no terminal size")
    func noSizeForPipe() {
        let pipe = Pipe()
        #expect(terminalSize(fileDescriptor: pipe.readEnd) == nil)
    }
}

@Suite("the terminal keyboard on a pseudo-terminal", .timeLimit(.minutes(1)))
struct PseudoTerminalTests {
    /// A pseudo-terminal pair: write to `controller`, the keyboard reads `terminal`.
    final class PseudoTerminal {
        let controller: Int32
        let terminal: Int32

        init() throws {
            (controller, terminal) = try openPseudoTerminal()
        }

        func type(_ bytes: [UInt8]) {
            precondition(write(controller, bytes, bytes.count) == bytes.count)
        }

        func localFlags() -> tcflag_t {
            var attributes = termios()
            precondition(tcgetattr(terminal, &attributes) == 0)
            return attributes.c_lflag
        }

        deinit {
            _ = close(terminal)
            _ = close(controller)
        }
    }

    @Test("raw mode delivers Ctrl-C and Enter as bytes without waiting for a line, and restore undoes it")
    func rawMode() throws {
        let pty = try PseudoTerminal()
        let keyboard = try TerminalKeyboard(fileDescriptor: pty.terminal)
        #expect(keyboard.isTerminal)
        #expect(pty.localFlags() & tcflag_t(ICANON | ECHO | ISIG) == 0)
        // No newline follows: in canonical mode this wait would never return.
        pty.type([3, 13])
        var keys: [TerminalInput] = []
        while keys.count < 2 { keys += try keyboard.wait(until: nil) }
        #expect(keys == [.key(3), .key(13)])
        try keyboard.restore()
        #expect(pty.localFlags() & tcflag_t(ICANON | ECHO | ISIG) == tcflag_t(ICANON | ECHO | ISIG))
        try keyboard.restore()
    }
}
