// The seam between the series-independent adapter (gres_gpu.cpp) and the one file per Slurm
// series that configure compiles in (series_22_05.cpp or series_since_24_11.cpp): the few Slurm
// calls whose names or signatures differ between series, and the series' own entry points.
#pragma once

#include <cstdint>

#include "gres_plugin/gres_gpu_entry.h"
#include "libxpart/slurm_type_naming.hpp"

namespace xpart::gres_plugin {

// One gres.conf-equivalent record (count 1) appended to a gres_slurmd_conf_t list.
struct GresLine {
    const char* name;
    uint32_t cpu_cnt;
    char* cpus;             // abstract CPU range, or nullptr
    bitstr_t* cpus_bitmap;  // machine CPU bitmap, or nullptr
    const char* files;
    const char* type;
    const char* unique_id;  // nullptr: none
    uint32_t env_flags;     // GRES_CONF_ENV_*
    bool mig;               // an NVIDIA MIG device (the series may flag it)
};
void add_gres(struct xlist* list, const GresLine& line);

// Slurm's own device-list building from the final records (gres_devices for task/cgroup).
int load_devices(struct xlist* gres_conf_list, const char* name, node_config_load_t* node_conf,
                 struct xlist** devices);

// Slurm's own transport of the device list to slurmstepd.
void send_devices(buf_t* buffer, struct xlist* devices);
void recv_devices(buf_t* buffer, struct xlist** devices);

// Whether the core's model of Slurm's per-task GPU rule (libxpart/gres/gres_bind) is this
// series' rule: 22.05's is; 24.11's and later are not modelled yet
// (TaskBinding::slurm_rule_modelled).
extern const bool kTaskRuleModelled;

// The series' own autodetect names, for TypeNaming=slurm (libxpart/slurm_type_naming).
extern const SlurmSeries kSeries;

// Prolog/Epilog environment from one node's allocation (series-independent part).
void set_prep_env(char*** env, bitstr_t* node_alloc);

// The per-node allocation copy Slurm keeps for the Prolog/Epilog (gres_epilog_info_t on
// 22.05, gres_prep_t on 24.11 and later: same two members, in 26.05.3 still).
template <class Prep>
Prep* copy_allocation(gres_job_state_t* gres_js) {
    auto* prep = static_cast<Prep*>(xmalloc(sizeof(Prep)));
    prep->node_cnt = gres_js->node_cnt;
    prep->gres_bit_alloc =
        static_cast<bitstr_t**>(xcalloc(prep->node_cnt ? prep->node_cnt : 1, sizeof(bitstr_t*)));
    for (uint32_t i = 0; i < prep->node_cnt; ++i)
        if (gres_js->gres_bit_alloc && gres_js->gres_bit_alloc[i])
            prep->gres_bit_alloc[i] = bit_copy(gres_js->gres_bit_alloc[i]);
    return prep;
}

template <class Prep>
void set_prep_env(char*** env, Prep* prep, int node_inx) {
    if (!prep || node_inx < 0 || static_cast<uint32_t>(node_inx) >= prep->node_cnt ||
        !prep->gres_bit_alloc)
        return;
    set_prep_env(env, prep->gres_bit_alloc[node_inx]);
}

}  // namespace xpart::gres_plugin
