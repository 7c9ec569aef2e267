// gres.conf generation from a node and the check of records against it, on a hand-built
// node (tests/fixtures/sample_nodes.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/text.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

// GPU 0 A100 MIG 3g.20gb (gi 1) and 1g.5gb (gi 7), GPU 1 whole A100, GPU 2 MI300X with 2 XCPs.
Node sample_node() { return fixtures::a100_40gb_mig_whole_and_mi300x_node(); }
const std::string kMig3g = fixtures::mig_uuid(0, 1);
const std::string kMig1g = fixtures::mig_uuid(0, 7);
const std::string kWholeGpu = fixtures::nvidia_gpu_uuid(1);
const std::string kMi300x = fixtures::amd_gpu_uuid(0);

const char* const kGoodConf =
    "Name=gpu Type=3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
    "/dev/nvidia-caps/nvidia-cap13 Cores=0-3\n"
    "Name=gpu Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
    "/dev/nvidia-caps/nvidia-cap67 Cores=0-3\n"
    "Name=gpu Type=a100-sxm4-40gb File=/dev/nvidia1 Cores=4-7\n"
    "Name=gpu Type=cpx File=/dev/dri/renderD128 Cores=8-11\n"
    "Name=gpu Type=cpx File=/dev/dri/renderD129 Cores=8-11\n";

TEST(GresConfGenerate, OneRecordPerPartitionInDiscoveryOrder) {
    std::string text;
    for (const GresConfRecord& r : generate_gres_records(sample_node(), RootFs("/")))
        text += format_gres_record(r) + "\n";
    EXPECT_EQ(text, kGoodConf);
}

TEST(GresConfGenerate, HostPathsThroughTheRootPrefix) {
    const auto records = generate_gres_records(sample_node(), RootFs("/tmp/sim-root/"));
    ASSERT_EQ(records.size(), 5u);
    EXPECT_EQ(format_gres_record(records[2]),
              "Name=gpu Type=a100-sxm4-40gb File=/tmp/sim-root/dev/nvidia1 Cores=4-7");
    EXPECT_EQ(records[0].multiple_files.front(), "/tmp/sim-root/dev/nvidia0");
}

TEST(GresConfGenerate, RoundTripsThroughTheParser) {
    const auto records = generate_gres_records(sample_node(), RootFs("/"));
    std::string text;
    for (const GresConfRecord& r : records) text += format_gres_record(r) + "\n";
    auto conf = parse_gres_conf(text, "gen");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    ASSERT_EQ(conf->records.size(), records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(conf->records[i].type, records[i].type);
        EXPECT_EQ(conf->records[i].files, records[i].files);
        EXPECT_EQ(conf->records[i].multiple_files, records[i].multiple_files);
        EXPECT_EQ(conf->records[i].cores, records[i].cores);
    }
}

TEST(GresConfGenerate, NoCoresWhenTheGpuHasNoCpuList) {
    Node node = sample_node();
    node.gpus[1].cpus.clear();
    EXPECT_EQ(format_gres_record(generate_gres_records(node, RootFs("/"))[2]),
              "Name=gpu Type=a100-sxm4-40gb File=/dev/nvidia1");
}

bool drift_3g(const std::string& configured, const std::string& discovered) {
    return configured == "3g.19gb" && discovered == "3g.20gb";
}

std::vector<std::string> check(const std::string& text, const Node& node = sample_node(),
                               const RootFs& root = RootFs("/")) {
    auto conf = parse_gres_conf(text, "gres.conf");
    EXPECT_TRUE(conf.ok()) << conf.error().message;
    if (!conf.ok()) return {"parse failed"};
    std::vector<std::string> lines;
    for (const GresMismatch& m :
         check_node_gres_conf(*conf, "n1", node, GresCheckOptions{root, "gres.conf", drift_3g}))
        lines.push_back(m.to_string());
    return lines;
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const std::size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
}

TEST(GresConfCheck, GeneratedConfAgrees) { EXPECT_EQ(check(kGoodConf), std::vector<std::string>{}); }

