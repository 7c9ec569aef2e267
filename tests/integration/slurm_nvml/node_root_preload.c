/* LD_PRELOAD for Slurm's own gpu/nvml plugin on a simulated node: the absolute paths it and
 * slurmd read for NVIDIA GPUs (/proc/driver/nvidia..., /dev/nvidia...) are read under
 * $XPART_ROOT instead, as xpart's discovery does. A mount namespace cannot do this here:
 * procfs has no /proc/driver to mount over and overlayfs refuses procfs as a lower layer.
 * Test code only; every other path goes to the C library unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *redirect(const char *path, char *buf, size_t size) {
	const char *root = getenv("XPART_ROOT");
	if (!path || !root || !*root)
		return path;
	if (strncmp(path, "/proc/driver/nvidia", 19) && strncmp(path, "/dev/nvidia", 11))
		return path;
	if ((size_t)snprintf(buf, size, "%s%s", root, path) >= size)
		return path;
	return buf;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* One wrapper per call: the path argument redirected, the rest passed on. */
#define WRAP_PATH(ret, name, T2)                                   \
	ret name(const char *path, T2 arg) {                       \
		char b[4096];                                      \
		return NEXT(name)(redirect(path, b, sizeof b), arg); \
	}
WRAP_PATH(FILE *, fopen, const char *)
WRAP_PATH(FILE *, fopen64, const char *)
WRAP_PATH(int, stat, struct stat *)
WRAP_PATH(int, stat64, struct stat64 *)
WRAP_PATH(int, lstat, struct stat *)
WRAP_PATH(int, access, int)

#define WRAP_OPEN(name)                                                       \
	int name(const char *path, int flags, ...) {                          \
		char b[4096];                                                 \
		mode_t mode = 0;                                              \
		if (flags & (O_CREAT | O_TMPFILE)) {                          \
			va_list ap;                                           \
			va_start(ap, flags);                                  \
			mode = va_arg(ap, mode_t);                            \
			va_end(ap);                                           \
		}                                                             \
		return NEXT(name)(redirect(path, b, sizeof b), flags, mode); \
	}
WRAP_OPEN(open)
WRAP_OPEN(open64)
