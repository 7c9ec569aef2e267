/* Slurm's helpers shared by its gres plugins (device list, stepd transport) are not part of
 * libslurmfull: every gres plugin compiles them in. Built from the configured Slurm source of
 * the installed version, unchanged. */
#include "src/plugins/gres/common/gres_common.c"
