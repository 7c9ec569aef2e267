// NVIDIA discovery against simulated nodes: the simulator writes the root and installs the
// fake NVML; discovery reads both. Expected values come from the spec files and the driver's
// documented layouts, never from discovery itself (except the reviewed golden files).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "libxpart/discovery.hpp"
#include "libxpart/node_json.hpp"
#include "sim/nvidia_model.hpp"
#include "tests/golden.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart {
namespace {

using nlohmann::json;
using testing::ScopedEnv;
using testing::SimRoot;

Result<Node> discover_in(const SimRoot& r) { return discover(r.discovery_options()); }

// --- golden files: to_json(discover()) of every shipped NVIDIA spec, reviewed by hand --------

class GoldenTest : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenTest, DiscoveryMatchesReviewedGolden) {
    const std::string name = GetParam();
    SimRoot r(testing::read_text(testing::spec_file(name)));
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    const json actual = to_json(*node);
    testing::expect_json_golden(testing::source_dir() + "/tests/libxpart/golden/" + name + ".json",
                                actual, 2);
    // The JSON form reads back to the same node.
    auto back = node_from_json(actual);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(to_json(*back), actual);
}

INSTANTIATE_TEST_SUITE_P(ShippedSpecs, GoldenTest,
                         ::testing::Values("a100-guide", "h100-80gb", "h200-141gb", "mixed-mig-full",
                                           "dgx-a100-nic"));

// --- properties checked against the spec and the documented layouts --------------------------

TEST(NvidiaDiscovery, EverySpecMigDeviceFoundWithFormulaCapMinors) {
    const json spec = testing::spec_json("a100-guide");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    ASSERT_EQ(node->gpus.size(), spec["nvidia"]["gpus"].size());
    std::size_t spec_devices = 0;
    for (std::size_t i = 0; i < node->gpus.size(); ++i) {
        const json& sg = spec["nvidia"]["gpus"][i];
        const Gpu& g = node->gpus[i];
        EXPECT_EQ(g.uuid, sg["uuid"]);
        EXPECT_EQ(g.pci_bus_id, sg["pci_bus_id"]);
        EXPECT_EQ(g.minor, sg["minor"].get<int>());
        EXPECT_EQ(g.numa_node, sg["numa_node"].get<int>());
        EXPECT_EQ(g.index, static_cast<int>(i));
        EXPECT_EQ(g.mode, PartitionMode::Mig);
        std::set<std::string> uuids;
        for (const json& inst : sg["instances"]) {
            if (inst.contains("uuid")) uuids.insert(inst["uuid"].get<std::string>());
            else
                for (const json& ci : inst["compute_instances"]) uuids.insert(ci["uuid"].get<std::string>());
        }
        spec_devices += uuids.size();
        ASSERT_EQ(g.partitions.size(), uuids.size()) << "GPU " << i;
        const unsigned G = static_cast<unsigned>(g.minor);
        for (const Partition& p : g.partitions) {
            EXPECT_EQ(uuids.count(p.uuid), 1u) << p.uuid;
            const unsigned gi_minor = 3 + 135 * G + 9 * unsigned(p.gi);
            const unsigned ci_minor = 4 + 135 * G + 9 * unsigned(p.gi) + unsigned(p.ci);
            // Parent, GI cap, CI cap, the three shared control nodes; no monitor cap.
            ASSERT_EQ(p.device_files.size(), 6u);
            EXPECT_EQ(p.device_files[0], (DeviceFile{"/dev/nvidia" + std::to_string(G), 195, G, false}));
            EXPECT_EQ(p.device_files[1], (DeviceFile{"/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor),
                                                     508, gi_minor, false}));
            EXPECT_EQ(p.device_files[2], (DeviceFile{"/dev/nvidia-caps/nvidia-cap" + std::to_string(ci_minor),
                                                     508, ci_minor, false}));
            EXPECT_EQ(p.device_files[3], (DeviceFile{"/dev/nvidiactl", 195, 255, true}));
        }
        EXPECT_EQ(g.withheld_files,
                  (std::vector<DeviceFile>{{"/dev/nvidia-caps/nvidia-cap2", 508, 2, true}}));
    }
    EXPECT_EQ(node->partition_count(), spec_devices);
    // The guide's own example: GI 1 on GPU minor 0 with CIs 0..2 -> nvidia-cap12, 13..15.
    const Gpu* minor0 = nullptr;
    for (const Gpu& g : node->gpus) if (g.minor == 0) minor0 = &g;
    ASSERT_NE(minor0, nullptr);
    EXPECT_EQ(minor0->partitions[0].gi, 1);
    EXPECT_EQ(minor0->partitions[0].device_files[1].minor, 12u);
}

