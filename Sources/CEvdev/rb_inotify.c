#define _GNU_SOURCE
#include "rb_inotify.h"

#include <errno.h>
#include <stddef.h>
#include <sys/inotify.h>
#include <unistd.h>

int rb_inotify_open(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }

int rb_inotify_watch_directory(int fd, const char *path) {
    uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
    return inotify_add_watch(fd, path, mask);
}

int rb_inotify_unwatch(int fd, int watch) { return inotify_rm_watch(fd, watch); }

int rb_inotify_drain(int fd) {
    // Events are variable-sized (a name follows each struct inotify_event); a read returns whole
    // events only, at least one fits in this buffer (inotify(7): sizeof + NAME_MAX + 1).
    char buffer[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int events = 0;
    for (;;) {
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EAGAIN) return events;
            return -1;
        }
        if (got == 0) return events;
        for (ssize_t offset = 0; offset + (ssize_t)sizeof(struct inotify_event) <= got;) {
            const struct inotify_event *event = (const struct inotify_event *)(buffer + offset);
            offset += (ssize_t)sizeof(struct inotify_event) + (ssize_t)event->len;
            events++;
        }
    }
}
