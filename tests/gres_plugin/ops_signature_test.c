/* Pins every gres_gpu.so entry point to Slurm's own ops table, for the series it was built for.
 * Compile time: gres_ops.h is cut at build time out of the configured Slurm source's gres.c
 * (src/common/ on 22.05, src/interfaces/ from 24.11)
 * (slurm_gres_ops_t and the syms[] its loader dlsym()s); each exported function's type must be
 * the type of the matching member. Run time: the built plugin loads with RTLD_NOW on top of
 * the installed libslurmfull.so (every Slurm symbol it imports exists), every name in syms[]
 * resolves, and plugin_version/plugin_type are what Slurm's loader requires: the same words
 * as the installed Slurm's own gres_gpu.so, whose syms[] resolve too. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gres_plugin/gres_gpu_entry.h"
#include "tests/gres_plugin/gres_ops.h"

#define SAME_TYPE(fn, member)                                                              \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn),                           \
                                                __typeof__(((slurm_gres_ops_t *)0)->member)), \
                   #fn " does not match slurm_gres_ops_t." #member)

SAME_TYPE(gres_p_node_config_load, node_config_load);
SAME_TYPE(gres_p_job_set_env, job_set_env);
SAME_TYPE(gres_p_step_set_env, step_set_env);
SAME_TYPE(gres_p_task_set_env, task_set_env);
SAME_TYPE(gres_p_send_stepd, send_stepd);
SAME_TYPE(gres_p_recv_stepd, recv_stepd);
SAME_TYPE(gres_p_get_devices, get_devices);
SAME_TYPE(gres_p_step_hardware_init, step_hardware_init);
SAME_TYPE(gres_p_step_hardware_fini, step_hardware_fini);
#if XPART_SLURM_PREP_API
SAME_TYPE(gres_p_prep_build_env, prep_build_env);
SAME_TYPE(gres_p_prep_set_env, prep_set_env);
#define ENTRY_POINTS 11
#else
SAME_TYPE(gres_p_get_job_info, job_info);
SAME_TYPE(gres_p_get_step_info, step_info);
SAME_TYPE(gres_p_epilog_build_env, epilog_build_env);
SAME_TYPE(gres_p_epilog_set_env, epilog_set_env);
#define ENTRY_POINTS 13
#endif
/* A member added to Slurm's table would be a mandatory symbol this plugin lacks. */
_Static_assert(sizeof(slurm_gres_ops_t) == ENTRY_POINTS * sizeof(void (*)(void)),
               "slurm_gres_ops_t has a member this plugin does not pin");

int main(void) {
    const char *builddir = getenv("XPART_BUILDDIR");
    char plugin[4096];
    snprintf(plugin, sizeof plugin, "%s/gres_plugin/.libs/gres_gpu.so", builddir ? builddir : ".");
    const char *slurmfull = XPART_SLURMFULL;
    int failures = 0;

    if (!dlopen(slurmfull, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "FAIL: %s\n", dlerror());
        return 1;
    }
    void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL: %s\n", dlerror());
        return 1;
    }
    if (sizeof(syms) / sizeof(syms[0]) != ENTRY_POINTS) {
        fprintf(stderr, "FAIL: Slurm's loader wants %zu symbols, this test knows %d\n",
                sizeof(syms) / sizeof(syms[0]), ENTRY_POINTS);
        failures++;
    }
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        if (!dlsym(h, syms[i])) {
            fprintf(stderr, "FAIL: %s not exported\n", syms[i]);
            failures++;
        }
    }
    const uint32_t *version = dlsym(h, "plugin_version");
    const char *type = dlsym(h, "plugin_type");
    if (!version || *version != SLURM_VERSION_NUMBER) {
        fprintf(stderr, "FAIL: plugin_version %#x, Slurm wants %#x\n", version ? *version : 0,
                SLURM_VERSION_NUMBER);
        failures++;
    }
    if (!type || strcmp(type, "gres/gpu") != 0) {
        fprintf(stderr, "FAIL: plugin_type '%s', want gres/gpu\n", type ? type : "(none)");
        failures++;
    }
    /* The installed Slurm's own gres/gpu: the loader takes both with the same words. */
    void *stock = dlopen(XPART_STOCK_GRES_GPU, RTLD_NOW | RTLD_LOCAL);
    if (!stock) {
        fprintf(stderr, "FAIL: %s\n", dlerror());
        return 1;
    }
    const uint32_t *stock_version = dlsym(stock, "plugin_version");
    const char *stock_type = dlsym(stock, "plugin_type");
    if (!stock_version || !version || *stock_version != *version) {
        fprintf(stderr, "FAIL: plugin_version %#x, %s has %#x\n", version ? *version : 0,
                XPART_STOCK_GRES_GPU, stock_version ? *stock_version : 0);
        failures++;
    }
    if (!stock_type || !type || strcmp(stock_type, type) != 0) {
        fprintf(stderr, "FAIL: plugin_type '%s', %s has '%s'\n", type ? type : "(none)",
                XPART_STOCK_GRES_GPU, stock_type ? stock_type : "(none)");
        failures++;
    }
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        if (!dlsym(stock, syms[i])) {
            fprintf(stderr, "FAIL: %s not in %s\n", syms[i], XPART_STOCK_GRES_GPU);
            failures++;
        }
    }
    printf("%s: the version word and plugin_type of %s\n", plugin, XPART_STOCK_GRES_GPU);
    printf("%s: %zu entry points pinned and resolved, version %#x\n", plugin,
           sizeof(syms) / sizeof(syms[0]), SLURM_VERSION_NUMBER);
    return failures ? 1 : 0;
}
