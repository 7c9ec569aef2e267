#include <gtest/gtest.h>

#include "libxpart/gres_record.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

TEST(GresRecords, OnePerPartitionWithAllFilesUnderTheRoot) {
    auto records = gres_records(fixtures::a100_80gb_mig_node(), RootFs("/sim/n1"));
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[0].type, "3g.40gb");
    EXPECT_EQ(records[0].unique_id, "MIG-aaaaaaaa-0000-0000-0000-000000000001");
    EXPECT_EQ(files_value(records[0]),
              "/sim/n1/dev/nvidiactl,/sim/n1/dev/nvidia-uvm,/sim/n1/dev/nvidia-uvm-tools,"
              "/sim/n1/dev/nvidia0,"
              "/sim/n1/dev/nvidia-caps/nvidia-cap12,/sim/n1/dev/nvidia-caps/nvidia-cap13");
    EXPECT_EQ(records[0].cpus, (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(records[0].gi, 1);
    EXPECT_EQ(records[0].gpu_minor, 0);
    EXPECT_EQ(records[0].presence_paths,
              std::vector<std::string>{"/sim/n1/proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access"});
    // A whole GPU: its own UUID; present while the driver lists it in procfs.
    EXPECT_EQ(records[3].type, "a100-sxm4-80gb");
    EXPECT_EQ(records[3].unique_id, "GPU-11111111-1111-1111-1111-111111111111");
    EXPECT_EQ(records[3].presence_paths,
              std::vector<std::string>{"/sim/n1/proc/driver/nvidia/gpus/0000:0f:00.0/information"});
    EXPECT_EQ(records[3].cpus, (std::vector<unsigned>{8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(GresRecords, RealRootKeepsNodePaths) {
    auto records = gres_records(fixtures::a100_80gb_mig_node(), RootFs("/"));
    EXPECT_EQ(records[1].files[3].path, "/dev/nvidia0");
    EXPECT_FALSE(records[1].files[3].shared);
    EXPECT_TRUE(records[1].files[0].shared);
}

// A MIG record carries the monitor cap exactly when discovery gave it to the partition
// (MigMonitorCapability=yes); a whole GPU's record never does.
struct MonitorRecordCase {
    const char* name;
    bool granted;
};

class GresRecordsMonitor : public ::testing::TestWithParam<MonitorRecordCase> {};

TEST_P(GresRecordsMonitor, CapOnlyInMigRecordsThatWereGivenIt) {
    Node node = fixtures::a100_80gb_mig_node();
    if (GetParam().granted)
        for (Gpu& g : node.gpus)
            if (g.mode == PartitionMode::Mig) {
                for (Partition& p : g.partitions) p.device_files.push_back(fixtures::mig_monitor_cap_file());
                g.withheld_files.clear();
            }
    const auto records = gres_records(node, RootFs("/"));
    ASSERT_EQ(records.size(), 4u);
    for (const GresRecord& r : records) {
        const bool mig = r.gi >= 0;
        bool has_monitor = false;
        for (const auto& f : r.files) has_monitor = has_monitor || f.path == "/dev/nvidia-caps/nvidia-cap2";
        EXPECT_EQ(has_monitor, mig && GetParam().granted) << files_value(r);
        EXPECT_EQ(r.files.size(), !mig ? 4u : GetParam().granted ? 7u : 6u) << r.type;
    }
}

INSTANTIATE_TEST_SUITE_P(Setting, GresRecordsMonitor,
                         ::testing::Values(MonitorRecordCase{"default_withheld", false},
                                           MonitorRecordCase{"granted", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(GresRecords, AmdXcpsHaveNoUniqueIdAndRankInKfdOrder) {
    auto records =
        gres_records(fixtures::mi300x_cpx_node(8, fixtures::XcpListing::ReverseKfdOrder), RootFs("/"));
    ASSERT_EQ(records.size(), 8u);
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(records[i].unique_id, "") << "XCP UUIDs are shared by the whole GPU";
        EXPECT_EQ(records[i].partition_uuid, "GPU-4f2e1c5a9b7d3e01");
        // Discovery listed KFD nodes 9..2; ROCm counts 2..9.
        EXPECT_EQ(records[i].kfd_node, 9 - static_cast<int>(i));
        EXPECT_EQ(records[i].amd_rank, 7 - static_cast<int>(i));
    }
    EXPECT_EQ(files_value(records[0]), "/dev/kfd,/dev/dri/renderD135");
}

TEST(GresRecords, PendingMigChangeGivesNoRecords) {
    Node n = fixtures::a100_80gb_mig_node();
    n.gpus[0].mode = PartitionMode::MigPending;
    auto records = gres_records(n, RootFs("/"));
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].type, "a100-sxm4-80gb");
}

// What Slurm's closest binding compares the task's CPUs with.
TEST(SlurmRecordCpus, WithinTheNodesCpuCount) {
    GresRecord r;
    r.cpus = {2, 5, 9};
    EXPECT_EQ(slurm_record_cpus(r, 6), (std::vector<unsigned>{2, 5}));
    r.cpus = {8, 9};  // none left: every CPU
    EXPECT_EQ(slurm_record_cpus(r, 4), (std::vector<unsigned>{0, 1, 2, 3}));
    r.cpus = {};      // unknown affinity: every CPU
    EXPECT_EQ(slurm_record_cpus(r, 2), (std::vector<unsigned>{0, 1}));
    EXPECT_EQ(slurm_record_cpus(r, 0), std::vector<unsigned>{});  // no bitmap: near every CPU
}

}  // namespace
}  // namespace xpart