TEST(GresConfCheck, SimulatedRootHostPathsAgree) {
    std::string text;
    for (const GresConfRecord& r : generate_gres_records(sample_node(), RootFs("/tmp/r")))
        text += format_gres_record(r) + "\n";
    EXPECT_EQ(check(text, sample_node(), RootFs("/tmp/r")), std::vector<std::string>{});
}

TEST(GresConfCheck, OtherGresNamesAreIgnored) {
    EXPECT_EQ(check(std::string(kGoodConf) + "Name=mps Count=100 File=/dev/nvidia1\n"),
              std::vector<std::string>{});
}

struct CheckCase {
    const char* name;
    std::string conf;
    std::vector<std::string> lines;
};

class GresConfCheckCases : public ::testing::TestWithParam<CheckCase> {};

TEST_P(GresConfCheckCases, ReportsEachDifference) {
    EXPECT_EQ(check(GetParam().conf), GetParam().lines);
}

const std::string kLine1 =
    "Name=gpu Type=3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
    "/dev/nvidia-caps/nvidia-cap13 Cores=0-3\n";

const std::string kMigLines =
    "Name=gpu Type=3g.20gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
    "/dev/nvidia-caps/nvidia-cap13 Cores=0-3\n"
    "Name=gpu Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
    "/dev/nvidia-caps/nvidia-cap67 Cores=0-3\n";
const std::string kCpxLines =
    "Name=gpu Type=cpx File=/dev/dri/renderD128 Cores=8-11\n"
    "Name=gpu Type=cpx File=/dev/dri/renderD129 Cores=8-11\n";

