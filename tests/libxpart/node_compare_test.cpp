// `xpart node check`'s comparison: the node slurmd registered against the node now, one line
// per difference, each case one change an admin makes on a running node.
#include <gtest/gtest.h>

#include <functional>

#include "libxpart/node_compare.hpp"
#include "tests/case_name.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

struct CompareCase {
    const char* name;
    std::function<void(Node&)> change;  // what the admin did since slurmd started
    std::vector<std::string> want;
};

class NodeDifferences : public ::testing::TestWithParam<CompareCase> {};

TEST_P(NodeDifferences, OneLinePerDifference) {
    const Node registered = fixtures::a100_80gb_mig_and_mi300x_node();
    Node now = registered;
    GetParam().change(now);
    EXPECT_EQ(node_differences(registered, now), GetParam().want);
}

const std::string kMigGpu = "GPU 0 (0000:07:00.0, GPU-00000000-0000-0000-0000-000000000000): ";

INSTANTIATE_TEST_SUITE_P(
    Table, NodeDifferences,
    ::testing::Values(
        CompareCase{"nothing changed", [](Node&) {}, {}},
        CompareCase{"MIG instance re-made with the same ids and a new UUID",
                    [](Node& n) { n.gpus[0].partitions[0].uuid = "MIG-new"; },
                    {kMigGpu + "GI 1 CI 0 (3g.40gb): UUID is now MIG-new, slurmd registered "
                               "MIG-aaaaaaaa-0000-0000-0000-000000000001"}},
        CompareCase{"MIG instance destroyed",
                    [](Node& n) { n.gpus[0].partitions.pop_back(); },
                    {kMigGpu + "GI 10 CI 0 (1g.10gb) MIG-aaaaaaaa-0000-0000-0000-000000000010 gone"}},
        CompareCase{"MIG instance created",
                    [](Node& n) {
                        Partition p = n.gpus[0].partitions.back();
                        p.gi = 11;
                        p.uuid = "MIG-11";
                        n.gpus[0].partitions.push_back(p);
                    },
                    {kMigGpu + "GI 11 CI 0 (1g.10gb) MIG-11 new"}},
        CompareCase{"AMD mode switched: one line for the GPU",
                    [](Node& n) {
                        n.gpus.back().mode = PartitionMode::Spx;
                        n.gpus.back().partitions.resize(1);
                    },
                    {"GPU 0 (0000:11:00.0, GPU-4f2e1c5a9b7d3e01): mode is now spx, slurmd "
                     "registered cpx"}},
        CompareCase{"GPU gone",
                    [](Node& n) { n.gpus.pop_back(); },
                    {"GPU 0 (0000:11:00.0, GPU-4f2e1c5a9b7d3e01): gone"}}),
    testing::SentenceCaseName{});

}  // namespace
}  // namespace xpart
