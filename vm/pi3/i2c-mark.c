/*
 * i2c-mark: time marks that tie the guest's CLOCK_MONOTONIC to the host's I2C trace (pi3 guest).
 *
 *     i2c-mark BUS ADDRESS COUNT FIRST
 *
 * Writes COUNT one-byte messages (the bytes FIRST, FIRST+1, ...) to ADDRESS on /dev/i2c-BUS and
 * prints one line per message: "mark <byte> <before> <after>", CLOCK_MONOTONIC seconds with
 * nanoseconds read just before and just after the write() (the write returns once the controller
 * has sent it: i2c-bcm2835 waits for its DONE interrupt). On the host, qemu's `-trace i2c_*` with
 * `-msg timestamp=on` stamps the same byte (`i2c_send send(addr:ADDRESS) data:<byte>`) with the
 * host's clock: the byte crossed the bus between <before> and <after>, which bounds the offset
 * between the two clocks. Marks are 20 ms apart. Exit status 1 when a write fails.
 *
 * Built by scripts/vm-test (vm/pi3/host.sh): aarch64-linux-gnu-gcc -static -O2 -Wall -Wextra -Werror.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static void stamp(struct timespec *t) { clock_gettime(CLOCK_MONOTONIC, t); }

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: i2c-mark BUS ADDRESS COUNT FIRST\n");
        return 2;
    }
    char path[64];
    snprintf(path, sizeof path, "/dev/i2c-%s", argv[1]);
    long address = strtol(argv[2], NULL, 0), count = strtol(argv[3], NULL, 0), first = strtol(argv[4], NULL, 0);
    int fd = open(path, O_RDWR);
    if (fd < 0 || ioctl(fd, I2C_SLAVE, address) < 0) {
        perror(path);
        return 1;
    }
    for (long i = 0; i < count; i++) {
        unsigned char byte = (unsigned char)(first + i);
        struct timespec before, after, pause = {0, 20000000L};
        stamp(&before);
        ssize_t n = write(fd, &byte, 1);
        stamp(&after);
        if (n != 1) {
            perror("write");
            return 1;
        }
        printf("mark 0x%02x %ld.%09ld %ld.%09ld\n", byte, (long)before.tv_sec, before.tv_nsec, (long)after.tv_sec,
               after.tv_nsec);
        nanosleep(&pause, NULL);
    }
    return 0;
}
