/*
 * uinput-keypad: a numeric keypad made through /dev/uinput, for vm-test's keypad scenarios.
 *
 *     uinput-keypad [--name NAME] [--repeat]      commands on stdin, one per line
 *     uinput-keypad --listen DEVICE MILLISECONDS  count the key events another reader gets
 *
 * Commands (each answered on stdout with one flushed line "<CLOCK_MONOTONIC s> <answer>"):
 *     plug                  create the device (BUS_USB, vendor 0x1209 product 0x0014, NAME,
 *                           default "vmtest keypad"); answer "plugged <inputN> <eventN>"
 *     unplug                destroy it (as a USB keypad pulled out; keys held are released by
 *                           the input core); answer "unplugged"
 *     type KEYS [GAP [HOLD]] press and release each key of KEYS in turn: held HOLD ms (default
 *                           50), then GAP ms (default 150) before the next; answer "typed <n>"
 *     down K / up K         press or release one key; answer "down K" / "up K"
 *     flood N               N presses and releases of KEY_X, each event with its SYN_REPORT, as
 *                           fast as they can be written (4N events: more than the 64 a reader's
 *                           buffer holds, drivers/input/evdev.c, overflows a reader that stalls);
 *                           answer "flooded N"
 *     sleep MS              answer "slept MS"
 *     quit (or end of input) destroy the device and exit 0
 * Keys: 0-9 as the numeric keypad's KEY_KP0..KEY_KP9 (with --top-row before them on the command
 * line: KEY_0..KEY_9), '*' KEY_KPASTERISK, '#' KEY_KPENTER, 'A'-'D' KEY_NUMERIC_A..D, '<'
 * KEY_BACKSPACE, '>' KEY_ENTER, 'x' KEY_X (a key a keypad program should ignore). The device also
 * declares KEY_0..KEY_9 and KEY_NUMERIC_0..9/STAR/POUND, so it looks like a keypad, not a
 * keyboard. With --repeat the device has EV_REP: the input core then autorepeats held keys (events
 * with value 2) as a keyboard does.
 * Errors: one line "uinput-keypad: <what>: <errno text>" on stderr; a bad command is answered
 * "error <command>" and ignored. Exit status: 1 for a setup failure, 2 for bad arguments.
 *
 * --listen opens DEVICE (no grab), counts EV_KEY events for MILLISECONDS and prints "events=<n>":
 * when another process holds the device with EVIOCGRAB, the input core hands its events to that
 * process only (input_grab_device() in drivers/input/input.c, evdev_grab() in
 * drivers/input/evdev.c), so the count is 0, as it is for the console's keyboard handler.
 *
 * Built by scripts/vm-test: gcc -static -O2 -Wall -Wextra -Werror.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static int uinput = -1;
static const char *name = "vmtest keypad";
static int repeat = 0;
static int top_row = 0;

static double monotonic_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void answer(const char *format, const char *text, long number) {
    printf("%.3f ", monotonic_seconds());
    printf(format, text, number);
    printf("\n");
    fflush(stdout);
}

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

static int key_code(char c) {
    if (c >= '0' && c <= '9') {
        static const int keypad[10] = {KEY_KP0, KEY_KP1, KEY_KP2, KEY_KP3, KEY_KP4,
                                       KEY_KP5, KEY_KP6, KEY_KP7, KEY_KP8, KEY_KP9};
        static const int row[10] = {KEY_0, KEY_1, KEY_2, KEY_3, KEY_4,
                                    KEY_5, KEY_6, KEY_7, KEY_8, KEY_9};
        return top_row ? row[c - '0'] : keypad[c - '0'];
    }
    switch (c) {
    case '*': return KEY_KPASTERISK;
    case '#': return KEY_KPENTER;
    case 'A': return KEY_NUMERIC_A;
    case 'B': return KEY_NUMERIC_B;
    case 'C': return KEY_NUMERIC_C;
    case 'D': return KEY_NUMERIC_D;
    case '<': return KEY_BACKSPACE;
    case '>': return KEY_ENTER;
    case 'x': return KEY_X;
    default: return -1;
    }
}

static int emit(int type, int code, int value) {
    struct input_event event;
    memset(&event, 0, sizeof(event));
    event.type = (unsigned short)type;
    event.code = (unsigned short)code;
    event.value = value;
    if (write(uinput, &event, sizeof(event)) != (ssize_t)sizeof(event)) {
        fprintf(stderr, "uinput-keypad: write to /dev/uinput: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static int key(int code, int value) {
    if (uinput < 0) {
        return -1;
    }
    if (emit(EV_KEY, code, value) != 0 || emit(EV_SYN, SYN_REPORT, 0) != 0) {
        return -1;
    }
    return 0;
}

/* The eventN node of the input device inputN (sysfs), into buffer; "?" when not found. */
static void event_node(const char *sysname, char *buffer, size_t size) {
    char path[128];
    snprintf(path, sizeof(path), "/sys/devices/virtual/input/%s", sysname);
    snprintf(buffer, size, "?");
    DIR *dir = opendir(path);
    if (!dir) {
        return;
    }
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (strncmp(entry->d_name, "event", 5) == 0) {
            snprintf(buffer, size, "%s", entry->d_name);
            break;
        }
    }
    closedir(dir);
}

