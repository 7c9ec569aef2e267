/* Every symbol gres_gpu.so exports: what Slurm's plugin loader dlsym()s, per series (22.05:
 * 13 entry points, 24.11 and later: 11). The adapter defines them and tests/gres_plugin/
 * ops_signature_test.c assigns each to the matching member of Slurm's own slurm_gres_ops_t,
 * so a signature that drifts from the headers fails the build. Lists are spelled
 * `struct xlist *`, which is List on 22.05 and list_t * from 24.11. */
#ifndef XPART_GRES_GPU_ENTRY_H
#define XPART_GRES_GPU_ENTRY_H

#include "gres_plugin/slurm_api.h"

#define XPART_EXPORT __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

XPART_EXPORT extern const char plugin_name[];
XPART_EXPORT extern const char plugin_type[];
XPART_EXPORT extern const uint32_t plugin_version;

XPART_EXPORT int init(void);
XPART_EXPORT int fini(void);

XPART_EXPORT int gres_p_node_config_load(struct xlist *gres_conf_list,
                                         node_config_load_t *node_conf);
XPART_EXPORT void gres_p_job_set_env(char ***job_env_ptr, bitstr_t *gres_bit_alloc,
                                     uint64_t gres_cnt, gres_internal_flags_t flags);
XPART_EXPORT void gres_p_step_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
                                      uint64_t gres_cnt, gres_internal_flags_t flags);
XPART_EXPORT void gres_p_task_set_env(char ***step_env_ptr, bitstr_t *gres_bit_alloc,
                                      uint64_t gres_cnt, bitstr_t *usable_gres,
                                      gres_internal_flags_t flags);
XPART_EXPORT void gres_p_send_stepd(buf_t *buffer);
XPART_EXPORT void gres_p_recv_stepd(buf_t *buffer);
XPART_EXPORT struct xlist *gres_p_get_devices(void);
XPART_EXPORT void gres_p_step_hardware_init(bitstr_t *usable_gpus, char *tres_freq);
XPART_EXPORT void gres_p_step_hardware_fini(void);

#if XPART_SLURM_PREP_API
/* Prolog and Epilog environment. */
XPART_EXPORT gres_prep_t *gres_p_prep_build_env(gres_job_state_t *gres_js);
XPART_EXPORT void gres_p_prep_set_env(char ***prep_env_ptr, gres_prep_t *gres_prep,
                                      int node_inx);
#else
XPART_EXPORT int gres_p_get_job_info(gres_job_state_t *gres_js, uint32_t node_inx,
                                     enum gres_job_data_type data_type, void *data);
XPART_EXPORT int gres_p_get_step_info(gres_step_state_t *gres_ss, uint32_t node_inx,
                                      enum gres_step_data_type data_type, void *data);
XPART_EXPORT gres_epilog_info_t *gres_p_epilog_build_env(gres_job_state_t *gres_js);
XPART_EXPORT void gres_p_epilog_set_env(char ***epilog_env_ptr, gres_epilog_info_t *gres_ei,
                                        int node_inx);
#endif

#ifdef __cplusplus
}
#endif

#endif
