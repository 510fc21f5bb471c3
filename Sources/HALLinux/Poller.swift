import CLinuxOS
import HAL

/// The blocking core shared by `LinuxEventSource` and `TerminalKeyboard`: one poll() over the
/// caller's descriptors, a one-shot CLOCK_MONOTONIC timerfd armed at an absolute deadline, and a
/// signalfd for SIGINT/SIGTERM (plus SIGWINCH for the terminal).
///
/// Creating it blocks those signals in the calling thread (threads created afterwards inherit the
/// mask; the program starts none); the previous mask is restored when it goes away. Before and
/// after, SIGINT/SIGTERM have their default action: the process ends at once (130/143 in a
/// shell), which is what a command without an event loop (`config check`, a headless run on
/// virtual time) should do. A signal that comes while it exists is read from the signalfd; one
/// still pending when it goes away is delivered then, with the default action. With no deadline the timer is disarmed and poll() has no
/// time-out: nothing wakes an idle process.
final class Poller {
    private let timerFD: Int32
    private let signalFD: Int32
    private var previousMask = sigset_t()
    private let clock = SystemClock()

    struct Wakeup {
        /// Watched descriptors that are readable (or hung up / in error: reading tells which).
        var readable: [Int32] = []
        /// Descriptors watched for writing that can take bytes now.
        var writable: [Int32] = []
        /// Watched descriptors whose peer hung up or that are in error (also in `readable`).
        var hungUp: [Int32] = []
        /// Signal numbers taken from the signalfd, in arrival order.
        var signals: [Int32] = []
        /// The deadline has passed.
        var deadlineReached = false
    }

    init(includeResize: Bool) throws(HALError) {
        let which = includeResize ? Int32(RB_SIGNALS_STOP_AND_RESIZE) : Int32(RB_SIGNALS_STOP)
        var previous = sigset_t()
        signalFD = try Syscall.run("signalfd for SIGINT/SIGTERM") { rb_signalfd_open(which, &previous) }
        previousMask = previous
        do throws(HALError) {
            timerFD = try Syscall.run("timerfd_create(CLOCK_MONOTONIC)") { rb_timerfd_create_monotonic() }
        } catch {
            _ = close(signalFD)
            _ = rb_signal_mask_restore(&previous)
            throw error
        }
    }

    deinit {
        _ = close(timerFD)
        _ = close(signalFD)
        _ = rb_signal_mask_restore(&previousMask)
    }

    /// Blocks until a watched descriptor is readable (or, for those in `writable`, can take
    /// bytes), a signal arrives or `deadline` passes. A deadline already past polls once without
    /// blocking. poll()'s EINTR (e.g. after SIGSTOP/SIGCONT) is benign here and simply waits again.
    func wait(watching fds: [Int32], writable: [Int32] = [], until deadline: Instant?) throws(HALError) -> Wakeup {
        var timeout: Int32 = -1
        var wakeup = Wakeup()
        if let deadline {
            if deadline <= clock.now() {
                timeout = 0
                wakeup.deadlineReached = true
                _ = try Syscall.run("disarm timerfd") { rb_timerfd_disarm(timerFD) }
            } else {
                let timerFD = self.timerFD
                _ = try Syscall.run("arm timerfd") { rb_timerfd_arm_absolute(timerFD, deadline.nanoseconds) }
            }
        } else {
            _ = try Syscall.run("disarm timerfd") { rb_timerfd_disarm(timerFD) }
        }

        var pollFDs = ([signalFD, timerFD] + fds).map {
            pollfd(fd: $0, events: Int16(POLLIN) | (writable.contains($0) ? Int16(POLLOUT) : 0), revents: 0)
        }
        while true {
            do throws(HALError) {
                let count = pollFDs.count
                _ = try Syscall.run("poll") { poll(&pollFDs, nfds_t(count), timeout) }
                break
            } catch  where error.errno == EINTR {
                continue
            }
        }

        for entry in pollFDs where entry.revents != 0 {
            if entry.revents & Int16(POLLNVAL) != 0 {
                throw HALError(.io, operation: "poll: descriptor \(entry.fd) is not open", errno: EBADF)
            }
            if entry.fd == signalFD {
                while true {
                    let signal = try Syscall.run("read signalfd") { rb_signalfd_read(signalFD) }
                    if signal == 0 { break }
                    wakeup.signals.append(signal)
                }
            } else if entry.fd == timerFD {
                if try Syscall.run("read timerfd", { rb_timerfd_consume(timerFD) }) > 0 {
                    wakeup.deadlineReached = true
                }
            } else {
                if entry.revents & Int16(POLLOUT) != 0 { wakeup.writable.append(entry.fd) }
                if entry.revents & ~Int16(POLLOUT) != 0 { wakeup.readable.append(entry.fd) }
                if entry.revents & (Int16(POLLHUP) | Int16(POLLERR)) != 0 { wakeup.hungUp.append(entry.fd) }
            }
        }
        if let deadline, !wakeup.deadlineReached, deadline <= clock.now() {
            wakeup.deadlineReached = true
        }
        return wakeup
    }
}
