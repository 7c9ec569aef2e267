// ROCR_VISIBLE_DEVICES as the ROCm runtime counts KFD GPU nodes.
#include <gtest/gtest.h>

#include "libxpart/rocr_visible.hpp"

namespace xpart {
namespace {

// Two GPUs: KFD nodes 2..5 (CPX-like) and 9..10; an NVIDIA GPU that ROCR never sees.
Node sample_node() {
    Node n;
    Gpu nv;
    nv.vendor = Vendor::Nvidia;
    nv.partitions.push_back(Partition{});
    n.gpus.push_back(nv);
    for (auto kfds : {std::vector<int>{2, 3, 4, 5}, std::vector<int>{10, 9}}) {
        Gpu g;
        g.vendor = Vendor::Amd;
        for (int k : kfds) {
            Partition p;
            p.kfd_node = k;
            g.partitions.push_back(p);
        }
        n.gpus.push_back(g);
    }
    return n;
}

struct RocrCase {
    std::vector<int> allotted;
    RocrCounting counting;
    const char* want;
};
class RocrVisibleTest : public ::testing::TestWithParam<RocrCase> {};
TEST_P(RocrVisibleTest, IndicesAsRocrCountsThem) {
    auto r = rocr_visible_devices(sample_node(), GetParam().allotted, GetParam().counting);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(*r, GetParam().want);
}
INSTANTIATE_TEST_SUITE_P(Amd, RocrVisibleTest, ::testing::Values(
    RocrCase{{4}, RocrCounting::OthersHidden, "0"},
    RocrCase{{4}, RocrCounting::AllVisible, "2"},
    RocrCase{{9, 3}, RocrCounting::OthersHidden, "0,1"},
    RocrCase{{9, 3}, RocrCounting::AllVisible, "1,4"},
    RocrCase{{10}, RocrCounting::AllVisible, "5"},
    RocrCase{{2, 3, 4, 5, 9, 10}, RocrCounting::OthersHidden, "0,1,2,3,4,5"},
    RocrCase{{2, 3, 4, 5, 9, 10}, RocrCounting::AllVisible, "0,1,2,3,4,5"}));

struct RocrError {
    std::vector<int> allotted;
    const char* message;
};
class RocrVisibleErrorTest : public ::testing::TestWithParam<RocrError> {};
TEST_P(RocrVisibleErrorTest, Refuses) {
    auto r = rocr_visible_devices(sample_node(), GetParam().allotted, RocrCounting::OthersHidden);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, GetParam().message);
}
INSTANTIATE_TEST_SUITE_P(Amd, RocrVisibleErrorTest, ::testing::Values(
    RocrError{{}, "ROCR_VISIBLE_DEVICES: no AMD partitions allotted"},
    RocrError{{3, 3}, "ROCR_VISIBLE_DEVICES: KFD node 3 allotted twice"},
    RocrError{{0}, "ROCR_VISIBLE_DEVICES: KFD node 0 is not an AMD partition of this node"},
    RocrError{{-1}, "ROCR_VISIBLE_DEVICES: KFD node -1 is not an AMD partition of this node"}));

}  // namespace
}  // namespace xpart
