// Slurm 24.11, 25.11 and 26.05 (one plugin interface, XPART_SLURM_PREP_API): add_gres_to_list
// takes a gres_slurmd_conf_t, the device list and its stepd transport are libslurmfull's
// (gres_node_config_load, gres_send/recv_stepd), and the Prolog/Epilog entry points are
// prep_build_env/prep_set_env. What differs between the three is in Slurm's headers this file
// is compiled against (gres_device_t gained `flags` before `path` in 25.11; 26.05 reuses bit 14,
// GRES_CONF_GLOBAL_INDEX, as GRES_CONF_UUID): xpart sets neither, so one source serves all.
#include "gres_plugin/series.hpp"

namespace xpart::gres_plugin {

const SlurmSeries kSeries = SlurmSeries::XPART_SLURM_SERIES;
const bool kTaskRuleModelled = false;

void add_gres(list_t* list, const GresLine& l) {
    gres_slurmd_conf_t conf = {};
    conf.config_flags = l.env_flags;
#ifdef GRES_CONF_MIG
    // 25.11 on: stock gpu/nvml marks its MIG records so (gres_node_config_load turns it into
    // GRES_DEV_MIG on 25.11, slurmd -G prints "MIG"); the same records say the same. Not
    // GRES_CONF_UUID, which 26.05's gpu/nvml adds too: on the GPU context it turns off Slurm's
    // local device index and consolidation in the task's set (_get_usable_gres), which
    // xpart's environment reads; xpart puts the MIG UUIDs in the environment itself.
    if (l.mig) conf.config_flags |= GRES_CONF_MIG;
#endif
    conf.count = 1;
    conf.cpu_cnt = l.cpu_cnt;
    conf.cpus = l.cpus;
    conf.cpus_bitmap = l.cpus_bitmap;
    conf.file = const_cast<char*>(l.files);
    conf.name = const_cast<char*>(l.name);
    conf.type_name = const_cast<char*>(l.type);
    conf.unique_id = const_cast<char*>(l.unique_id);
    add_gres_to_list(list, &conf);  // copies every field
}

int load_devices(list_t* gres_conf_list, const char*, node_config_load_t* node_conf,
                 list_t** devices) {
    return gres_node_config_load(gres_conf_list, node_conf, devices);
}

void send_devices(buf_t* buffer, list_t* devices) { gres_send_stepd(buffer, devices); }
void recv_devices(buf_t* buffer, list_t** devices) { gres_recv_stepd(buffer, devices); }

}  // namespace xpart::gres_plugin

gres_prep_t* gres_p_prep_build_env(gres_job_state_t* gres_js) {
    return xpart::gres_plugin::copy_allocation<gres_prep_t>(gres_js);
}

void gres_p_prep_set_env(char*** prep_env_ptr, gres_prep_t* gres_prep, int node_inx) {
    xpart::gres_plugin::set_prep_env(prep_env_ptr, gres_prep, node_inx);
}
