#define _GNU_SOURCE
#include "rb_os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

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
