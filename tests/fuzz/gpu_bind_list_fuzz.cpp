// --gpu-bind=map_gpu:/mask_gpu: lists (from SLURMD_TRES_BIND). The first two bytes choose the
// task's local id and the node's GPU count (0..79: past 64, where the 32-bit shift wraps).
#include "libxpart/slurm_text/gpu_bind_list.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(gpu_bind_list) {
    if (size < 2) return;
    const unsigned local_id = data[0] & 0x7f;
    const std::size_t gpus = data[1] % 80;
    const bool is_map = data[0] & 0x80;
    auto pick = xpart::gpu_bind_list_pick(xpart::fuzz::text_of(data + 2, size - 2), local_id, gpus, is_map);
    XPART_FUZZ_CHECK(!pick || pick->size() == gpus);
}
