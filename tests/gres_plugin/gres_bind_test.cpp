#include <gtest/gtest.h>

#include "libxpart/gres_bind.hpp"

namespace xpart {
namespace {

struct BindCase {
    const char* name;
    const char* tres_bind;
    unsigned local_id;
    std::vector<bool> alloc;
    bool local_indices;
    std::optional<std::vector<bool>> want;
};

class TaskShare : public ::testing::TestWithParam<BindCase> {};

TEST_P(TaskShare, MatchesSlurmsDeviceConstraint) {
    const BindCase& c = GetParam();
    EXPECT_EQ(task_share(parse_tres_bind(c.tres_bind), c.local_id, c.alloc, c.local_indices), c.want);
}

using V = std::vector<bool>;
const V kAlloc = {false, true, true, false, true};  // allocated: node GPUs 1, 2, 4

INSTANTIATE_TEST_SUITE_P(
    Cases, TaskShare,
    ::testing::Values(
        BindCase{"per_task_first", "gpu:per_task:1", 0, kAlloc, true, V{false, true, false, false, false}},
        BindCase{"per_task_second", "gpu:per_task:1", 1, kAlloc, true, V{false, false, true, false, false}},
        BindCase{"per_task_typed", "gpu:per_task:1g.10gb:1", 2, kAlloc, true, V{false, false, false, false, true}},
        BindCase{"per_task_two_each", "gpu:per_task:2", 1, kAlloc, false, V{false, false, false, false, true}},
        BindCase{"per_task_beyond_falls_back_to_first", "gpu:per_task:1", 5, kAlloc, true, V{false, true, false, false, false}},
        BindCase{"map_local", "gpu:map_gpu:2,0", 0, kAlloc, true, V{false, false, false, false, true}},
        BindCase{"map_local_second", "gpu:map_gpu:2,0", 1, kAlloc, true, V{false, true, false, false, false}},
        BindCase{"map_wraps", "gpu:map_gpu:2,0", 2, kAlloc, true, V{false, false, false, false, true}},
        BindCase{"map_repeat", "gpu:verbose,map_gpu:1*2,2", 1, kAlloc, true, V{false, false, true, false, false}},
        BindCase{"map_global", "gpu:map_gpu:4", 0, kAlloc, false, V{false, false, false, false, true}},
        BindCase{"map_global_not_allocated", "gpu:map_gpu:3", 0, kAlloc, false, V{false, true, false, false, false}},
        BindCase{"mask_local", "gpu:mask_gpu:0x6", 0, kAlloc, true, V{false, false, true, false, true}},
        BindCase{"mask_out_of_range", "gpu:mask_gpu:0x40", 0, kAlloc, true, V{false, true, false, false, false}},
        BindCase{"closest_uses_slurms_set", "gpu:closest", 0, kAlloc, true, std::nullopt},
        BindCase{"no_gpu_binding", "nic:closest", 0, kAlloc, true, std::nullopt}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart
