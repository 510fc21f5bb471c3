#define _GNU_SOURCE
#include "rb_os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <spawn.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int rb_errno(void) { return errno; }

int rb_open(const char *path, int flags, unsigned int mode) { return open(path, flags, (mode_t)mode); }

char **rb_environ(void) { return environ; }

static int saved_argc;
static char **saved_argv;

// glibc calls ELF constructors with (argc, argv, envp) (csu/libc-start.c: call_init).
__attribute__((constructor)) static void capture_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

int rb_argc(void) { return saved_argc; }

char **rb_argv(void) { return saved_argv; }

static _Thread_local void *thread_script;

void *rb_thread_script(void) { return thread_script; }

void rb_set_thread_script(void *script) { thread_script = script; }

int rb_timerfd_create_monotonic(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

int rb_timerfd_arm_absolute(int fd, int64_t deadline_ns) {
    // An all-zero it_value would disarm the timer; the earliest real deadline is 1 ns.
    if (deadline_ns <= 0) deadline_ns = 1;
    struct itimerspec spec = {
        .it_interval = {0, 0},  // one-shot
        .it_value = {.tv_sec = (time_t)(deadline_ns / 1000000000), .tv_nsec = (long)(deadline_ns % 1000000000)},
    };
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

int rb_timerfd_disarm(int fd) {
    struct itimerspec spec = {{0, 0}, {0, 0}};
    return timerfd_settime(fd, 0, &spec, NULL);
}

int rb_timerfd_consume(int fd) {
    uint64_t expirations;
    ssize_t n = read(fd, &expirations, sizeof expirations);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    return n == sizeof expirations ? 1 : 0;
}

int rb_signalfd_open(int which, sigset_t *previous) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (which == RB_SIGNALS_STOP_AND_RESIZE) sigaddset(&set, SIGWINCH);
    int error = pthread_sigmask(SIG_BLOCK, &set, previous);
    if (error != 0) {
        errno = error;
        return -1;
    }
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int rb_signalfd_read(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    if (n < 0) return errno == EAGAIN ? 0 : -1;
    return n == sizeof info ? (int)info.ssi_signo : 0;
}

int rb_signal_mask_restore(const sigset_t *previous) {
    int error = pthread_sigmask(SIG_SETMASK, previous, NULL);
    if (error != 0) {
        errno = error;
        return -1;
    }
    return 0;
}

int rb_raise(int signal) { return raise(signal); }

int rb_terminal_size(int fd, unsigned short *columns, unsigned short *rows) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) < 0) return -1;
    *columns = size.ws_col;
    *rows = size.ws_row;
    return 0;
}

int rb_open_pseudo_terminal(int *controller, int *terminal) {
    int c = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (c < 0) return -1;
    const char *name = NULL;
    if (grantpt(c) == 0 && unlockpt(c) == 0) name = ptsname(c);
    int t = name == NULL ? -1 : open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (t < 0) {
        int saved = errno;
        close(c);
        errno = saved;
        return -1;
    }
    *controller = c;
    *terminal = t;
    return 0;
}

int rb_spawn(char *const argv[], char *const envp[], int output_fd, int *pid) {
    return rb_spawn_with_input(argv, envp, -1, output_fd, pid);
}

int rb_spawn_with_input(char *const argv[], char *const envp[], int input_fd, int output_fd, int *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) {
        errno = error;
        return -1;
    }
    error = posix_spawnattr_init(&attributes);
    if (error != 0) {
        posix_spawn_file_actions_destroy(&actions);
        errno = error;
        return -1;
    }
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    int reset[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD};
    for (unsigned i = 0; i < sizeof reset / sizeof reset[0]; i++) sigaddset(&defaults, reset[i]);
    if (error == 0) {
        error = input_fd < 0 ? posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
                             : posix_spawn_file_actions_adddup2(&actions, input_fd, STDIN_FILENO);
    }
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
    if (error == 0) error = posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
    if (error == 0) error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (error == 0) error = posix_spawnattr_setpgroup(&attributes, 0);
    if (error == 0) error = posix_spawnattr_setsigmask(&attributes, &empty);
    if (error == 0) error = posix_spawnattr_setsigdefault(&attributes, &defaults);
    pid_t child = 0;
    if (error == 0) error = posix_spawnp(&child, argv[0], &actions, &attributes, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (error != 0) {
        errno = error;
        return -1;
    }
    *pid = (int)child;
    return 0;
}

int rb_input_pipe(const uint8_t *bytes, size_t count, int *read_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    // A pipe holds at least PIPE_BUF (4096) bytes (pipe(7)): a short input fits at once and the
    // non-blocking write end can never stall the caller.
    size_t written = 0;
    while (written < count) {
        ssize_t n = write(fds[1], bytes + written, count - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int saved = n < 0 ? errno : EAGAIN;
            close(fds[0]);
            close(fds[1]);
            errno = saved;
            return -1;
        }
        written += (size_t)n;
    }
    close(fds[1]);
    // The child needs a blocking standard input (a reader must not see EAGAIN).
    int flags = fcntl(fds[0], F_GETFL);
    if (flags < 0 || fcntl(fds[0], F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int saved = errno;
        close(fds[0]);
        errno = saved;
        return -1;
    }
    *read_fd = fds[0];
    return 0;
}

int rb_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0); }

int rb_getrandom(uint8_t *buffer, size_t count) {
    size_t filled = 0;
    while (filled < count) {
        long got = syscall(SYS_getrandom, buffer + filled, count - filled, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        filled += (size_t)got;
    }
    return 0;
}

int rb_reap(int pid, int *signalled, int *value) {
    int status = 0;
    pid_t result = waitpid((pid_t)pid, &status, WNOHANG);
    if (result < 0) return -1;
    if (result == 0) return 0;
    if (WIFSIGNALED(status)) {
        *signalled = 1;
        *value = WTERMSIG(status);
    } else {
        *signalled = 0;
        *value = WEXITSTATUS(status);
    }
    return 1;
}

int rb_reap_blocking(int pid) {
    int status = 0;
    pid_t result;
    do {
        result = waitpid((pid_t)pid, &status, 0);
    } while (result < 0 && errno == EINTR);
    return result < 0 ? -1 : 0;
}

int rb_output_pipe(int *read_fd, int *write_fd) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) return -1;
    int flags = fcntl(fds[0], F_GETFL);
    if (flags < 0 || fcntl(fds[0], F_SETFL, flags | O_NONBLOCK) < 0) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return -1;
    }
    *read_fd = fds[0];
    *write_fd = fds[1];
    return 0;
}

int rb_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int rb_epoll_add(int epoll_fd, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data = {.fd = fd}};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

int rb_epoll_remove(int epoll_fd, int fd) { return epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL); }

int rb_epoll_ready(int epoll_fd, int *fds, int capacity) {
    struct epoll_event events[16];
    if (capacity > 16) capacity = 16;
    int count = epoll_wait(epoll_fd, events, capacity, 0);
    if (count < 0) return -1;
    for (int i = 0; i < count; i++) fds[i] = events[i].data.fd;
    return count;
}

const char *rb_errno_name(int error) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    return strerrorname_np(error);
#else
    (void)error;
    return NULL;
#endif
}

long long rb_statfs_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long long)(unsigned int)info.f_type;
}

long long rb_stat_device(const char *path) {
    struct stat info;
    if (stat(path, &info) != 0) return -1;
    return ((long long)major(info.st_dev) << 32) | (long long)minor(info.st_dev);
}

int rb_rename_noreplace(const char *from, const char *to) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */);
#else
    (void)from;
    (void)to;
    errno = ENOSYS;
    return -1;
#endif
}


/// Empties the directory open as `fd` (which it closes), depth at most 32.
static int rb_empty_directory_fd(int fd, int depth) {
    if (depth > 32) { close(fd); errno = ELOOP; return -1; }
    DIR *dir = fdopendir(fd);
    if (!dir) { int saved = errno; close(fd); errno = saved; return -1; }
    int result = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        if (unlinkat(dirfd(dir), name, 0) == 0) continue;
        if (errno != EISDIR && errno != EPERM) { result = -1; break; }
        int child = openat(dirfd(dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0 || rb_empty_directory_fd(child, depth + 1) != 0 || unlinkat(dirfd(dir), name, AT_REMOVEDIR) != 0) {
            result = -1;
            break;
        }
    }
    int saved = errno;
    closedir(dir);
    errno = saved;
    return result;
}

int rb_empty_directory(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    return rb_empty_directory_fd(fd, 0);
}