TEST(NvidiaDiscovery, IndexHolesAreSkipped) {
    json spec = testing::spec_json("a100-guide");
    spec["nvidia"]["gpus"][2]["mig_index_holes"] = {0, 2};
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    const Gpu& g = node->gpus[2];
    ASSERT_EQ(g.partitions.size(), 2u);
    EXPECT_EQ(g.partitions[0].index, 1);
    EXPECT_EQ(g.partitions[1].index, 3);
    EXPECT_EQ(g.partitions[0].uuid, spec["nvidia"]["gpus"][2]["instances"][0]["uuid"]);
}

TEST(NvidiaDiscovery, PendingModeChangeIsReportedNotBound) {
    json spec = testing::spec_json("a100-guide");
    spec["nvidia"]["gpus"][3]["mig"] = "disable-pending";
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus[3].mode, PartitionMode::MigPending);
    EXPECT_TRUE(node->gpus[3].partitions.empty());
    ASSERT_EQ(node->warnings.size(), 1u);
    EXPECT_NE(node->warnings[0].find(spec["nvidia"]["gpus"][3]["uuid"].get<std::string>()),
              std::string::npos);
}

// The monitor cap (nvidia-cap2) lets a process watch every MIG instance of its GPU: a MIG
// partition gets it only on request (xpart.conf MigMonitorCapability=yes); otherwise the GPU
// lists it as withheld. Whole GPUs never get it either way.
struct MonitorCase {
    const char* name;
    bool granted;
};

class MonitorCapabilityTest : public ::testing::TestWithParam<MonitorCase> {};

TEST_P(MonitorCapabilityTest, GivenOnlyWhenRequested) {
    SimRoot r(testing::read_text(testing::spec_file("mixed-mig-full")));
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions options = r.discovery_options();
    options.mig_monitor_capability = GetParam().granted;
    auto node = discover(options);
    ASSERT_TRUE(node.ok()) << node.error().message;
    std::size_t mig_partitions = 0;
    for (const Gpu& g : node->gpus) {
        const bool mig = g.mode == PartitionMode::Mig;
        // nvidia-caps has a dynamic major: the one of this partition's own GI cap.
        const unsigned caps_major = mig ? g.partitions.at(0).device_files.at(1).major : 0;
        const DeviceFile monitor{"/dev/nvidia-caps/nvidia-cap2", caps_major, 2, true};
        for (const Partition& p : g.partitions) {
            const auto& files = p.device_files;
            const bool has = std::find(files.begin(), files.end(), monitor) != files.end();
            EXPECT_EQ(has, mig && GetParam().granted) << p.uuid;
            EXPECT_EQ(files.size(), !mig ? 4u : GetParam().granted ? 7u : 6u) << p.uuid;
            mig_partitions += mig;
        }
        const std::vector<DeviceFile> withheld =
            mig && !GetParam().granted ? std::vector<DeviceFile>{monitor} : std::vector<DeviceFile>{};
        EXPECT_EQ(g.withheld_files, withheld) << g.uuid;
    }
    EXPECT_EQ(mig_partitions, 4u);
}

