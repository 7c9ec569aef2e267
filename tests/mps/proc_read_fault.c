/* LD_PRELOAD shim for tests: read(2) of another process's /proc/<pid>/cmdline fails with ESRCH,
 * as it does when that process is reaped between open() and read(). Lets a test meet, every
 * time, a race that a daemon otherwise meets about once in a few hundred departing clients.
 * Plain C, built without sanitizers: it is preloaded into programs that may have none. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t count) {
    typedef ssize_t (*read_fn)(int, void*, size_t);
    static read_fn real;
    if (!real) *(void**)&real = dlsym(RTLD_NEXT, "read");
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
        int pid = 0;
        char rest[16] = "";
        target[n] = '\0';
        if (sscanf(target, "/proc/%d/%15s", &pid, rest) == 2 && pid != getpid() &&
            strcmp(rest, "cmdline") == 0) {
            errno = ESRCH;
            return -1;
        }
    }
    return real(fd, buf, count);
}
