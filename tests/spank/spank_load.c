/* spank_load PLUGIN [ARG...]: loads one SPANK plugin the way slurmstepd does and runs its init
 * path in the remote context of a task step, for tests/spank/spank_load_test to count with
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=load_and_init
 * load_and_init() does what Slurm's plugstack.c does for each plugstack.conf line: dlopen(path,
 * RTLD_LAZY) (plugin_load_from_file), dlsym of the plugin symbols, then slurm_spank_init and
 * slurm_spank_init_post_opt with the line's arguments (ARG...). The SPANK and log calls a plugin
 * makes are this program's (exported: -rdynamic): step 3 of job 7, as uid 1000, no option used.
 * Then prints "module: loaded" or "module: not loaded": whether xpart's step module
 * (xpart_spank_step.so) is mapped now. Exit status 0 when both calls returned 0, 1 otherwise. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <slurm/spank.h>

spank_err_t spank_option_register(spank_t sp, struct spank_option* opt) {
    (void)sp;
    (void)opt;
    return ESPANK_SUCCESS;
}

spank_context_t spank_context(void) { return S_CTX_REMOTE; }

spank_err_t spank_get_item(spank_t sp, spank_item_t item, ...) {
    (void)sp;
    va_list ap;
    va_start(ap, item);
    spank_err_t rc = ESPANK_SUCCESS;
    switch (item) {
    case S_JOB_ID: *va_arg(ap, uint32_t*) = 7; break;
    case S_JOB_STEPID: *va_arg(ap, uint32_t*) = 3; break;
    case S_JOB_LOCAL_TASK_COUNT: *va_arg(ap, uint32_t*) = 1; break;
    case S_JOB_UID: *va_arg(ap, uid_t*) = 1000; break;
    case S_JOB_GID: *va_arg(ap, gid_t*) = 1000; break;
    default: rc = ESPANK_NOT_AVAIL; break;
    }
    va_end(ap);
    return rc;
}

spank_err_t spank_setenv(spank_t sp, const char* var, const char* val, int overwrite) {
    (void)sp, (void)var, (void)val, (void)overwrite;
    return ESPANK_SUCCESS;
}

spank_err_t spank_unsetenv(spank_t sp, const char* var) {
    (void)sp, (void)var;
    return ESPANK_SUCCESS;
}

static void say(const char* level, const char* format, va_list ap) {
    fprintf(stderr, "spank_load: %s: ", level);
    vfprintf(stderr, format, ap);
    fputc('\n', stderr);
}

void slurm_info(const char* format, ...) {
    va_list ap;
    va_start(ap, format);
    say("info", format, ap);
    va_end(ap);
}

void slurm_error(const char* format, ...) {
    va_list ap;
    va_start(ap, format);
    say("error", format, ap);
    va_end(ap);
}

/* Not static, not inlined: callgrind toggles collection on entering and leaving it. */
__attribute__((noinline)) int load_and_init(const char* path, int ac, char** av);

int load_and_init(const char* path, int ac, char** av) {
    void* plug = dlopen(path, RTLD_LAZY);
    if (!plug) {
        fprintf(stderr, "spank_load: dlopen(%s): %s\n", path, dlerror());
        return -1;
    }
    if (!dlsym(plug, "plugin_name") || !dlsym(plug, "plugin_type") || !dlsym(plug, "plugin_version")) {
        fprintf(stderr, "spank_load: %s is not a Slurm plugin\n", path);
        return -1;
    }
    const char* entry[] = {"slurm_spank_init", "slurm_spank_init_post_opt"};
    for (size_t i = 0; i < sizeof entry / sizeof entry[0]; ++i) {
        void* sym = dlsym(plug, entry[i]);
        if (!sym) continue;
        spank_f* fn;
        memcpy(&fn, &sym, sizeof fn); /* object to function pointer without a cast */
        if (fn(NULL, ac, av) != 0) {
            fprintf(stderr, "spank_load: %s: %s failed\n", path, entry[i]);
            return -1;
        }
    }
    return 0;
}

static int module_mapped(void) {
    FILE* maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (maps && fgets(line, sizeof line, maps))
        if (strstr(line, "/xpart_spank_step.so")) found = 1;
    if (maps) fclose(maps);
    return found;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PLUGIN [ARG...]\n", argv[0]);
        return 2;
    }
    const int rc = load_and_init(argv[1], argc - 2, argv + 2);
    printf("module: %s\n", module_mapped() ? "loaded" : "not loaded");
    return rc == 0 ? 0 : 1;
}