INSTANTIATE_TEST_SUITE_P(Setting, MonitorCapabilityTest,
                         ::testing::Values(MonitorCase{"default_withheld", false},
                                           MonitorCase{"granted", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(NvidiaDiscovery, LegacyMigUuidsReportedAsGiven) {
    json spec = testing::spec_json("a100-guide");
    spec["nvidia"]["gpus"][4]["legacy_mig_uuids"] = true;
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    const Gpu& g = node->gpus[4];
    ASSERT_FALSE(g.partitions.empty());
    for (const Partition& p : g.partitions)
        EXPECT_EQ(p.uuid, "MIG-" + g.uuid + "/" + std::to_string(p.gi) + "/" + std::to_string(p.ci));
}

TEST(NvidiaDiscovery, SpecReReadAtEveryInit) {
    json spec = testing::spec_json("h200-141gb");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto before = discover_in(r);
    ASSERT_TRUE(before.ok()) << before.error().message;
    EXPECT_EQ(before->partition_count(), 7u);
    spec["nvidia"]["gpus"][0]["mig"] = "disable-pending";
    r.set_nvml_spec(spec);
    auto after = discover_in(r);
    ASSERT_TRUE(after.ok()) << after.error().message;
    EXPECT_EQ(after->gpus[0].mode, PartitionMode::MigPending);
}

// --- NVML failures: every call of the enumeration sequence, one at a time ---------------------

struct CallFault {
    const char* fault;    // XPART_SIM_NVML_FAULTS
    const char* message;  // the whole error
};

class NvmlFaultTest : public ::testing::TestWithParam<CallFault> {};

TEST_P(NvmlFaultTest, ErrorNamesCallDeviceAndCodeAndShutsDown) {
    json spec = testing::spec_json("mixed-mig-full");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    {
        ScopedEnv faults("XPART_SIM_NVML_FAULTS", GetParam().fault);
        auto node = discover_in(r);
        ASSERT_FALSE(node.ok());
        EXPECT_EQ(node.error().message, GetParam().message);
    }
    // nvmlShutdown ran on the failure path: the next init re-reads the (changed) spec.
    spec["nvidia"]["gpus"].erase(3);
    r.set_nvml_spec(spec);
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(EveryCall, NvmlFaultTest, ::testing::Values(
    CallFault{"nvmlDeviceGetCount_v2=15", "nvmlDeviceGetCount_v2(): NVML_ERROR_GPU_IS_LOST (15)"},
    CallFault{"nvmlDeviceGetHandleByIndex_v2@2=4",
              "nvmlDeviceGetHandleByIndex_v2(gpu 2): NVML_ERROR_NO_PERMISSION (4)"},
    CallFault{"nvmlDeviceGetMigMode@1=999", "nvmlDeviceGetMigMode(gpu 1): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetMaxMigDeviceCount=999",
              "nvmlDeviceGetMaxMigDeviceCount(gpu 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetMigDeviceHandleByIndex=999",
              "nvmlDeviceGetMigDeviceHandleByIndex(gpu 0, mig 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetGpuInstanceId=999",
              "nvmlDeviceGetGpuInstanceId(gpu 0, mig 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetComputeInstanceId=3",
              "nvmlDeviceGetComputeInstanceId(gpu 0, mig 0): NVML_ERROR_NOT_SUPPORTED (3)"},
    CallFault{"nvmlDeviceGetUUID=999", "nvmlDeviceGetUUID(gpu 0, mig 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetUUID@2=999", "nvmlDeviceGetUUID(gpu 2): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetAttributes_v2=999",
              "nvmlDeviceGetAttributes_v2(gpu 0, mig 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetAttributes_v2@1=999",
              "nvmlDeviceGetAttributes_v2(gpu 1): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetMinorNumber@3=999",
              "nvmlDeviceGetMinorNumber(gpu 3): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetPciInfo_v3=999", "nvmlDeviceGetPciInfo_v3(gpu 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetName@2=7", "nvmlDeviceGetName(gpu 2): NVML_ERROR_INSUFFICIENT_SIZE (7)"},
    CallFault{"nvmlDeviceGetMemoryInfo=999", "nvmlDeviceGetMemoryInfo(gpu 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetCpuAffinity=999",
              "nvmlDeviceGetCpuAffinity(gpu 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetMemoryAffinity=999",
              "nvmlDeviceGetMemoryAffinity(gpu 0): NVML_ERROR_UNKNOWN (999)"},
    CallFault{"nvmlDeviceGetMemoryAffinity=123",
              "nvmlDeviceGetMemoryAffinity(gpu 0): NVML_ERROR_123 (123)"}));

TEST(NvidiaDiscovery, EveryFaultableCallHasAFaultCase) {
    std::set<std::string> covered;
    // Keep this list in step with NvmlFaultTest above (nvmlInit_v2: nvml_unavailable_test.cpp).
    for (const char* c : {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
                          "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount",
                          "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId",
                          "nvmlDeviceGetComputeInstanceId", "nvmlDeviceGetUUID",
                          "nvmlDeviceGetAttributes_v2", "nvmlDeviceGetMinorNumber",
                          "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetName", "nvmlDeviceGetMemoryInfo",
                          "nvmlDeviceGetCpuAffinity", "nvmlDeviceGetMemoryAffinity"})
        covered.insert(c);
    // The MIG management calls have theirs in tests/cli/reshape_sim_test.cpp.
    for (const std::string& call : sim::nvml_discovery_fault_calls()) EXPECT_EQ(covered.count(call), 1u) << call;
}

TEST(NvidiaDiscovery, SpecFaultsWorkLikeEnvironmentFaults) {
    json spec = testing::spec_json("h100-80gb");
    spec["nvidia"]["faults"] = {{"nvmlDeviceGetUUID", 999}};
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover_in(r);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error().message, "nvmlDeviceGetUUID(gpu 0, mig 0): NVML_ERROR_UNKNOWN (999)");
}

TEST(NvidiaDiscovery, NotFoundFromEveryMigIndexMeansNoPartitions) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    ScopedEnv faults("XPART_SIM_NVML_FAULTS", "nvmlDeviceGetMigDeviceHandleByIndex=6");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus[0].mode, PartitionMode::Mig);
    EXPECT_TRUE(node->gpus[0].partitions.empty());
}

TEST(NvidiaDiscovery, NumaAffinityNotSupportedMeansUnknownNode) {
    SimRoot r(testing::spec_json("a100-guide"));
    ASSERT_EQ(r.error(), "");
    ScopedEnv faults("XPART_SIM_NVML_FAULTS", "nvmlDeviceGetMemoryAffinity@5=3");
    auto node = discover_in(r);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus[5].numa_node, -1);
    EXPECT_EQ(node->gpus[4].numa_node, 1);
}

