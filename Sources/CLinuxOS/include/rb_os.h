// Linux calls Glibc does not import into Swift (timerfd, signalfd, sigset macros, TIOCGWINSZ).
// Conventions: -1 with errno set on failure.
#ifndef RB_OS_H
#define RB_OS_H

#include <signal.h>
#include <stdint.h>

/// A CLOCK_MONOTONIC timerfd, non-blocking and close-on-exec.
int rb_timerfd_create_monotonic(void);
/// Arms `fd` to expire once at the absolute CLOCK_MONOTONIC time `deadline_ns` (a time already
/// past expires at once). Never disarms: a deadline <= 0 is raised to 1 ns.
int rb_timerfd_arm_absolute(int fd, int64_t deadline_ns);
/// Disarms `fd`: it will not become readable until armed again.
int rb_timerfd_disarm(int fd);
/// Reads and discards the expiration count; 0 when the timer had not expired (EAGAIN).
int rb_timerfd_consume(int fd);

/// The signals the program turns into events. `with_resize` adds SIGWINCH (terminal resized).
enum { RB_SIGNALS_STOP = 1, RB_SIGNALS_STOP_AND_RESIZE = 2 };
/// Blocks SIGINT and SIGTERM (and SIGWINCH when asked) in the calling thread (threads created
/// later inherit the mask), saving the previous mask in `*previous` when it is not NULL, and
/// returns a non-blocking, close-on-exec signalfd for them.
int rb_signalfd_open(int which, sigset_t *previous);
/// Reads one pending signal from a signalfd: its number, 0 when none is pending (EAGAIN).
int rb_signalfd_read(int fd);
/// Restores a mask saved by rb_signalfd_open.
int rb_signal_mask_restore(const sigset_t *previous);
/// Sends `signal` to the calling thread (raise(3)).
int rb_raise(int signal);

/// The size of the terminal on `fd` in character cells (TIOCGWINSZ).
int rb_terminal_size(int fd, unsigned short *columns, unsigned short *rows);

/// Opens a pseudo-terminal pair (posix_openpt, grantpt, unlockpt, ptsname): bytes written to
/// `*controller` arrive as typed input on `*terminal`. Both close-on-exec, not controlling terminals.
int rb_open_pseudo_terminal(int *controller, int *terminal);

#endif
