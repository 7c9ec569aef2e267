// SLURMD_TRES_BIND read as Slurm 22.05's _parse_tres_bind reads it, and the map/mask entry a
// task gets, including the x86 behaviour of the mask bound on nodes of 32 GPUs or more.
#include <gtest/gtest.h>

#include "libxpart/slurm_text/gpu_bind_list.hpp"
#include "libxpart/slurm_text/tres_bind.hpp"

namespace xpart {
namespace {

using K = GpuBind::Kind;

struct ParseCase {
    const char* name;
    const char* tres_bind;
    GpuBind want;
};

class ParseTresBind : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseTresBind, AsSlurmReadsIt) {
    EXPECT_EQ(parse_tres_bind(GetParam().tres_bind), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseTresBind,
    ::testing::Values(
        ParseCase{"closest", "gpu:closest", {K::Closest, 0, 0, ""}},
        ParseCase{"closest_any_case", "gpu:CLOSEST", {K::Closest, 0, 0, ""}},
        ParseCase{"single", "gpu:single:2", {K::Closest, 2, 0, ""}},
        ParseCase{"single_hex", "gpu:single:0x3", {K::Closest, 3, 0, ""}},
        ParseCase{"single_invalid_reads_1", "gpu:single:-3", {K::Closest, 1, 0, ""}},
        ParseCase{"map", "gpu:map_gpu:1,0", {K::Map, 0, 0, "1,0"}},
        ParseCase{"verbose_mask", "gpu:verbose,mask_gpu:0x3*2", {K::Mask, 0, 0, "0x3*2"}},
        ParseCase{"per_task", "gpu:per_task:2", {K::PerTask, 0, 2, ""}},
        ParseCase{"per_task_typed_leading_digits", "gpu:per_task:2g.10gb:1", {K::PerTask, 0, 2, ""}},
        ParseCase{"per_task_typed_reads_zero", "gpu:per_task:cpx:1", {K::None, 0, 0, ""}},
        ParseCase{"per_task_zero", "gpu:per_task:0", {K::None, 0, 0, ""}},
        ParseCase{"none", "gpu:none", {K::None, 0, 0, ""}},
        ParseCase{"abbreviated_closest_is_nothing", "gpu:c", {K::None, 0, 0, ""}},
        ParseCase{"not_gpu", "nic:closest", {K::None, 0, 0, ""}}),
    [](const auto& info) { return std::string(info.param.name); });

std::vector<bool> pick(const std::string& list, unsigned task, std::size_t size, bool is_map) {
    auto r = gpu_bind_list_pick(list, task, size, is_map);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : std::vector<bool>{};
}

std::vector<bool> only(std::size_t size, std::vector<std::size_t> set) {
    std::vector<bool> out(size, false);
    for (auto i : set) out[i] = true;
    return out;
}

TEST(TresBindIsNone, OnlyTheNoneDirective) {
    EXPECT_TRUE(tres_bind_is_none("gres/gpu:none"));
    EXPECT_TRUE(tres_bind_is_none("gpu:verbose,none"));
    EXPECT_FALSE(tres_bind_is_none("gres/gpu:closest"));
    EXPECT_FALSE(tres_bind_is_none("gres/gpu:per_task:1"));
    EXPECT_FALSE(tres_bind_is_none(""));
    EXPECT_FALSE(tres_bind_is_none("gres/nic:none"));
}

TEST(GpuBindList, RepeatsAndStartsOver) {
    EXPECT_EQ(pick("3*2,1", 1, 4, true), only(4, {3}));
    EXPECT_EQ(pick("3*2,1", 2, 4, true), only(4, {1}));
    EXPECT_EQ(pick("3*2,1", 3, 4, true), only(4, {3}));
    EXPECT_EQ(pick("2*0,1", 1, 4, true), only(4, {1}));  // *0 counts as 1
    EXPECT_EQ(pick(",,2", 0, 4, true), only(4, {2}));    // empty fields skipped
}

TEST(GpuBindList, RejectedValuesNameNothing) {
    EXPECT_EQ(pick("4", 0, 4, true), only(4, {}));
    EXPECT_EQ(pick("0x10", 0, 4, false), only(4, {}));
    EXPECT_EQ(pick("0", 0, 4, false), only(4, {}));
    EXPECT_EQ(pick("0xf", 0, 4, false), only(4, {0, 1, 2, 3}));
}

TEST(GpuBindList, MaskBoundShiftsModulo32) {
    EXPECT_EQ(pick("0x1", 0, 32, false), only(32, {}));
    EXPECT_EQ(pick("0x1", 0, 64, false), only(64, {}));
    EXPECT_EQ(pick("0x3", 0, 33, false), only(33, {}));  // bound 1
    EXPECT_EQ(pick("0x1", 0, 33, false), only(33, {0, 32}));
}

TEST(GpuBindList, UnevaluableLists) {
    EXPECT_FALSE(gpu_bind_list_pick("", 0, 4, true).ok());
    EXPECT_FALSE(gpu_bind_list_pick(",", 0, 4, true).ok());
    EXPECT_FALSE(gpu_bind_list_pick("1*-2", 0, 4, true).ok());
}

}  // namespace
}  // namespace xpart