TEST(NvidiaDiscovery, MissingSpecIsDriverNotLoaded) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    ::remove((r.root() + sim::kFakeNvmlDir + "/nvml-spec.json").c_str());
    auto node = discover_in(r);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error().message, "NVML " + r.nvml_library() +
                                        ": nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9) \"Driver "
                                        "Not Loaded\": NVIDIA GPUs not discovered");
}

// --- the library itself -----------------------------------------------------------------------

TEST(NvidiaDiscovery, MissingLibraryWithDriverIsAnError) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.nvml_library = r.root() + "/nonexistent/libnvidia-ml.so.1";
    auto node = discover(o);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error().message.rfind("NVML library '" + o.nvml_library +
                                         "' could not be loaded: " + o.nvml_library, 0), 0u)
        << node.error().message;
}

TEST(NvidiaDiscovery, MissingLibraryWithoutDriverMeansNoNvidiaGpus) {
    char tmpl[] = "/tmp/xpart-nvidia-empty-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    DiscoveryOptions o;
    o.root = RootFs(tmpl);
    o.amd = false;
    o.nvml_library = std::string(tmpl) + "/libnvidia-ml.so.1";
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_TRUE(node->gpus.empty());
    o.nvml_required = true;  // a site that says "this is a GPU node" gets the error instead
    auto required = discover(o);
    ASSERT_FALSE(required.ok());
    EXPECT_NE(required.error().message.find("could not be loaded"), std::string::npos);
    ::rmdir(tmpl);
}

TEST(NvidiaDiscovery, LibraryFromEnvironment) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    DiscoveryOptions o = r.discovery_options();
    o.nvml_library.clear();
    ScopedEnv env("XPART_NVML_LIBRARY", r.nvml_library());
    auto node = discover(o);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->partition_count(), 5u);
}

// --- procfs damage: each one is an error naming the file --------------------------------------

struct Damage {
    const char* name;
    const char* file;     // node path to change
    const char* content;  // nullptr: delete the file
    const char* message;  // expected error, "<root>" stands for the root's host path
};

class ProcfsDamageTest : public ::testing::TestWithParam<Damage> {};

TEST_P(ProcfsDamageTest, FailsClosedNamingTheFile) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    const Damage& d = GetParam();
    if (d.content) testing::write_text(r.host(d.file), d.content);
    else ASSERT_EQ(::remove(r.host(d.file).c_str()), 0);
    auto node = discover_in(r);
    ASSERT_FALSE(node.ok()) << d.name;
    std::string expected = d.message;
    for (std::size_t p; (p = expected.find("<root>")) != std::string::npos;)
        expected.replace(p, 6, r.root());
    EXPECT_EQ(node.error().message, expected);
}

