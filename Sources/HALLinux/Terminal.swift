import CLinuxOS
import HAL

/// What the interactive simulator's keyboard delivers.
public enum TerminalInput: Hashable, Sendable {
    /// One byte typed (raw mode: Ctrl-C arrives as 3, Enter as 13, arrows as escape sequences).
    case key(UInt8)
    /// SIGINT or SIGTERM arrived (e.g. `kill`, or Ctrl-C when the input is not a terminal).
    case stop
    /// The terminal window changed size (SIGWINCH): ask `terminalSize()` again.
    case resized
    /// Standard input reached its end (a pipe closed): no more keys will come.
    case endOfInput
}

/// Standard input as a keyboard, for the simulator.
///
/// When the input is a terminal it is put in raw-ish mode: no line buffering, no echo, no signal
/// keys (so Ctrl-C is the key 3, not SIGINT), no CR-to-NL input translation; output processing is
/// left on, so "\n" still starts a new line. When the input is not a terminal (a pipe in tests),
/// nothing is changed. Same blocking rules as `LinuxEventSource`, with which it shares the code.
public final class TerminalKeyboard {
    public let fileDescriptor: Int32
    /// True when the input is a terminal and its mode was changed.
    public let isTerminal: Bool
    private var saved: termios?
    private let poller: Poller
    private var reachedEnd = false

    public init(fileDescriptor: Int32 = STDIN_FILENO) throws(HALError) {
        self.fileDescriptor = fileDescriptor
        self.poller = try Poller(includeResize: true)
        var original = termios()
        guard tcgetattr(fileDescriptor, &original) == 0 else {
            self.isTerminal = false
            return
        }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        _ = try Syscall.run("tcsetattr raw mode") { tcsetattr(fileDescriptor, TCSANOW, &raw) }
        self.saved = original
        self.isTerminal = true
    }

    deinit {
        if var original = saved { _ = tcsetattr(fileDescriptor, TCSANOW, &original) }
    }

    /// Puts the terminal back as it was. Safe to call more than once (later calls do nothing).
    public func restore() throws(HALError) {
        guard var original = saved else { return }
        saved = nil
        let fd = fileDescriptor
        _ = try Syscall.run("tcsetattr restore") { tcsetattr(fd, TCSANOW, &original) }
    }

    /// Blocks until keys, a signal or `deadline` (CLOCK_MONOTONIC); [] when the deadline passed.
    /// After `.endOfInput` the input is no longer watched: only signals and deadlines remain.
    public func wait(until deadline: Instant?) throws(HALError) -> [TerminalInput] {
        let watched = reachedEnd ? [] : [fileDescriptor]
        while true {
            let wakeup = try poller.wait(watching: watched, until: deadline)
            var inputs: [TerminalInput] = []
            for signal in wakeup.signals {
                inputs.append(signal == SIGWINCH ? .resized : .stop)
            }
            if wakeup.readable.contains(fileDescriptor) {
                var buffer = [UInt8](repeating: 0, count: 64)
                let fd = fileDescriptor
                let count = try Syscall.run("read standard input") { read(fd, &buffer, buffer.count) }
                if count == 0 {
                    reachedEnd = true
                    inputs.append(.endOfInput)
                } else {
                    inputs += buffer.prefix(count).map { .key($0) }
                }
            }
            if !inputs.isEmpty || wakeup.deadlineReached { return inputs }
        }
    }
}

/// The terminal's size in character cells, or nil when `fd` is not a terminal.
public func terminalSize(fileDescriptor fd: Int32 = STDOUT_FILENO) -> (columns: Int, rows: Int)? {
    var columns: UInt16 = 0
    var rows: UInt16 = 0
    guard rb_terminal_size(fd, &columns, &rows) == 0, columns > 0, rows > 0 else { return nil }
    return (Int(columns), Int(rows))
}

/// A pseudo-terminal pair, e.g. to drive a `TerminalKeyboard` in tests: bytes written to
/// `controller` arrive as typed input on `terminal`. The caller closes both.
public func openPseudoTerminal() throws(HALError) -> (controller: Int32, terminal: Int32) {
    var controller: Int32 = -1
    var terminal: Int32 = -1
    _ = try Syscall.run("open a pseudo-terminal") { rb_open_pseudo_terminal(&controller, &terminal) }
    return (controller, terminal)
}
