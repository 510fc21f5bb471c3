// The C library as Swift sees it, in both build modes: HALLinux and the executable import this
// module, never Glibc. A normal build gets the libc declarations through the system's module map
// (this module re-exports it); an Embedded Swift build for an ARM Linux target (scripts/cross-build)
// has no Glibc module, so the same headers are read here directly. What neither mode imports
// (errno, the variadic open, timerfd, signalfd, sigset macros, TIOCGWINSZ) has a function below.
// Conventions: -1 with errno set on failure.
#ifndef RB_OS_H
#define RB_OS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/// The calling thread's errno (a macro in C, so neither build mode imports it).
int rb_errno(void);
/// open(2) with a mode (the C function is variadic, which Swift cannot call directly).
int rb_open(const char *path, int flags, unsigned int mode);
/// The process environment (`environ`, which <unistd.h> declares only under _GNU_SOURCE).
char **rb_environ(void);
/// The program's argument count and vector (argv[argc] is NULL), captured before main by a glibc
/// constructor (glibc passes argc, argv and envp to ELF constructors): `CommandLine` does not exist
/// in Embedded Swift, so both build modes read the arguments here.
int rb_argc(void);
char **rb_argv(void);
/// A per-thread pointer for HALLinux's test seam (Syscall.withScript): the script a synchronous
/// test body installs is seen only by the calls that thread makes. NULL until set.
void *rb_thread_script(void);
void rb_set_thread_script(void *script);

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

/// Starts `argv[0]` (searched in PATH when it has no slash, as execvp does) with `argv` and `envp`,
/// without a shell and without blocking on the child: standard input from /dev/null, standard
/// output and standard error both to `output_fd`, in a new process group of its own (so a time-out
/// can signal the command and its children), with an empty signal mask and SIGINT, SIGTERM,
/// SIGQUIT, SIGHUP, SIGPIPE and SIGCHLD at their defaults (this program blocks or ignores some).
/// Stores the child's pid in `*pid` and returns 0; -1 with errno when it could not start (ENOENT
/// not found, EACCES not executable, ENOEXEC not a program, EAGAIN/ENOMEM no resources).
int rb_spawn(char *const argv[], char *const envp[], int output_fd, int *pid);
/// `rb_spawn` with standard input from `input_fd` (a pipe from `rb_input_pipe`) instead of
/// /dev/null; `input_fd` < 0 means /dev/null. For the verify command, whose code goes only there.
int rb_spawn_with_input(char *const argv[], char *const envp[], int input_fd, int output_fd, int *pid);
/// A pipe already holding `count` bytes of `bytes` and closed for writing (the reader sees the
/// bytes, then end of file): its blocking, close-on-exec read end in `*read_fd`. `count` must be
/// at most PIPE_BUF (4096): the bytes are written at once, never blocking. The caller wipes its
/// copy of the bytes afterwards; the kernel's copy lives in the pipe until the child reads it.
int rb_input_pipe(const uint8_t *bytes, size_t count, int *read_fd);
/// pidfd_open(2) through syscall(2) (glibc before 2.36 has no wrapper): a close-on-exec descriptor
/// that becomes readable when the process `pid` ends. Linux 5.3 or later.
int rb_pidfd_open(int pid);
/// Fills `count` bytes at `buffer` from the kernel's random source, getrandom(2) with no flags (it
/// blocks only until the pool is initialised at boot), through syscall(2) so older C libraries
/// work too; short reads and EINTR are retried. 0 when every byte was filled, -1 with errno.
int rb_getrandom(uint8_t *buffer, size_t count);
/// Removes everything inside the directory `path` (opened with O_NOFOLLOW: a symbolic link there
/// is refused), without following symbolic links inside it: a link is removed, never its target;
/// a subdirectory is emptied the same way, then removed. 0 when done, -1 with errno.
int rb_empty_directory(const char *path);
/// Reaps the child `pid` if it ended (waitpid with WNOHANG): returns 1 and sets `*signalled` (0
/// exited, 1 killed by a signal) and `*value` (exit status or signal number); 0 when it still runs.
int rb_reap(int pid, int *signalled, int *value);
/// Reaps the child `pid`, blocking until it ends (for a child just sent SIGKILL).
int rb_reap_blocking(int pid);
/// A pipe whose read end `*read_fd` is non-blocking; both ends close-on-exec.
int rb_output_pipe(int *read_fd, int *write_fd);
/// An epoll instance (close-on-exec) and level-triggered EPOLLIN interest in `fd`.
int rb_epoll_create(void);
int rb_epoll_add(int epoll_fd, int fd);
int rb_epoll_remove(int epoll_fd, int fd);
/// The descriptors of `epoll_fd` ready now (no waiting), at most `capacity` into `fds`: the count.
int rb_epoll_ready(int epoll_fd, int *fds, int capacity);

/// The symbolic name of an errno value ("EISDIR"), or NULL when the C library has no name for it
/// (strerrorname_np, glibc 2.32 and later; NULL on older libraries).
const char *rb_errno_name(int error);

/// rename(2) that never replaces an existing `to` (renameat2 RENAME_NOREPLACE): EEXIST when `to`
/// exists. EINVAL or ENOSYS when the file system or kernel cannot do it (the caller falls back).
int rb_rename_noreplace(const char *from, const char *to);

/// statfs(2)'s f_type of the file system holding `path` (a magic number of <linux/magic.h>, as an
/// unsigned 32-bit value), or -1 with errno.
long long rb_statfs_type(const char *path);

/// stat(2)'s st_dev of `path` as (major << 32) | minor (the `major:minor` of
/// /proc/self/mountinfo), or -1 with errno.
long long rb_stat_device(const char *path);

#endif
