#define _GNU_SOURCE
#include "rb_evdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

int rb_evdev_open(const char *path, int follow_links) {
    int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow_links ? 0 : O_NOFOLLOW);
    int fd = open(path, flags);
    if (fd < 0) return -1;
    int clock = CLOCK_MONOTONIC;
    if (ioctl(fd, EVIOCSCLOCKID, &clock) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int rb_evdev_grab(int fd, int grab) {
    return ioctl(fd, EVIOCGRAB, (void *)(intptr_t)(grab ? 1 : 0));
}

int rb_evdev_read(int fd, struct rb_input_event *events, int capacity) {
    enum { batch = 64 };
    struct input_event raw[batch];
    if (capacity <= 0) return 0;
    if (capacity > batch) capacity = batch;
    // evdev returns whole events only (drivers/input/evdev.c, evdev_read: EINVAL for a buffer
    // smaller than one event, otherwise a multiple of its size).
    ssize_t got = read(fd, raw, (size_t)capacity * sizeof raw[0]);
    if (got < 0) return errno == EAGAIN ? 0 : -1;
    if (got == 0) {
        errno = ENODEV;
        return -1;
    }
    int count = (int)(got / (ssize_t)sizeof raw[0]);
    for (int i = 0; i < count; i++) {
        events[i].time_ns = (int64_t)raw[i].input_event_sec * 1000000000 + (int64_t)raw[i].input_event_usec * 1000;
        events[i].value = raw[i].value;
        events[i].type = raw[i].type;
        events[i].code = raw[i].code;
    }
    return count;
}

int rb_evdev_name(int fd, char *name, int size) {
    if (size <= 0) {
        errno = EINVAL;
        return -1;
    }
    int got = ioctl(fd, EVIOCGNAME(size), name);
    if (got < 0) return -1;
    name[size - 1] = '\0';
    return got;
}

int rb_evdev_key_bits(int fd, uint8_t *bits, int size) {
    if (size <= 0) {
        errno = EINVAL;
        return -1;
    }
    memset(bits, 0, (size_t)size);
    return ioctl(fd, EVIOCGBIT(EV_KEY, size), bits);
}

int rb_evdev_key_state(int fd, uint8_t *bits, int size) {
    if (size <= 0) {
        errno = EINVAL;
        return -1;
    }
    memset(bits, 0, (size_t)size);
    return ioctl(fd, EVIOCGKEY(size), bits);
}
