// The "nvidia" part of node specs: what the driver would refuse, the spec refuses, with one
// line naming the file, the key path and the value.
#include <gtest/gtest.h>

#include "sim/nvidia_model.hpp"
#include "sim/spec.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart::sim {
namespace {

// A one-GPU node around the given GPU object text.
std::string node_with_gpu(const std::string& gpu) {
    return R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[)" + gpu + "]}}";
}
const std::string kGpu = R"("product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0","minor":0)";
const std::string kMig1 = R"("MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f")";
const std::string kMig2 = R"("MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb")";

struct BadSpec {
    std::string text;
    std::string message;
};
class NvidiaSpecErrorTest : public ::testing::TestWithParam<BadSpec> {};
TEST_P(NvidiaSpecErrorTest, OneLineNamingKeyAndValue) {
    auto r = parse_spec(GetParam().text, "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Malformed, NvidiaSpecErrorTest, ::testing::Values(
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{}})",
            "node.json: nvidia.gpus: missing (an array of GPUs is required)"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"drivers":1}})",
            "node.json: nvidia.drivers: unknown key"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"colour":"green"})"),
            "node.json: nvidia.gpus[0].colour: unknown key"},
    BadSpec{node_with_gpu(R"({"product":"A200","uuid":"GPU-x","pci_bus_id":"0000:07:00.0","minor":0})"),
            "node.json: nvidia.gpus[0].product: unknown product 'A200' (known: A100-SXM4-40GB, "
            "A100-SXM4-80GB, H100-SXM5-80GB, H200-SXM-141GB, V100-SXM2-32GB)"},
    BadSpec{node_with_gpu(R"({"product":"A100-SXM4-40GB","uuid":"5d5ba0d6","pci_bus_id":"0000:07:00.0","minor":0})"),
            "node.json: nvidia.gpus[0].uuid: expected GPU-<36-character uuid>, got '5d5ba0d6'"},
    BadSpec{node_with_gpu(R"({"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0"})"),
            "node.json: nvidia.gpus[0].minor: missing (a number is required)"},
    BadSpec{node_with_gpu(R"({"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0","minor":-1})"),
            "node.json: nvidia.gpus[0].minor: expected a non-negative integer, got -1"},
    BadSpec{node_with_gpu(R"({"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0","minor":32})"),
            "node.json: nvidia.gpus[0].minor: expected 0..31, got 32"},
    BadSpec{node_with_gpu(R"({"product":"A100-SXM4-40GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0","minor":0,"numa_node":3})"),
            "node.json: nvidia.gpus[0].numa_node: no NUMA node 3"},
    BadSpec{node_with_gpu("{" + kGpu.substr(0, kGpu.find("\"pci")) + R"("pci_bus_id":"0000:07:00.0:1","minor":0})"),
            "node.json: nvidia.gpus[0].pci_bus_id: expected a lower-case 0000:07:00.0 form, got '0000:07:00.0:1'"},
    BadSpec{node_with_gpu("{" + kGpu.substr(0, kGpu.find("\"pci")) + R"("pci_bus_id":"0000:0F:00.0","minor":0})"),
            "node.json: nvidia.gpus[0].pci_bus_id: expected a lower-case 0000:07:00.0 form, got '0000:0F:00.0'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"on"})"),
            "node.json: nvidia.gpus[0].mig: expected unsupported, disabled, enabled, enable-pending "
            "or disable-pending, got 'on'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":true})"),
            "node.json: nvidia.gpus[0].mig: expected a string, got true"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"unsupported"})"),
            "node.json: nvidia.gpus[0].mig: A100-SXM4-40GB is MIG-capable, got 'unsupported'"},
    BadSpec{node_with_gpu(R"({"product":"V100-SXM2-32GB","uuid":"GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77","pci_bus_id":"0000:07:00.0","minor":0,"mig":"enabled"})"),
            "node.json: nvidia.gpus[0].mig: V100-SXM2-32GB is not MIG-capable, got 'enabled'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"instances":[]})"),
            "node.json: nvidia.gpus[0].instances: MIG instances need \"mig\": \"enabled\" (or "
            "\"disable-pending\"), got 'disabled'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"1g.10gb+me","start":0,"uuid":)" + kMig1 + "}]}"),
            "node.json: nvidia.gpus[0].instances[0].profile: A100-SXM4-40GB has no MIG profile '1g.10gb+me'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"3g.20gb","start":2,"uuid":)" + kMig1 + "}]}"),
            "node.json: nvidia.gpus[0].instances[0].start: 3g.20gb cannot be placed at 2 on A100-SXM4-40GB"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"4g.20gb","start":0,"uuid":)" + kMig1 +
                          R"(},{"profile":"1g.5gb","start":3,"uuid":)" + kMig2 + "}]}"),
            "node.json: nvidia.gpus[0].instances[1]: 1g.5gb at 3 overlaps the memory slices of an earlier instance"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"1g.5gb+me","start":0,"uuid":)" + kMig1 +
                          R"(},{"profile":"1g.5gb+me","start":1,"uuid":)" + kMig2 + "}]}"),
            "node.json: nvidia.gpus[0].instances[1]: at most 1 1g.5gb+me instance(s) per GPU"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"3g.20gb","start":0}]})"),
            "node.json: nvidia.gpus[0].instances[0]: give either 'uuid' (one compute instance using the "
            "whole GPU instance) or 'compute_instances'"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"3g.20gb","start":0,"compute_instances":[{"ci":0,"slices":4,"uuid":)" + kMig1 + "}]}]}"),
            "node.json: nvidia.gpus[0].instances[0].compute_instances[0].slices: a 3g.20gb GPU instance has no 4-slice compute instance"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"3g.20gb","start":0,"compute_instances":[{"ci":0,"slices":2,"uuid":)" + kMig1 +
                          R"(},{"ci":1,"slices":2,"uuid":)" + kMig2 + "}]}]}"),
            "node.json: nvidia.gpus[0].instances[0].compute_instances[1]: compute instances use 4 slices; 3g.20gb has 3"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"3g.20gb","start":0,"compute_instances":[{"ci":0,"slices":1,"uuid":)" + kMig1 +
                          R"(},{"ci":0,"slices":1,"uuid":)" + kMig2 + "}]}]}"),
            "node.json: nvidia.gpus[0].instances[0].compute_instances[1].ci: compute instance 0 defined twice"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"1g.5gb","start":0,"uuid":)" + kMig1 +
                          R"(},{"profile":"1g.5gb","start":1,"uuid":)" + kMig1 + "}]}"),
            "node.json: nvidia.gpus[0].instances: MIG UUID 'MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f' is malformed or used twice"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[{"profile":"1g.5gb","start":0,"uuid":"GPU-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f"}]})"),
            "node.json: nvidia.gpus[0].instances: MIG UUID 'GPU-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f' is malformed or used twice"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","mig_index_holes":[7]})"),
            "node.json: nvidia.gpus[0].mig_index_holes: expected MIG indices below 7, got 7"},
    BadSpec{node_with_gpu("{" + kGpu + R"(,"mig":"enabled","mig_index_holes":[0,1,2,3,4,5,6],"instances":[{"profile":"1g.5gb","start":0,"uuid":)" + kMig1 + "}]}"),
            "node.json: nvidia.gpus[0]: 1 MIG devices and 7 index holes exceed the 7 MIG indices of A100-SXM4-40GB"},
    BadSpec{node_with_gpu("{" + kGpu + "},{" + kGpu + "}"),
            "node.json: nvidia.gpus[1].pci_bus_id: '0000:07:00.0' used twice"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"faults":{"nvmlDeviceGetFoo":999}}})",
            "node.json: nvidia.faults.nvmlDeviceGetFoo: unknown NVML call 'nvmlDeviceGetFoo'"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"faults":{"nvmlInit_v2@1":999}}})",
            "node.json: nvidia.faults.nvmlInit_v2@1: nvmlInit_v2 is not a per-GPU call: 'nvmlInit_v2@1'"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"faults":{"nvmlDeviceGetUUID@x":999}}})",
            "node.json: nvidia.faults.nvmlDeviceGetUUID@x: expected <call>@<gpu index>, got 'nvmlDeviceGetUUID@x'"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"faults":{"nvmlDeviceGetUUID":0}}})",
            "node.json: nvidia.faults.nvmlDeviceGetUUID: expected an nvmlReturn_t code 1..999, \"kill\" or \"stop\", got 0"},
    BadSpec{R"({"name":"n","cpus":"0-7","nvidia":{"gpus":[],"frontend":"yes"}})",
            "node.json: nvidia.frontend: expected true or false, got \"yes\""}));