const CheckCase kCheckCases[] = {
    {"TypeDiffers", replace(kGoodConf, "Type=1g.5gb", "Type=2g.10gb"),
     {"gres.conf:2: type differs: Type=2g.10gb, the hardware has 1g.5gb (GPU 0 MIG 1g.5gb gi 7 "
      "ci 0 (" + kMig1g + "))"}},
    {"TypeCaseIgnored", replace(kGoodConf, "Type=cpx", "Type=CPX"), {}},
    {"TypeDriftAcceptedWithNote", replace(kGoodConf, "Type=3g.20gb", "Type=3g.19gb"),
     {"gres.conf:1: note: Type=3g.19gb accepted as 3g.20gb (MIG profile names drift between "
      "drivers)"}},
    {"TypeMissing", replace(kGoodConf, "Type=a100-sxm4-40gb ", ""),
     {"gres.conf:3: type differs: no Type=, the hardware has a100-sxm4-40gb (GPU 1 whole GPU "
      "a100-sxm4-40gb (" + kWholeGpu + "))"}},
    {"MissingPartition", replace(kGoodConf, "Name=gpu Type=cpx File=/dev/dri/renderD129 Cores=8-11\n", ""),
     {"gres.conf: missing partition: GPU 2 XCP 1 cpx (" + kMi300x + ") has no record; expected: "
      "Name=gpu Type=cpx File=/dev/dri/renderD129 Cores=8-11"}},
    {"ExtraRecord", std::string(kGoodConf) + "Name=gpu Type=a100 File=/dev/nvidia7\n",
     {"gres.conf:6: extra record: File=/dev/nvidia7: no partition on this node uses /dev/nvidia7"}},
    {"FileOfNoPartition",
     replace(kGoodConf, "/dev/nvidia-caps/nvidia-cap67 ", "/dev/nvidia-caps/nvidia-cap67,/dev/nvidia9 "),
     {"gres.conf:2: MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
      "/dev/nvidia-caps/nvidia-cap67,/dev/nvidia9: /dev/nvidia9 belongs to no partition on this "
      "node"}},
    {"SharedFileInRecord", replace(kGoodConf, "File=/dev/nvidia1 ", "MultipleFiles=/dev/nvidia1,/dev/nvidiactl "),
     {"gres.conf:3: MultipleFiles=/dev/nvidia1,/dev/nvidiactl: /dev/nvidiactl is shared by every "
      "partition; naming it in one record denies it to jobs on the others"}},
    {"CoresDiffer", replace(kGoodConf, "File=/dev/nvidia1 Cores=4-7", "File=/dev/nvidia1 Cores=0-7"),
     {"gres.conf:3: cores differ: Cores=0-7, GPU 1 is local to CPUs 4-7"}},
    {"CoresAbsentIsFine", replace(kGoodConf, "File=/dev/nvidia1 Cores=4-7", "File=/dev/nvidia1"), {}},
    {"FilesDifferWrongCiCap",
     replace(kGoodConf, "nvidia-cap66,/dev/nvidia-caps/nvidia-cap67", "nvidia-cap66,/dev/nvidia-caps/nvidia-cap13"),
     {"gres.conf:2: files differ: MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
      "/dev/nvidia-caps/nvidia-cap13, GPU 0 MIG 1g.5gb gi 7 ci 0 (" + kMig1g + ") has "
      "/dev/nvidia-caps/nvidia-cap66,/dev/nvidia-caps/nvidia-cap67,/dev/nvidia0"}},
    {"ParentDeviceOnlyMatchesNoPartition",
     replace(kGoodConf, "Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,/dev/nvidia-caps/nvidia-cap67",
             "Type=1g.5gb File=/dev/nvidia0"),
     {"gres.conf:2: File=/dev/nvidia0: these files are not the files of any one partition",
      "gres.conf: missing partition: GPU 0 MIG 1g.5gb gi 7 ci 0 (" + kMig1g + ") has no record; "
      "expected: Name=gpu Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap66,"
      "/dev/nvidia-caps/nvidia-cap67 Cores=0-3"}},
    {"DuplicateRecord", std::string(kGoodConf) + kLine1,
     {"gres.conf:6: duplicate record: MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
      "/dev/nvidia-caps/nvidia-cap13: GPU 0 MIG 3g.20gb gi 1 ci 0 (" + kMig3g + ") is already "
      "named at line 1"}},
    {"FileRangeCoversBothXcps",
     replace(replace(kGoodConf, "Name=gpu Type=cpx File=/dev/dri/renderD129 Cores=8-11\n", ""),
             "File=/dev/dri/renderD128", "File=/dev/dri/renderD[128-129]"),
     {}},
    {"CountOnlyRecordsClaimByType",
     std::string(kLine1) +
         "Name=gpu Type=1g.5gb Count=1\nName=gpu Type=a100-sxm4-40gb\nName=gpu Type=cpx Count=2\n",
     {}},
    // A reshape sibling's records (xpart discover --siblings --gres-conf): each partition
    // named by its GPU's files and its type.
    {"SiblingRecordsNameMigPartitionsByType",
     replace(kGoodConf, kMigLines,
             "Name=gpu Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"
             "Name=gpu Type=3g.20gb MultipleFiles=/dev/nvidiactl,/dev/nvidia0\n"),
     {}},
    {"SiblingRecordsNameXcpsByType",
     replace(kGoodConf, kCpxLines,
             "Name=gpu Type=cpx MultipleFiles=/dev/kfd,/dev/dri/renderD128\n"
             "Name=gpu Type=CPX MultipleFiles=/dev/kfd,/dev/dri/renderD128\n"),
     {}},
    {"SiblingRecordOfATypeTheGpuLacks",
     replace(kGoodConf, kMigLines,
             "Name=gpu Type=1g.5gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"
             "Name=gpu Type=2g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"),
     {"gres.conf:2: type differs: Type=2g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl: these "
      "are GPU 0's files, which name one of its partitions by type, and it has no other of type "
      "2g.10gb (it has 3g.20gb, 1g.5gb)",
      "gres.conf: missing partition: GPU 0 MIG 3g.20gb gi 1 ci 0 (" + kMig3g + ") has no record; "
      "expected: " + kLine1.substr(0, kLine1.size() - 1)}},
    {"SiblingRecordsMoreThanTheGpuHas",
     replace(kGoodConf, kCpxLines,
             "Name=gpu Type=cpx MultipleFiles=/dev/kfd,/dev/dri/renderD128\n"
             "Name=gpu Type=cpx MultipleFiles=/dev/kfd,/dev/dri/renderD128\n"
             "Name=gpu Type=cpx MultipleFiles=/dev/kfd,/dev/dri/renderD128\n"),
     {"gres.conf:6: type differs: Type=cpx MultipleFiles=/dev/kfd,/dev/dri/renderD128: these are "
      "GPU 2's files, which name one of its partitions by type, and it has no other of type cpx "
      "(it has cpx, cpx)"}},
    // A whole GPU has no sibling records: its device and nvidiactl are a shared file named.
    {"CountDiffers",
     std::string(kLine1) +
         "Name=gpu Type=1g.5gb Count=1\nName=gpu Type=a100-sxm4-40gb\nName=gpu Type=cpx Count=3\n",
     {"gres.conf:4: count differs: Count=3 Type=cpx, the hardware has 2 partitions of type cpx "
      "not named by another record"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, GresConfCheckCases, ::testing::ValuesIn(kCheckCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Only the node's records count; a node no record names has nothing to compare, and the note
// names the nodes the records do name (a NodeName= typo shows there).
TEST(GresConfCheck, RecordsOfTheNodeOnly) {
    std::string text;
    for (const std::string& line : split(kGoodConf, '\n'))
        if (!line.empty()) text += "NodeName=n[1-2] " + line + "\n";
    auto conf = parse_gres_conf(text + "NodeName=n3 Name=gpu Type=x File=/dev/nvidia7\n", "gres.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    const GresCheckOptions options{RootFs("/"), "gres.conf", drift_3g};
    EXPECT_TRUE(check_node_gres_conf(*conf, "n2", sample_node(), options).empty());
    EXPECT_EQ(check_node_gres_conf(*conf, "n3", sample_node(), options).size(), 6u);
    const auto none = check_node_gres_conf(*conf, "m1", sample_node(), options);
    ASSERT_EQ(none.size(), 1u);
    EXPECT_TRUE(none[0].note);
    EXPECT_EQ(none[0].to_string(),
              "gres.conf: note: no Name=gpu record for NodeName=m1: nothing to compare; xpart's "
              "gres/gpu registers the partitions it discovers (the records name n1,n2,n3)");
}

// GPUs discovery could not read: a count without files would repeat discovery's line.
TEST(GresConfCheck, UnreadGpusLeaveCountsUncompared) {
    Node node = sample_node();
    node.errors = {"NVML: NVIDIA GPUs not discovered"};
    EXPECT_EQ(check(std::string(kGoodConf) + "Name=gpu Type=7g.80gb Count=2\n", node),
              std::vector<std::string>{});
    EXPECT_EQ(check(std::string(kGoodConf) + "Name=gpu Type=7g.80gb File=/dev/nvidia5\n", node),
              std::vector<std::string>{"gres.conf:6: extra record: File=/dev/nvidia5: no partition "
                                       "on this node uses /dev/nvidia5"});
}

TEST(GresConfCheck, MigModePendingIsADifference) {
    Node node = sample_node();
    node.gpus[1].mode = PartitionMode::MigPending;
    EXPECT_EQ(check(kGoodConf, node),
              (std::vector<std::string>{"gres.conf: GPU 1 (" + kWholeGpu + ", 0000:0f:00.0): MIG mode "
                                        "change pending: reset the GPU, then regenerate gres.conf"}));
}

TEST(GresConfCheck, WithoutMatcherDriftIsADifference) {
    auto conf = parse_gres_conf(replace(kGoodConf, "Type=3g.20gb", "Type=3g.19gb"), "g");
    ASSERT_TRUE(conf.ok());
    const auto found = check_gres_records(conf->records, sample_node(),
                                          GresCheckOptions{RootFs("/"), "g", {}});
    ASSERT_EQ(found.size(), 1u);
    EXPECT_FALSE(found[0].note);
    EXPECT_TRUE(has_differences(found));
}

TEST(GresConfCheck, NotesAloneAreNotDifferences) {
    EXPECT_FALSE(has_differences({GresMismatch{"g", 1, "x", true}}));
    EXPECT_TRUE(has_differences({GresMismatch{"g", 1, "x", true}, GresMismatch{"g", 2, "y", false}}));
    EXPECT_FALSE(has_differences({}));
}

}  // namespace
}  // namespace xpart
