/* The seam between gres_gpu.so, which every Slurm process that uses GRES loads, and
 * xpart_node_discovery.so, which only slurmd loads (at node_config_load): discovery, NVML,
 * sysfs parsing, xpart.conf and the node cache stay out of slurmctld and every slurmstepd.
 * Plain C and strings only, so the two objects share no C++ runtime state; the records travel
 * in the same text as to slurmstepd (libxpart/gres_record_transport.cpp). Both objects come
 * from one build and sit in one directory; the ABI number catches a mixed installation. */
#ifndef XPART_NODE_DISCOVERY_H
#define XPART_NODE_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XPART_NODE_DISCOVERY_ABI 2
#define XPART_NODE_DISCOVERY_FILE "xpart_node_discovery.so"

struct xpart_node_answer {
    char *records;           /* serialize_records() text */
    char *warnings;          /* one line each, each ending in '\n' */
    char *errors;            /* likewise */
    uint32_t amd_index_mode; /* xpart::AmdIndexMode */
};

/* Reads xpart.conf, discovers the node, checks slurmd's gres.conf (`gres_conf_path`, the
 * records of `node_name`) against it, plans its records and writes the node cache. Returns
 * 0 and fills `answer` (release it with xpart_node_discovery_free), or -1 when `abi` is not
 * this module's. `series`: xpart::SlurmSeries. Never throws. */
int xpart_node_discovery(uint32_t abi, const char *conf_path, const char *gres_conf_path,
                         const char *node_name, uint32_t series, struct xpart_node_answer *answer)
    __attribute__((visibility("default")));
void xpart_node_discovery_free(struct xpart_node_answer *answer)
    __attribute__((visibility("default")));

typedef int xpart_node_discovery_fn(uint32_t, const char *, const char *, const char *,
                                    uint32_t, struct xpart_node_answer *);
typedef void xpart_node_discovery_free_fn(struct xpart_node_answer *);

#ifdef __cplusplus
}
#endif

#endif
