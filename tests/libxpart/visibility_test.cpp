// The visibility model (libxpart/visibility.hpp): ROCm's numbering, and what each vendor
// variable says for a Slurm list, one rank's partition and a Prolog.
#include <gtest/gtest.h>

#include "libxpart/visibility.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

using Numbers = std::vector<std::optional<std::size_t>>;

struct NumberingCase {
    const char* name;
    std::vector<int> kfd_order;
    std::vector<bool> openable;
    Numbers want;
};

const NumberingCase kNumberings[] = {
    {"KfdOrder", {2, 3, 4}, {true, true, true}, {0, 1, 2}},
    {"ReverseListing", {9, 8, 7}, {true, true, true}, {2, 1, 0}},
    {"UnopenableSkipped", {2, 3, 4, 5}, {false, true, false, true}, {std::nullopt, 0, std::nullopt, 1}},
    {"TiesKeepTheListing", {1, 1, 0}, {true, true, true}, {1, 2, 0}},
    {"ShortOpenableIsClosed", {5, 4}, {true}, {0, std::nullopt}},
    // Two GPUs (KFD nodes 2..5 and 10, 9 as sysfs lists them): a job confined to 3 and 9
    // counts them 0 and 1; unconfined, each is its place in KFD order.
    {"TwoGpusOthersHidden", {2, 3, 4, 5, 10, 9}, {false, true, false, false, false, true},
     {std::nullopt, 0, std::nullopt, std::nullopt, std::nullopt, 1}},
    {"TwoGpusAllVisible", {2, 3, 4, 5, 10, 9}, {true, true, true, true, true, true}, {0, 1, 2, 3, 5, 4}},
    {"Empty", {}, {}, {}},
};

class RocmNumbers : public ::testing::TestWithParam<NumberingCase> {};

