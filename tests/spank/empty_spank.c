/* The baseline of tests/spank/spank_load_test: a SPANK plugin that does nothing. */
#include <slurm/spank.h>

SPANK_PLUGIN(empty, 1)

int slurm_spank_init(spank_t sp, int ac, char** av) {
    (void)sp, (void)ac, (void)av;
    return 0;
}