static int plug(void) {
    if (uinput >= 0) {
        return 0;
    }
    uinput = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (uinput < 0) {
        fprintf(stderr, "uinput-keypad: open /dev/uinput: %s\n", strerror(errno));
        return -1;
    }
    static const int extra[] = {KEY_KPASTERISK, KEY_KPENTER, KEY_BACKSPACE, KEY_ENTER, KEY_X,
                                KEY_NUMERIC_STAR, KEY_NUMERIC_POUND, KEY_NUMERIC_A, KEY_NUMERIC_B,
                                KEY_NUMERIC_C, KEY_NUMERIC_D};
    int ok = ioctl(uinput, UI_SET_EVBIT, EV_KEY) == 0;
    if (repeat) {
        ok = ok && ioctl(uinput, UI_SET_EVBIT, EV_REP) == 0;
    }
    for (int digit = 0; digit < 10 && ok; digit++) {
        top_row = 0;
        ok = ioctl(uinput, UI_SET_KEYBIT, key_code((char)('0' + digit))) == 0;
        top_row = 1;
        ok = ok && ioctl(uinput, UI_SET_KEYBIT, key_code((char)('0' + digit))) == 0;
        ok = ok && ioctl(uinput, UI_SET_KEYBIT, KEY_NUMERIC_0 + digit) == 0;
    }
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]) && ok; i++) {
        ok = ioctl(uinput, UI_SET_KEYBIT, extra[i]) == 0;
    }
    struct uinput_setup setup;
    memset(&setup, 0, sizeof(setup));
    setup.id.bustype = BUS_USB;
    setup.id.vendor = 0x1209;
    setup.id.product = 0x0014;
    setup.id.version = 1;
    snprintf(setup.name, sizeof(setup.name), "%s", name);
    ok = ok && ioctl(uinput, UI_DEV_SETUP, &setup) == 0 && ioctl(uinput, UI_DEV_CREATE) == 0;
    if (!ok) {
        fprintf(stderr, "uinput-keypad: setting up the device: %s\n", strerror(errno));
        close(uinput);
        uinput = -1;
        return -1;
    }
    char sysname[64] = "?", event[300];
    if (ioctl(uinput, UI_GET_SYSNAME(sizeof(sysname)), sysname) < 0) {
        snprintf(sysname, sizeof(sysname), "?");
    }
    event_node(sysname, event, sizeof(event));
    printf("%.3f plugged %s %s\n", monotonic_seconds(), sysname, event);
    fflush(stdout);
    return 0;
}

static void unplug(void) {
    if (uinput >= 0) {
        ioctl(uinput, UI_DEV_DESTROY);
        close(uinput);
        uinput = -1;
    }
}