TEST_P(RocmNumbers, CountTheOpenableAgentsInKfdOrder) {
    EXPECT_EQ(rocm_numbers(GetParam().kfd_order, GetParam().openable), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Cases, RocmNumbers, ::testing::ValuesIn(kNumberings),
                         [](const auto& info) { return std::string(info.param.name); });

using Vars = std::vector<EnvChange>;
const std::nullopt_t kUnset = std::nullopt;

struct RankCase {
    const char* name;
    Node (*node)();
    std::size_t gpu, partition;
    std::string token;
    bool confined;
    Vars want;
};

Node a100_mig() { return fixtures::a100_80gb_mig_node(); }
Node mi300x() { return fixtures::mi300x_cpx_node(); }
const std::string kMig = fixtures::mig_uuid(0, 9);
const std::string kXcp5 = fixtures::amd_gpu_uuid(0) + "/5";

const RankCase kRanks[] = {
    {"NvidiaMig", a100_mig, 0, 1, "ignored", false,
     {{"CUDA_VISIBLE_DEVICES", kMig}, {"ROCR_VISIBLE_DEVICES", kUnset},
      {"HIP_VISIBLE_DEVICES", kUnset}, {"GPU_DEVICE_ORDINAL", kMig}, {"XPART_PARTITION", kMig}}},
    {"NvidiaConfinedIsTheSame", a100_mig, 0, 1, "ignored", true,
     {{"CUDA_VISIBLE_DEVICES", kMig}, {"ROCR_VISIBLE_DEVICES", kUnset},
      {"HIP_VISIBLE_DEVICES", kUnset}, {"GPU_DEVICE_ORDINAL", kMig}, {"XPART_PARTITION", kMig}}},
    {"AmdToken", mi300x, 0, 5, "3", false,
     {{"CUDA_VISIBLE_DEVICES", kUnset}, {"HIP_VISIBLE_DEVICES", kUnset},
      {"ROCR_VISIBLE_DEVICES", "3"}, {"GPU_DEVICE_ORDINAL", "3"}, {"XPART_PARTITION", kXcp5}}},
    {"AmdConfinedIsZero", mi300x, 0, 5, "3", true,
     {{"CUDA_VISIBLE_DEVICES", kUnset}, {"HIP_VISIBLE_DEVICES", kUnset},
      {"ROCR_VISIBLE_DEVICES", "0"}, {"GPU_DEVICE_ORDINAL", "0"}, {"XPART_PARTITION", kXcp5}}},
    {"AmdBindNothing", mi300x, 0, 5, kBindNothing, false,
     {{"CUDA_VISIBLE_DEVICES", kUnset}, {"HIP_VISIBLE_DEVICES", kUnset},
      {"ROCR_VISIBLE_DEVICES", "-1"}, {"GPU_DEVICE_ORDINAL", "-1"}, {"XPART_PARTITION", kXcp5}}},
};

class RankVisibility : public ::testing::TestWithParam<RankCase> {};

TEST_P(RankVisibility, NamesTheOnePartitionEverywhere) {
    const RankCase& c = GetParam();
    const Node node = c.node();
    const Gpu& gpu = node.gpus[c.gpu];
    EXPECT_EQ(rank_visibility(gpu, gpu.partitions[c.partition], c.token, c.confined), c.want);
}

INSTANTIATE_TEST_SUITE_P(Cases, RankVisibility, ::testing::ValuesIn(kRanks),
                         [](const auto& info) { return std::string(info.param.name); });

struct ListCase {
    const char* name;
    std::vector<ListedDevice> devices;
    AmdIndexMode mode;
    Vars want;
};

const ListedDevice kNvidiaUuid{Vendor::Nvidia, "MIG-a", "", 3, 0};
const ListedDevice kNvidiaIndex{Vendor::Nvidia, "", "", 4, 0};
const ListedDevice kAmd{Vendor::Amd, "", "GPU-x", 6, 2};

const ListCase kLists[] = {
    {"Nothing", {}, AmdIndexMode::Index,
     {{"CUDA_VISIBLE_DEVICES", kUnset}, {"ROCR_VISIBLE_DEVICES", kUnset},
      {"GPU_DEVICE_ORDINAL", kUnset}}},
    {"NvidiaByUuidOrIndex", {kNvidiaUuid, kNvidiaIndex}, AmdIndexMode::Index,
     {{"CUDA_VISIBLE_DEVICES", "MIG-a,4"}, {"ROCR_VISIBLE_DEVICES", kUnset},
      {"GPU_DEVICE_ORDINAL", "MIG-a,4"}}},
    // The ordinal counts as stock does (Slurm's index), ROCR as ROCm does.
    {"MixedByRocmNumber", {kNvidiaUuid, kAmd}, AmdIndexMode::Index,
     {{"CUDA_VISIBLE_DEVICES", "MIG-a"}, {"ROCR_VISIBLE_DEVICES", "2"},
      {"GPU_DEVICE_ORDINAL", "MIG-a,6"}}},
    {"AmdByUuid", {kAmd}, AmdIndexMode::Uuid,
     {{"CUDA_VISIBLE_DEVICES", kUnset}, {"ROCR_VISIBLE_DEVICES", "GPU-x"},
      {"GPU_DEVICE_ORDINAL", "6"}}},
};

class ListVisibility : public ::testing::TestWithParam<ListCase> {};

TEST_P(ListVisibility, SaysWhatStockAndRocmExpect) {
    EXPECT_EQ(list_visibility(GetParam().devices, GetParam().mode), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Cases, ListVisibility, ::testing::ValuesIn(kLists),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Visibility, BindNothingStopsEveryList) {
    EXPECT_EQ(bind_nothing_visibility(),
              (Vars{{"CUDA_VISIBLE_DEVICES", "-1"}, {"ROCR_VISIBLE_DEVICES", "-1"},
                    {"GPU_DEVICE_ORDINAL", "-1"}}));
}

TEST(Visibility, AWithheldTaskIsToldOfNoPartition) {
    EXPECT_EQ(withheld_visibility(),
              (Vars{{"CUDA_VISIBLE_DEVICES", "-1"}, {"ROCR_VISIBLE_DEVICES", "-1"}, {"GPU_DEVICE_ORDINAL", "-1"},
                    {"XPART_PARTITION", kUnset}, {"SLURM_STEP_GPUS", kUnset}}));
}

struct PlacementCase {
    const char* name;
    TaskPlacement placement;
    Vars want;
};

const PlacementCase kPlacements[] = {
    {"nothing_known", {{}, std::nullopt, std::nullopt}, {}},
    {"a_rank_of_xpart_launch", {{0, 1, 2, 3, 8}, std::nullopt, std::nullopt}, {{"XPART_CPUS", "0-3,8"}}},
    {"a_task_of_a_step", {{4, 5}, "3", "1,3"},
     {{"SLURM_STEP_GPUS", "3"}, {"XPART_STEP_GPUS", "1,3"}, {"XPART_CPUS", "4-5"}}},
    {"a_withheld_task_keeps_the_step_list", {{}, std::nullopt, "1,3"}, {{"XPART_STEP_GPUS", "1,3"}}},
};

class Placement : public ::testing::TestWithParam<PlacementCase> {};

TEST_P(Placement, TellsWhatIsKnown) { EXPECT_EQ(placement_visibility(GetParam().placement), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(Cases, Placement, ::testing::ValuesIn(kPlacements),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Visibility, ApplyingSetsAndErases) {
    EnvMap env{{"CUDA_VISIBLE_DEVICES", "0,1"}, {"KEEP", "1"}};
    apply_changes(env, {{"CUDA_VISIBLE_DEVICES", kUnset}, {"ROCR_VISIBLE_DEVICES", "2"}});
    EXPECT_EQ(env, (EnvMap{{"KEEP", "1"}, {"ROCR_VISIBLE_DEVICES", "2"}}));
}

}  // namespace
}  // namespace xpart
