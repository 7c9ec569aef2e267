// CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS (KEY=value lines)
// resolved against a node with MIG and XCP partitions, as the launcher and the SPANK plugin do.
#include "binding/allotment.hpp"
#include "spank_plugin/step_plan.hpp"
#include "tests/fixtures/sample_nodes.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(allotment) {
    static const xpart::Node node = xpart::fixtures::a100_80gb_mig_and_mi300x_node();
    const auto env = xpart::fuzz::env_of(xpart::fuzz::text_of(data, size));
    // Every other render node unopenable: ROCR renumbers, which is the harder path.
    auto openable = [](const xpart::DeviceFile& f) { return f.path.size() % 2 == 0; };
    (void)xpart::binding::resolve_allotment(node, env, openable);
    if (auto it = env.find("SLURM_STEP_GPUS"); it != env.end())
        (void)xpart::binding::from_record_indices(node, "SLURM_STEP_GPUS", it->second);
}
