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

#define XPART_NODE_DISCOVERY_ABI 1
#define XPART_NODE_DISCOVERY_FILE "xpart_node_discovery.so"

/* One gres.conf Name=gpu line as Slurm parsed it. */
struct xpart_configured_gpu {
    const char *source; /* "gres.conf Name=gpu record #2" */
    const char *type;   /* "" when none */
    const char *const *files;
    size_t file_count;
    uint64_t count;
};

struct xpart_node_answer {
    char *records;           /* serialize_records() text */
    char *warnings;          /* one line each, each ending in '\n' */
    char *errors;            /* likewise */
    uint32_t amd_index_mode; /* xpart::AmdIndexMode */
};

/* Reads xpart.conf, discovers the node, plans its records and writes the node cache. Returns
 * 0 and fills `answer` (release it with xpart_node_discovery_free), or -1 when `abi` is not
 * this module's. `series`: xpart::SlurmSeries. Never throws. */
int xpart_node_discovery(uint32_t abi, const char *conf_path, uint32_t series,
                         const struct xpart_configured_gpu *configured, size_t configured_count,
                         struct xpart_node_answer *answer)
    __attribute__((visibility("default")));
void xpart_node_discovery_free(struct xpart_node_answer *answer)
    __attribute__((visibility("default")));

typedef int xpart_node_discovery_fn(uint32_t, const char *, uint32_t,
                                    const struct xpart_configured_gpu *, size_t,
                                    struct xpart_node_answer *);
typedef void xpart_node_discovery_free_fn(struct xpart_node_answer *);

#ifdef __cplusplus
}
#endif

#endif
