/*
 * pc-watch: the power-cut guest's small tools (vm/powercut/init), one static binary.
 *
 *     pc-watch now                 the wall clock (CLOCK_REALTIME) in Unix milliseconds
 *     pc-watch hash FILE           "<hash> <size>" of FILE's bytes, or "absent"
 *     pc-watch watch DIR NAME      prints "PC VERSION <hash> <size>" for every version of DIR/NAME
 *                                  that appears: renamed into place (IN_MOVED_TO) or written in
 *                                  place and closed (IN_CLOSE_WRITE)
 *
 * <hash> is FNV-1a over the bytes (64 bits, 16 hex digits): the versions the program wrote are
 * told apart from each other and from what the next boot finds; it is no checksum of record.
 * The watcher reads the file as soon as the kernel reports the event: a later version renamed in
 * before that read hides the earlier one (the host counts a version it never saw as "unrecorded").
 * Output lines are flushed at once (the console is the host's only view). Exit status: 0; 1 for a
 * failed setup (named on stderr); 2 for bad arguments.
 *
 * Built by vm/powercut/host.sh: gcc -static -O2 -Wall -Wextra -Werror.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

/* hash_file: 0 and the hash and size of PATH's bytes (at most 1 MiB read), or -1 when it cannot
 * be opened. */
static int hash_file(const char *path, uint64_t *hash, long *size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -1;
    uint64_t h = 1469598103934665603ULL;
    long total = 0;
    unsigned char buffer[4096];
    for (;;) {
        ssize_t n = read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; i++) {
            h ^= buffer[i];
            h *= 1099511628211ULL;
        }
        total += n;
        if (total > (1L << 20)) break;
    }
    close(fd);
    *hash = h;
    *size = total;
    return 0;
}

static int watch(const char *dir, const char *name) {
    int fd = inotify_init1(IN_CLOEXEC);
    if (fd < 0 || inotify_add_watch(fd, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
        fprintf(stderr, "pc-watch: inotify on %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char events[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t n = read(fd, events, sizeof events);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 1;
        for (char *p = events; p < events + n;) {
            const struct inotify_event *event = (const struct inotify_event *)p;
            p += sizeof *event + event->len;
            if (event->len == 0 || strcmp(event->name, name) != 0) continue;
            uint64_t hash;
            long size;
            if (hash_file(path, &hash, &size) == 0) {
                printf("PC VERSION %016llx %ld\n", (unsigned long long)hash, size);
                fflush(stdout);
            }
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "now") == 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        printf("%lld\n", (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "hash") == 0) {
        uint64_t hash;
        long size;
        if (hash_file(argv[2], &hash, &size) == 0) {
            printf("%016llx %ld\n", (unsigned long long)hash, size);
        } else {
            printf("absent\n");
        }
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "watch") == 0) return watch(argv[2], argv[3]);
    fprintf(stderr, "usage: pc-watch now | hash FILE | watch DIR NAME\n");
    return 2;
}
