#include <gtest/gtest.h>

#include "libxpart/node_json.hpp"

namespace xpart {
namespace {

Node sample_node() {
    Node n;
    Gpu g;
    g.vendor = Vendor::Nvidia;
    g.model = "NVIDIA A100-SXM4-40GB";
    g.uuid = "GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77";
    g.pci_bus_id = "0000:07:00.0";
    g.index = 0;
    g.minor = 0;
    g.mode = PartitionMode::Mig;
    g.memory_mb = 40960;
    g.numa_node = 1;
    g.cpus = {0, 1, 2, 3, 8};
    Partition p;
    p.uuid = "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f";
    p.type = "1g.5gb";
    p.gi = 7;
    p.ci = 0;
    p.index = 0;
    p.memory_mb = 4864;
    p.compute_units = 14;
    p.device_files = {{"/dev/nvidia0", 195, 0, false}, {"/dev/nvidiactl", 195, 255, true}};
    g.partitions.push_back(p);
    n.gpus.push_back(g);
    n.warnings.push_back("w");
    return n;
}

TEST(NodeJson, FieldsAsDocumented) {
    auto j = to_json(sample_node());
    const auto& g = j["gpus"][0];
    EXPECT_EQ(g["vendor"], "nvidia");
    EXPECT_EQ(g["mode"], "mig");
    EXPECT_EQ(g["cpus"], "0-3,8");
    EXPECT_EQ(g["numa_node"], 1);
    const auto& p = g["partitions"][0];
    EXPECT_EQ(p["gi"], 7);
    EXPECT_TRUE(p["kfd_node"].is_null());
    EXPECT_EQ(p["device_files"][1]["path"], "/dev/nvidiactl");
    EXPECT_EQ(p["device_files"][1]["shared"], true);
}

TEST(NodeJson, RoundTrips) {
    Node n = sample_node();
    auto back = node_from_json(to_json(n));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(to_json(*back), to_json(n));
    EXPECT_EQ(back->gpus[0].partitions[0].device_files, n.gpus[0].partitions[0].device_files);
}

// "errors" only when discovery left GPUs unread: complete nodes keep their JSON (goldens, caches).
TEST(NodeJson, ErrorsOnlyWhenThereAreSome) {
    Node n = sample_node();
    EXPECT_FALSE(to_json(n).contains("errors"));
    n.errors = {"NVML /lib/libnvidia-ml.so.1: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9)"};
    const auto j = to_json(n);
    EXPECT_EQ(j["errors"], nlohmann::json(n.errors));
    auto back = node_from_json(j);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->errors, n.errors);
}

// Withheld files (the MIG monitor cap by default) survive the cache; a GPU without any writes
// no key, and a cache written before the key existed reads as none withheld.
TEST(NodeJson, WithheldFilesRoundTripAndMayBeAbsent) {
    Node n = sample_node();
    auto plain = to_json(n);
    EXPECT_FALSE(plain["gpus"][0].contains("withheld_device_files"));
    auto none = node_from_json(plain);
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_TRUE(none->gpus[0].withheld_files.empty());
    n.gpus[0].withheld_files = {{"/dev/nvidia-caps/nvidia-cap2", 508, 2, true}};
    auto j = to_json(n);
    EXPECT_EQ(j["gpus"][0]["withheld_device_files"][0]["path"], "/dev/nvidia-caps/nvidia-cap2");
    auto back = node_from_json(j);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->gpus[0].withheld_files, n.gpus[0].withheld_files);
}

// The format is the node cache's (libxpart/node_cache.hpp): `xpart discover --json` writes
// none, and a node file (`xpart launch --node-json`) reads whatever cache members it holds.
TEST(NodeJson, HasNoFormatAndReadsAroundTheCacheMembers) {
    const Node n = sample_node();
    EXPECT_FALSE(to_json(n).contains("format"));
    EXPECT_FALSE(to_json(n).contains("gres_records"));
    const struct {
        const char* name;
        const char* members;
    } kCases[] = {
        {"none", R"({})"},
        {"this format", R"({"format":1,"gres_records":[[0,0]]})"},
        {"another format", R"({"format":2,"gres_records":"anything"})"},
    };
    for (const auto& c : kCases) {
        SCOPED_TRACE(c.name);
        nlohmann::json j = to_json(n);
        j.update(nlohmann::json::parse(c.members));
        auto back = node_from_json(j);
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(to_json(*back), to_json(n));
        EXPECT_FALSE(back->gres_records);
    }
}

TEST(NodeJson, MalformedIsAnErrorNotACrash) {
    EXPECT_FALSE(node_from_json(nlohmann::json::parse(R"({"gpus":[{"vendor":"amd"}]})")).ok());
    EXPECT_FALSE(node_from_json(nlohmann::json::parse(R"({"warnings":[]})")).ok());
}

}  // namespace
}  // namespace xpart
