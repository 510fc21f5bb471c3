/*
 * The power-cut scenario's mutants (scripts/vm-test --powercut-mutant MODE): an LD_PRELOAD shim
 * for the guest that breaks the state file's durability the way careless code does, so that the
 * scenario can show it catches it. The program itself is unchanged; PC_MUTANT picks the break:
 *
 *   nodirsync  fsync() of a directory returns 0 without syncing: the rename of state.json.tmp
 *              over state.json stays in the guest's memory (ext4's running journal transaction)
 *              until the next commit (5 s) or the next file fsync, so a cut soon after a wrong
 *              code's write can lose it: the old file, a free try.
 *   inplace    rename(X.tmp, X) copies X.tmp's bytes into X (O_TRUNC, no fsync) and unlinks
 *              X.tmp: the file is rewritten in place, and a cut leaves it empty or torn.
 *
 * Anything else (or no PC_MUTANT) leaves every call alone. Built by vm/powercut/host.sh:
 * gcc -shared -fPIC -O2 -Wall -Wextra -Werror (against the host's glibc, which the guest runs).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int mode(const char *name) {
    const char *value = getenv("PC_MUTANT");
    return value != NULL && strcmp(value, name) == 0;
}

int fsync(int fd) {
    static int (*real_fsync)(int);
    if (real_fsync == NULL) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    struct stat st;
    if (mode("nodirsync") && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    return real_fsync(fd);
}

int rename(const char *from, const char *to) {
    static int (*real_rename)(const char *, const char *);
    if (real_rename == NULL) real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    size_t length = strlen(from);
    if (!mode("inplace") || length < 4 || strcmp(from + length - 4, ".tmp") != 0) return real_rename(from, to);
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int saved = errno;
        close(in);
        errno = saved;
        return -1;
    }
    char buffer[4096];
    ssize_t n;
    int result = 0;
    while ((n = read(in, buffer, sizeof buffer)) > 0) {
        if (write(out, buffer, (size_t)n) != n) {
            result = -1;
            break;
        }
    }
    if (n < 0) result = -1;
    close(in);
    if (close(out) != 0) result = -1;
    if (result == 0) unlink(from);
    return result;
}
