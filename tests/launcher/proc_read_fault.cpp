// LD_PRELOAD shim for tests: read(2) of another process's /proc/<pid>/cmdline fails with ESRCH,
// as it does when that process is reaped between open() and read(). Lets a test meet, every
// time, a race that a daemon otherwise meets about once in a few hundred departing clients.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern "C" __attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t count) {
    using ReadFn = ssize_t (*)(int, void*, size_t);
    static ReadFn real = reinterpret_cast<ReadFn>(dlsym(RTLD_NEXT, "read"));
    char link[64], target[256];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
        target[n] = '\0';
        int pid = 0;
        char rest[16] = "";
        if (std::sscanf(target, "/proc/%d/%15s", &pid, rest) == 2 && pid != getpid() &&
            std::strcmp(rest, "cmdline") == 0) {
            errno = ESRCH;
            return -1;
        }
    }
    return real(fd, buf, count);
}
