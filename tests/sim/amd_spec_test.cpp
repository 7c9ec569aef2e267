// The "amd" part of simulator specs: defaults, and one clear error per bad value.
#include <gtest/gtest.h>

#include "sim/spec.hpp"

namespace xpart::sim {
namespace {

std::string with_gpu(const std::string& gpu) {
    return R"({"name":"n","cpus":"0-7","numa":[{"node":0,"cpus":"0-3"},{"node":1,"cpus":"4-7"}],)"
           R"("amd":{"gpus":[)" + gpu + "]}}";
}
constexpr const char* kGood = R"("model":"MI300X","unique_id":5,"pci_bus_id":"0000:05:00.0")";

TEST(AmdSpec, DefaultsAndPciOrder) {
    auto r = parse_spec(with_gpu(std::string("{") + R"("model":"MI300X","unique_id":9,"pci_bus_id":"0000:85:00.0"},{)" +
                                 kGood + R"(,"compute_partition":"CPX","memory_partition":"NPS4",)"
                                 R"("partitions_present":7,"pci_attributes":false,"xcp_naming":"underscore",)"
                                 R"("hive_id":18446744073709551615,"numa_node":1})"),
                        "n.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->amd.gpus.size(), 2u);
    const AmdGpuSpec& a = r->amd.gpus[0];  // sorted by bus: 05 before 85
    EXPECT_EQ(a.pci_bus_id(), "0000:05:00.0");
    EXPECT_EQ(a.compute_partition, PartitionMode::Cpx);
    EXPECT_EQ(a.memory_partition, "NPS4");
    EXPECT_EQ(a.partitions_present, 7u);
    EXPECT_FALSE(a.pci_attributes);
    EXPECT_EQ(a.xcp_naming, XcpNaming::Underscore);
    EXPECT_EQ(a.hive_id, 18446744073709551615ull);
    EXPECT_EQ(a.numa_node, 1);
    const AmdGpuSpec& b = r->amd.gpus[1];
    EXPECT_EQ(b.unique_id, 9u);
    EXPECT_EQ(b.compute_partition, PartitionMode::Spx);
    EXPECT_EQ(b.memory_partition, "NPS1");
    EXPECT_EQ(b.partitions_present, 1u);
    EXPECT_TRUE(b.pci_attributes);
    EXPECT_EQ(b.xcp_naming, XcpNaming::Dot);
    EXPECT_EQ(b.numa_node, 0);
}

TEST(AmdSpec, UnpartitionableModelIsFull) {
    auto r = parse_spec(with_gpu(R"({"model":"MI210","unique_id":5,"pci_bus_id":"0000:03:00.0"})"), "n");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->amd.gpus[0].compute_partition, PartitionMode::Full);
    EXPECT_EQ(r->amd.gpus[0].memory_partition, "");
}

struct BadAmdSpec {
    std::string gpus;  // contents of "gpus": [...]
    const char* message;
};
class AmdSpecErrorTest : public ::testing::TestWithParam<BadAmdSpec> {};
TEST_P(AmdSpecErrorTest, OneLineNamingKeyAndValue) {
    auto r = parse_spec(with_gpu(GetParam().gpus), "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, GetParam().message);
}
const std::string g = std::string("{") + kGood;
INSTANTIATE_TEST_SUITE_P(Amd, AmdSpecErrorTest, ::testing::Values(
    BadAmdSpec{g + R"(,"xcps":8})", "node.json: amd.gpus[0].xcps: unknown key"},
    BadAmdSpec{R"({"model":"MI400","unique_id":5,"pci_bus_id":"0000:05:00.0"})",
               "node.json: amd.gpus[0].model: unknown model 'MI400' (expected "
               "MI300X|MI325X|MI308X|MI300A|MI210|MI250X|MI100)"},
    BadAmdSpec{R"({"model":"MI300X","pci_bus_id":"0000:05:00.0"})",
               "node.json: amd.gpus[0].unique_id: missing (a number is required)"},
    BadAmdSpec{R"({"model":"MI300X","unique_id":0,"pci_bus_id":"0000:05:00.0"})",
               "node.json: amd.gpus[0].unique_id: must not be 0"},
    BadAmdSpec{R"({"model":"MI300X","unique_id":"5","pci_bus_id":"0000:05:00.0"})",
               "node.json: amd.gpus[0].unique_id: expected a non-negative integer, got \"5\""},
    BadAmdSpec{R"({"model":"MI300X","unique_id":5,"pci_bus_id":"0000:05:00.1"})",
               "node.json: amd.gpus[0].pci_bus_id: expected 'dddd:bb:00.0' (lower-case hex), got "
               "'0000:05:00.1'"},
    BadAmdSpec{R"({"model":"MI300X","unique_id":5,"pci_bus_id":"0000:E5:00.0"})",
               "node.json: amd.gpus[0].pci_bus_id: expected 'dddd:bb:00.0' (lower-case hex), got "
               "'0000:E5:00.0'"},
    BadAmdSpec{g + R"(,"numa_node":2})",
               "node.json: amd.gpus[0].numa_node: no NUMA node 2 in the spec's \"numa\""},
    BadAmdSpec{g + R"(,"compute_partition":"TPX"})",
               "node.json: amd.gpus[0].compute_partition: 'TPX' is not a mode of the MI300X "
               "(SPX, DPX, QPX, CPX)"},
    BadAmdSpec{g + R"(,"compute_partition":"cpx"})",
               "node.json: amd.gpus[0].compute_partition: 'cpx' is not a mode of the MI300X "
               "(SPX, DPX, QPX, CPX)"},
    BadAmdSpec{g + R"(,"memory_partition":"NPS2"})",
               "node.json: amd.gpus[0].memory_partition: 'NPS2' is not a memory mode of the "
               "MI300X (NPS1, NPS4)"},
    BadAmdSpec{R"({"model":"MI210","unique_id":5,"pci_bus_id":"0000:05:00.0","compute_partition":"SPX"})",
               "node.json: amd.gpus[0].compute_partition: the MI210 has no partition modes"},
    BadAmdSpec{g + R"(,"compute_partition":"DPX","partitions_present":3})",
               "node.json: amd.gpus[0].partitions_present: expected 1..2, got 3"},
    BadAmdSpec{g + R"(,"partitions_present":0})",
               "node.json: amd.gpus[0].partitions_present: expected 1..1, got 0"},
    BadAmdSpec{g + R"(,"pci_attributes":"yes"})",
               "node.json: amd.gpus[0].pci_attributes: expected true or false, got \"yes\""},
    BadAmdSpec{g + R"(,"xcp_naming":"dash"})",
               "node.json: amd.gpus[0].xcp_naming: expected \"dot\" or \"underscore\", got 'dash'"},
    BadAmdSpec{g + "}," + g + "}",
               "node.json: amd.gpus[1].unique_id: duplicate 5"},
    BadAmdSpec{g + R"(},{"model":"MI300X","unique_id":6,"pci_bus_id":"0000:05:00.0"})",
               "node.json: amd.gpus[1].pci_bus_id: duplicate '0000:05:00.0'"}));

TEST(AmdSpec, RenderMinorsRunOut) {
    std::string gpus;
    for (int i = 0; i < 17; ++i)
        gpus += std::string(i ? "," : "") + R"({"model":"MI300X","unique_id":)" + std::to_string(i + 1) +
                R"(,"pci_bus_id":"0000:)" + (i < 16 ? "0" : "1") + "0123456789abcdef"[i % 16] +
                R"(:00.0","compute_partition":"CPX","memory_partition":"NPS4"})";
    auto r = parse_spec(with_gpu(gpus), "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message,
              "node.json: amd.gpus[16]: more than 128 partitions: render minors 128..255 are exhausted");
}

TEST(AmdSpec, EmptyGpuList) {
    auto r = parse_spec(R"({"name":"n","cpus":"0-3","amd":{"gpus":[]}})", "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "node.json: amd.gpus: expected a non-empty array of GPUs");
}

}  // namespace
}  // namespace xpart::sim
