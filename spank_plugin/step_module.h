/* The seam between xpart.so, the SPANK plugin's front, which every srun, sbatch, salloc and
 * slurmstepd loads, and xpart_spank_step.so, the step's work (plan, confinement, task
 * environment, MPS), which the front loads only for a step it acts on (an --xpart-* option, or
 * a site default that binds) and for the job's Epilog. Plain C, so the two objects share no C++
 * state; both come from one build and sit in one directory, and the ABI number catches a mixed
 * installation. Each function returns what its SPANK entry point returns and logs its own lines
 * ("xpart: ..."); none throws. spank_t is `struct spank_handle *` (slurm/spank.h). */
#ifndef XPART_SPANK_STEP_MODULE_H
#define XPART_SPANK_STEP_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XPART_STEP_MODULE_ABI 1
#define XPART_STEP_MODULE_FILE "xpart_spank_step.so"

struct spank_handle;

struct xpart_step_module {
    /* Remote, root, before the tasks fork: the step begins with the plugstack.conf arguments
     * (ac, av) and the user's options ("name=value", as given) over them. */
    int (*init_post_opt)(struct spank_handle *sp, int ac, char **av, const char *const *user_options,
                         size_t user_option_count);
    int (*task_post_fork)(struct spank_handle *sp); /* the task confined */
    int (*task_init)(struct spank_handle *sp);      /* the task's environment */
    int (*task_exit)(struct spank_handle *sp);
    int (*exit)(struct spank_handle *sp); /* the step's end */
    /* The job's Epilog (slurm_spank_init is not called there): its MPS daemons. */
    int (*job_epilog)(struct spank_handle *sp, int ac, char **av);
};

/* The module's table, or NULL when `abi` is not the one it serves. */
const struct xpart_step_module *xpart_spank_step(uint32_t abi) __attribute__((visibility("default")));
typedef const struct xpart_step_module *xpart_spank_step_fn(uint32_t);

#ifdef __cplusplus
}
#endif

#endif