INSTANTIATE_TEST_SUITE_P(Files, ProcfsDamageTest, ::testing::Values(
    Damage{"information missing", "/proc/driver/nvidia/gpus/0000:1b:00.0/information", nullptr,
           "<root>/proc/driver/nvidia/gpus/0000:1b:00.0/information: No such file or directory"},
    Damage{"information malformed", "/proc/driver/nvidia/gpus/0000:1b:00.0/information",
           "Model: \t\t NVIDIA H100\nDevice Minor 0\n",
           "<root>/proc/driver/nvidia/gpus/0000:1b:00.0/information:2: expected 'Key: value', "
           "got 'Device Minor 0'"},
    Damage{"information without minor", "/proc/driver/nvidia/gpus/0000:1b:00.0/information",
           "Model: \t\t NVIDIA H100\n",
           "<root>/proc/driver/nvidia/gpus/0000:1b:00.0/information: no 'Device Minor' line"},
    Damage{"information minor not a number", "/proc/driver/nvidia/gpus/0000:1b:00.0/information",
           "Device Minor: \t x1\n",
           "<root>/proc/driver/nvidia/gpus/0000:1b:00.0/information:1: Device Minor: expected "
           "0..254, got 'x1'"},
    Damage{"information minor disagrees", "/proc/driver/nvidia/gpus/0000:1b:00.0/information",
           "Device Minor: \t 3\n",
           "<root>/proc/driver/nvidia/gpus/0000:1b:00.0/information: Device Minor 3 disagrees "
           "with nvmlDeviceGetMinorNumber(gpu 0) = 0"},
    Damage{"mig-minors missing", "/proc/driver/nvidia-caps/mig-minors", nullptr,
           "<root>/proc/driver/nvidia-caps/mig-minors: No such file or directory"},
    Damage{"mig-minors malformed", "/proc/driver/nvidia-caps/mig-minors",
           "config 1\nmonitor 2\ngpu0/gi0/access three\n",
           "<root>/proc/driver/nvidia-caps/mig-minors:3: expected '<capability> <minor>', got "
           "'gpu0/gi0/access three'"},
    Damage{"mig-minors without the monitor", "/proc/driver/nvidia-caps/mig-minors", "config 1\n",
           "<root>/proc/driver/nvidia-caps/mig-minors: no entry 'monitor'"},
    Damage{"mig-minors without the instance", "/proc/driver/nvidia-caps/mig-minors",
           "config 1\nmonitor 2\n",
           "<root>/proc/driver/nvidia-caps/mig-minors: no entry 'gpu0/gi1/access'"},
    Damage{"mig-minors off the driver's layout", "/proc/driver/nvidia-caps/mig-minors",
           "config 1\nmonitor 2\ngpu0/gi1/access 13\n",
           "<root>/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access: DeviceFileMinor 12 "
           "disagrees with <root>/proc/driver/nvidia-caps/mig-minors: gpu0/gi1/access 13"},
    Damage{"gi capability missing", "/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access", nullptr,
           "<root>/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access: No such file or directory"},
    Damage{"ci capability disagrees", "/proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci2/access",
           "DeviceFileMinor: 99\nDeviceFileMode: 292\nDeviceFileModify: 1\n",
           "<root>/proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci2/access: DeviceFileMinor 99 "
           "disagrees with <root>/proc/driver/nvidia-caps/mig-minors: gpu0/gi1/ci2/access 15"},
    Damage{"ci capability without minor", "/proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access",
           "DeviceFileMode: 292\n",
           "<root>/proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access: no 'DeviceFileMinor' line"},
    Damage{"no nvidia major", "/proc/devices", "Character devices:\n  1 mem\n509 nvidia-uvm\n",
           "<root>/proc/devices: no character device driver 'nvidia'"},
    Damage{"no uvm major", "/proc/devices", "Character devices:\n195 nvidia\n508 nvidia-caps\n",
           "<root>/proc/devices: no character device driver 'nvidia-uvm'"},
    Damage{"no caps major", "/proc/devices", "Character devices:\n195 nvidia\n509 nvidia-uvm\n",
           "<root>/proc/devices: no character device driver 'nvidia-caps'"}),
    [](const auto& info) {
        std::string n = info.param.name;
        for (char& c : n) if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
        return n;
    });

TEST(NvidiaDiscovery, MigMinorsOffTheDocumentedLayoutIsAnError) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    // Table and capability file agree with each other, but not with the driver's layout.
    testing::write_text(r.host("/proc/driver/nvidia-caps/mig-minors"),
                        "config 1\nmonitor 2\ngpu0/gi1/access 40\n");
    testing::write_text(r.host("/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access"),
                        "DeviceFileMinor: 40\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
    auto node = discover_in(r);
    ASSERT_FALSE(node.ok());
    EXPECT_EQ(node.error().message, r.root() + "/proc/driver/nvidia-caps/mig-minors: gpu0/gi1/access "
                                               "40 does not follow the driver's layout (expected 12)");
}

}  // namespace
}  // namespace xpart