TEST(NvidiaSpec, ShippedSpecsParse) {
    for (const char* name : {"a100-guide", "h100-80gb", "h200-141gb", "mixed-mig-full"}) {
        auto r = load_spec(testing::spec_file(name));
        EXPECT_TRUE(r.ok()) << name << ": " << r.error().message;
    }
}

TEST(NvidiaSpec, GpuInstanceIdsFollowPlacementNotOrder) {
    // Created 3g@4, 1g@0, 2g@2, 1g@1: the driver answers GI 2, 7, 4, 8 (mig-profiles.md).
    auto r = parse_spec(node_with_gpu("{" + kGpu + R"(,"mig":"enabled","instances":[
        {"profile":"3g.20gb","start":4,"uuid":"MIG-00000000-0000-5000-8000-000000000001"},
        {"profile":"1g.5gb","start":0,"uuid":"MIG-00000000-0000-5000-8000-000000000002"},
        {"profile":"2g.10gb","start":2,"uuid":"MIG-00000000-0000-5000-8000-000000000003"},
        {"profile":"1g.5gb","start":1,"uuid":"MIG-00000000-0000-5000-8000-000000000004"}]})"),
                        "n.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    std::map<std::string, unsigned> gi_of_uuid;
    for (const auto& gi : r->nvidia.gpus[0].instances) gi_of_uuid[gi.compute_instances[0].uuid] = gi.gi;
    EXPECT_EQ(gi_of_uuid["MIG-00000000-0000-5000-8000-000000000001"], 2u);
    EXPECT_EQ(gi_of_uuid["MIG-00000000-0000-5000-8000-000000000002"], 7u);
    EXPECT_EQ(gi_of_uuid["MIG-00000000-0000-5000-8000-000000000003"], 4u);
    EXPECT_EQ(gi_of_uuid["MIG-00000000-0000-5000-8000-000000000004"], 8u);
    // NVML enumerates by GI id, then CI id.
    auto devices = sim_mig_devices(r->nvidia.gpus[0]);
    ASSERT_EQ(devices.size(), 4u);
    EXPECT_EQ(devices[0].gpu_instance->gi, 2u);
    EXPECT_EQ(devices[3].gpu_instance->gi, 8u);
    EXPECT_EQ(devices[3].index, 3u);
}

