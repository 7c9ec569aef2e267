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

FILE *fopen(const char *path, const char *mode) {
	char b[4096];
	return NEXT(fopen)(redirect(path, b, sizeof b), mode);
}
FILE *fopen64(const char *path, const char *mode) {
	char b[4096];
	return NEXT(fopen64)(redirect(path, b, sizeof b), mode);
}
static mode_t mode_arg(int flags, va_list ap) {
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}
int open(const char *path, int flags, ...) {
	char b[4096];
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	return NEXT(open)(redirect(path, b, sizeof b), flags, m);
}
int open64(const char *path, int flags, ...) {
	char b[4096];
	va_list ap;
	va_start(ap, flags);
	mode_t m = mode_arg(flags, ap);
	va_end(ap);
	return NEXT(open64)(redirect(path, b, sizeof b), flags, m);
}
int stat(const char *path, struct stat *st) {
	char b[4096];
	return NEXT(stat)(redirect(path, b, sizeof b), st);
}
int stat64(const char *path, struct stat64 *st) {
	char b[4096];
	return NEXT(stat64)(redirect(path, b, sizeof b), st);
}
int lstat(const char *path, struct stat *st) {
	char b[4096];
	return NEXT(lstat)(redirect(path, b, sizeof b), st);
}
int access(const char *path, int how) {
	char b[4096];
	return NEXT(access)(redirect(path, b, sizeof b), how);
}
