// Slurm 22.05: add_gres_to_list takes the record's fields, the device list and its stepd
// transport come from gres_common.c (compiled in), and four entry points exist only here.
#include <cerrno>

#include "gres_plugin/series.hpp"

namespace xpart::gres_plugin {

const SlurmSeries kSeries = SlurmSeries::S22_05;
const bool kTaskRuleModelled = true;

void add_gres(List list, const GresLine& l) {
    add_gres_to_list(list, const_cast<char*>(l.name), 1, static_cast<int>(l.cpu_cnt), l.cpus,
                     l.cpus_bitmap, const_cast<char*>(l.files), const_cast<char*>(l.type),
                     nullptr, const_cast<char*>(l.unique_id), l.env_flags);
}

int load_devices(List gres_conf_list, const char* name, node_config_load_t* node_conf,
                 List* devices) {
    return common_node_config_load(gres_conf_list, const_cast<char*>(name), node_conf, devices);
}

void send_devices(buf_t* buffer, List devices) { common_send_stepd(buffer, devices); }
void recv_devices(buf_t* buffer, List* devices) { common_recv_stepd(buffer, devices); }

}  // namespace xpart::gres_plugin

int gres_p_get_job_info(gres_job_state_t*, uint32_t, enum gres_job_data_type, void*) {
    return EINVAL;  // no plugin-specific job data
}

int gres_p_get_step_info(gres_step_state_t*, uint32_t, enum gres_step_data_type, void*) {
    return EINVAL;  // no plugin-specific step data
}

gres_epilog_info_t* gres_p_epilog_build_env(gres_job_state_t* gres_js) {
    return xpart::gres_plugin::copy_allocation<gres_epilog_info_t>(gres_js);
}

void gres_p_epilog_set_env(char*** epilog_env_ptr, gres_epilog_info_t* gres_ei, int node_inx) {
    xpart::gres_plugin::set_prep_env(epilog_env_ptr, gres_ei, node_inx);
}
