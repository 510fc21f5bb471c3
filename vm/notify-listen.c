/*
 * notify-listen SOCKET: the service manager's end of the sd_notify protocol, for vm-test.
 *
 * Binds an AF_UNIX SOCK_DGRAM socket at SOCKET (a file-system path, or "@name" for an abstract
 * socket, as in $NOTIFY_SOCKET) and prints one line per datagram received, until killed:
 *
 *     <CLOCK_MONOTONIC seconds, 3 decimals> pid=<sender> <payload>
 *
 * The payload's newlines (between KEY=VALUE assignments) are printed as spaces and any other
 * control byte as '?', so a datagram is always one line, e.g.
 * "12.345 pid=97 READY=1 STATUS=button ...". The sender's pid comes from SO_PASSCRED (the
 * kernel's word, as systemd checks it); pid=0 when no credentials came with the datagram.
 * Once the socket is bound it prints "<seconds> listening <SOCKET>" (wait for that line before
 * starting the program under test). Each line is flushed at once. A path is unlinked first when
 * something stale is there. Exit status: 1 for a setup failure (the reason on stderr), 2 for bad
 * arguments; otherwise it runs until a signal ends it.
 *
 * Built by scripts/vm-test: gcc -static -O2 -Wall -Wextra -Werror.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Larger than any sd_notify message a service sends (systemd itself reads at most PIPE_BUF
 * plus file descriptors); a longer datagram is cut here and marked. */
enum { max_payload = 4096 };

static double monotonic_seconds(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        return -1.0;
    }
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '\0') {
        fprintf(stderr, "usage: notify-listen PATH|@NAME\n");
        return 2;
    }
    const char *name = argv[1];
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    size_t name_length = strlen(name);
    socklen_t address_length;
    if (name[0] == '@') {
        /* Abstract: a leading NUL, then the name, not NUL-terminated. */
        if (name_length > sizeof address.sun_path) {
            fprintf(stderr, "notify-listen: name too long: %s\n", name);
            return 2;
        }
        memcpy(address.sun_path + 1, name + 1, name_length - 1);
        address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + name_length);
    } else {
        if (name_length + 1 > sizeof address.sun_path) {
            fprintf(stderr, "notify-listen: path too long: %s\n", name);
            return 2;
        }
        memcpy(address.sun_path, name, name_length + 1);
        address_length = (socklen_t)sizeof address;
        if (unlink(name) != 0 && errno != ENOENT) {
            fprintf(stderr, "notify-listen: unlink %s: %s\n", name, strerror(errno));
            return 1;
        }
    }

    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "notify-listen: socket: %s\n", strerror(errno));
        return 1;
    }
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
        fprintf(stderr, "notify-listen: SO_PASSCRED: %s\n", strerror(errno));
        return 1;
    }
    if (bind(fd, (const struct sockaddr *)&address, address_length) != 0) {
        fprintf(stderr, "notify-listen: bind %s: %s\n", name, strerror(errno));
        return 1;
    }
    printf("%.3f listening %s\n", monotonic_seconds(), name);
    fflush(stdout);

    for (;;) {
        char payload[max_payload];
        union {
            struct cmsghdr header;
            char space[CMSG_SPACE(sizeof(struct ucred))];
        } control;
        struct iovec vector = {.iov_base = payload, .iov_len = sizeof payload};
        struct msghdr message = {
            .msg_iov = &vector,
            .msg_iovlen = 1,
            .msg_control = control.space,
            .msg_controllen = sizeof control.space,
        };
        ssize_t received = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
        if (received < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "notify-listen: recvmsg: %s\n", strerror(errno));
            return 1;
        }
        double at = monotonic_seconds();
        long sender = 0;
        for (struct cmsghdr *part = CMSG_FIRSTHDR(&message); part != NULL; part = CMSG_NXTHDR(&message, part)) {
            if (part->cmsg_level == SOL_SOCKET && part->cmsg_type == SCM_CREDENTIALS &&
                part->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                struct ucred credentials;
                memcpy(&credentials, CMSG_DATA(part), sizeof credentials);
                sender = (long)credentials.pid;
            }
        }
        for (ssize_t i = 0; i < received; i++) {
            unsigned char byte = (unsigned char)payload[i];
            if (byte == '\n') {
                payload[i] = ' ';
            } else if (byte < 0x20 || byte == 0x7f) {
                payload[i] = '?';
            }
        }
        printf("%.3f pid=%ld %.*s%s\n", at, sender, (int)received, payload,
               (message.msg_flags & MSG_TRUNC) ? " [truncated]" : "");
        fflush(stdout);
    }
}