static int listen_mode(const char *device, long ms) {
    int fd = open(device, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "uinput-keypad: open %s: %s\n", device, strerror(errno));
        return 1;
    }
    long events = 0;
    double end = monotonic_seconds() + (double)ms / 1000.0;
    for (;;) {
        double left = end - monotonic_seconds();
        if (left <= 0) {
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)(left * 1000.0) + 1);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready > 0) {
            struct input_event buffer[16];
            ssize_t got = read(fd, buffer, sizeof(buffer));
            if (got < 0 && errno != EAGAIN) {
                break; /* the device went away */
            }
            for (ssize_t i = 0; got > 0 && i < got / (ssize_t)sizeof(buffer[0]); i++) {
                if (buffer[i].type == EV_KEY) {
                    events++;
                }
            }
        }
    }
    printf("events=%ld\n", events);
    close(fd);
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: uinput-keypad [--name NAME] [--repeat] [--top-row] < commands\n"
                    "       uinput-keypad --listen DEVICE MILLISECONDS\n");
    return 2;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (strcmp(argv[i], "--repeat") == 0) {
            repeat = 1;
        } else if (strcmp(argv[i], "--top-row") == 0) {
            top_row = 1;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 2 < argc) {
            char *end;
            long ms = strtol(argv[i + 2], &end, 10);
            if (*end != '\0' || ms < 0 || ms > 3600000) {
                return usage();
            }
            return listen_mode(argv[i + 1], ms);
        } else {
            return usage();
        }
    }
    int use_top_row = top_row;
    char line[256];
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        char command[16] = "", text[128] = "";
        long a = -1, b = -1;
        int fields = sscanf(line, "%15s %127s %ld %ld", command, text, &a, &b);
        top_row = use_top_row;
        if (fields < 1) {
            continue;
        } else if (strcmp(command, "plug") == 0) {
            if (plug() != 0) {
                answer("error %s", line, 0);
            }
        } else if (strcmp(command, "unplug") == 0) {
            unplug();
            answer("unplugged%s", "", 0);
        } else if (strcmp(command, "type") == 0 && fields >= 2) {
            long gap = fields >= 3 ? a : 150, hold = fields >= 4 ? b : 50;
            long typed = 0;
            if (gap < 0 || gap > 60000 || hold < 0 || hold > 60000) {
                answer("error %s", line, 0);
                continue;
            }
            for (size_t i = 0; text[i] != '\0'; i++) {
                int code = key_code(text[i]);
                if (code < 0 || key(code, 1) != 0) {
                    break;
                }
                sleep_ms(hold);
                if (key(code, 0) != 0) {
                    break;
                }
                typed++;
                if (text[i + 1] != '\0') {
                    sleep_ms(gap);
                }
            }
            answer("typed %s%ld", "", typed);
        } else if ((strcmp(command, "down") == 0 || strcmp(command, "up") == 0) && fields == 2 &&
                   strlen(text) == 1 && key_code(text[0]) >= 0) {
            if (key(key_code(text[0]), command[0] == 'd') != 0) {
                answer("error %s", line, 0);
            } else {
                printf("%.3f %s %s\n", monotonic_seconds(), command, text);
                fflush(stdout);
            }
        } else if (strcmp(command, "flood") == 0 && fields == 2) {
            long n = strtol(text, NULL, 10), done = 0;
            if (n < 1 || n > 100000) {
                answer("error %s", line, 0);
                continue;
            }
            while (done < n && key(KEY_X, 1) == 0 && key(KEY_X, 0) == 0) {
                done++;
            }
            answer("flooded %s%ld", "", done);
        } else if (strcmp(command, "sleep") == 0 && fields == 2) {
            long ms = strtol(text, NULL, 10);
            if (ms < 0 || ms > 600000) {
                answer("error %s", line, 0);
                continue;
            }
            sleep_ms(ms);
            answer("slept %s%ld", "", ms);
        } else if (strcmp(command, "quit") == 0) {
            break;
        } else {
            answer("error %s", line, 0);
        }
    }
    unplug();
    return 0;
}