TEST(NvidiaFaultList, ParsesAndRejects) {
    auto ok = parse_nvml_fault_list(
        "nvmlInit_v2=999, nvmlDeviceGetUUID@2=3, nvmlGpuInstanceDestroy#2=kill, nvmlGpuInstanceDestroy#3=stop");
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_EQ(ok->at("nvmlInit_v2"), 999);
    EXPECT_EQ(ok->at("nvmlDeviceGetUUID@2"), 3);
    EXPECT_EQ(ok->at("nvmlGpuInstanceDestroy#2"), kNvmlFaultKill);
    EXPECT_EQ(ok->at("nvmlGpuInstanceDestroy#3"), kNvmlFaultStop);
    for (const char* bad : {"nvmlInit_v2", "nvmlInit_v2=0", "nvmlInit_v2=1000", "nvmlInit_v2=killed", "nvmlInit_v2=stopped"})
        EXPECT_EQ(parse_nvml_fault_list(bad).error().message,
                  std::string("expected <call>[@<gpu>][#<n>]=<code 1..999, kill or stop>, got '") + bad + "'");
    EXPECT_EQ(parse_nvml_fault_list("nvmlFoo=1").error().message, "unknown NVML call 'nvmlFoo'");
}

}  // namespace
}  // namespace xpart::sim
