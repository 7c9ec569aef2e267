/* plugin_load LIBSLURMFULL PLUGIN: loads one Slurm plugin the way Slurm's own loader does, for
 * tests/bench/slurm_step_launch_bench to count its cost with
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=load_plugin
 * First libslurmfull.so is opened RTLD_NOW|RTLD_GLOBAL, outside the counted function: in slurmd
 * the same symbols (debug(), xfree(), list_*...) are already there, exported by the daemon.
 * Then load_plugin() does what plugin_load_from_file() in src/common/plugin.c does in Slurm
 * 22.05 and 24.11: dlopen(path, RTLD_LAZY), dlsym() of plugin_name, plugin_type and
 * plugin_version (its symbol check), then dlsym("init") and init(). Exit status 0 when init()
 * returned 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_fn)(void);

/* Not static, not inlined: callgrind toggles collection on entering and leaving it. */
__attribute__((noinline)) int load_plugin(const char* path);

int load_plugin(const char* path) {
    void* plug = dlopen(path, RTLD_LAZY);
    if (!plug) {
        fprintf(stderr, "plugin_load: dlopen(%s): %s\n", path, dlerror());
        return -1;
    }
    if (!dlsym(plug, "plugin_name") || !dlsym(plug, "plugin_type") ||
        !dlsym(plug, "plugin_version")) {
        fprintf(stderr, "plugin_load: %s is not a Slurm plugin\n", path);
        return -1;
    }
    void* sym = dlsym(plug, "init");
    if (sym) {
        init_fn init;
        memcpy(&init, &sym, sizeof init); /* object to function pointer without a cast */
        if (init() != 0) {
            fprintf(stderr, "plugin_load: %s: init() failed\n", path);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBSLURMFULL PLUGIN\n", argv[0]);
        return 2;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "plugin_load: dlopen(%s): %s\n", argv[1], dlerror());
        return 1;
    }
    return load_plugin(argv[2]) == 0 ? 0 : 1;
}
