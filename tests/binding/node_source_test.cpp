// Where the launcher's node comes from: --node-json as given, else the gres plugin's node
// cache when it knows every allotted partition, else live discovery.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "binding/node_source.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::binding {
namespace {

namespace fs = std::filesystem;
using fixtures::mig_uuid;

// One partition of the A100 guide node (sim/specs/a100-guide.json).
const char* const kGuideUuid = "MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f";

class NodeSourceTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xpart-node-source.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        root_ = dir_ + "/root";
        fs::create_directories(root_);
    }
    void TearDown() override {
        unsetenv("XPART_NVML_LIBRARY");
        fs::remove_all(dir_);
    }
    // The simulated A100 guide node at root_, its fake NVML for discovery.
    void build_guide_node() {
        const char* b = std::getenv("XPART_BUILDDIR");
        const char* s = std::getenv("XPART_SRCDIR");
        ASSERT_TRUE(b && s) << "XPART_BUILDDIR/XPART_SRCDIR unset";
        const std::string cmd = std::string(b) + "/xpart-sim build " + s +
                                "/sim/specs/a100-guide.json " + root_ + " >/dev/null";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        setenv("XPART_NVML_LIBRARY", (root_ + "/usr/lib/xpart-sim/libnvidia-ml.so.1").c_str(), 1);
    }
    EnvMap cuda(const std::string& list) { return EnvMap{{"CUDA_VISIBLE_DEVICES", list}}; }
    std::string dir_, root_;
};

TEST_F(NodeSourceTest, CacheThatKnowsThePartitionsIsUsed) {
    // Discovery of this empty root would find no GPU: the allotment resolves only from the cache.
    ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(8, 1)));
    auto found = resolve_node("", RootFs(root_), cuda(mig_uuid(3, 7) + "," + mig_uuid(5, 7)));
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::Cache);
    ASSERT_EQ(found->allotment.partitions.size(), 2u);
    EXPECT_EQ(found->allotment.partitions[1].gpu, 5u);
}

TEST_F(NodeSourceTest, NoCacheMeansDiscovery) {
    build_guide_node();
    auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid));
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::Discovery);
    EXPECT_EQ(found->node.gpus.size(), 8u);
}

// Without a cache, the launcher discovers with the setting it was given (the CLI's
// --mig-monitor-capability): the monitor cap is in the partition's files only then.
TEST_F(NodeSourceTest, DiscoveryFollowsTheMonitorSetting) {
    build_guide_node();
    for (bool granted : {false, true}) {
        auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid), granted);
        ASSERT_TRUE(found) << found.error().message;
        const auto& a = found->allotment.partitions.at(0);
        const Gpu& gpu = found->node.gpus[a.gpu];
        const auto& files = gpu.partitions[a.partition].device_files;
        const bool has = std::any_of(files.begin(), files.end(), [](const DeviceFile& f) {
            return f.path == "/dev/nvidia-caps/nvidia-cap2";
        });
        EXPECT_EQ(has, granted);
        EXPECT_EQ(gpu.withheld_files.empty(), granted);
    }
}

TEST_F(NodeSourceTest, CacheMissingAPartitionFallsBackToDiscovery) {
    build_guide_node();
    ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(8, 1)));  // other UUIDs
    auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid));
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::Discovery);
}

TEST_F(NodeSourceTest, UnreadableCacheFallsBackToDiscovery) {
    build_guide_node();
    fs::create_directories(root_ + "/run/xpart");
    std::ofstream(root_ + "/run/xpart/node.json") << "{ not json";
    ASSERT_FALSE(read_node_cache(RootFs(root_)));
    ASSERT_TRUE(RootFs(root_).exists("/run/xpart/node.json"));
    auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid));
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::Discovery);
}

// Another xpart's cache (or one without a format) is refused, not discovered around: the
// records it describes are not this xpart's to interpret, and slurmd's restart rewrites it.
TEST_F(NodeSourceTest, CacheOfAnotherFormatIsRefused) {
    build_guide_node();  // discovery would find the partition
    for (const char* format : {"2", ""}) {
        SCOPED_TRACE(format);
        ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(8, 1)));
        auto j = nlohmann::json::parse(*RootFs(root_).read("/run/xpart/node.json"));
        j.erase("format");
        if (*format) j["format"] = nlohmann::json::parse(format);
        std::ofstream(root_ + "/run/xpart/node.json") << j.dump();
        auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid));
        ASSERT_FALSE(found);
        EXPECT_EQ(found.error().message,
                  root_ + "/run/xpart/node.json: node cache format " +
                      (*format ? std::string(format) : "(none: an earlier xpart)") +
                      ", this xpart reads format 1: restart slurmd so it rewrites the cache");
    }
}

// Slurm's indices from a cached node are slurmd's gres record indices (one partition each);
// from a node without them, GPU indices (every partition of the GPU), as stock sets them.
TEST_F(NodeSourceTest, StepGpusFromTheCacheAreRecordIndices) {
    ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(2, 7)));
    auto found = resolve_node("", RootFs(root_), EnvMap{{"SLURM_STEP_GPUS", "8,3"}});
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::Cache);
    ASSERT_EQ(found->allotment.partitions.size(), 2u);
    EXPECT_EQ(found->allotment.partitions[0].gpu, 1u);
    EXPECT_EQ(found->allotment.partitions[0].partition, 1u);
    EXPECT_EQ(found->allotment.partitions[1].gpu, 0u);
    EXPECT_EQ(found->allotment.partitions[1].partition, 3u);
}

TEST_F(NodeSourceTest, AfterAMissTheErrorIsTheLiveNodes) {
    // Neither the cache nor the (GPU-less) root knows the partition: the answer is
    // discovery's, so it does not blame a cache the user never asked for.
    ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(8, 1)));
    auto live = resolve_allotment(Node{}, cuda(kGuideUuid), [](const DeviceFile&) { return true; });
    ASSERT_FALSE(live);
    auto found = resolve_node("", RootFs(root_), cuda(kGuideUuid));
    ASSERT_FALSE(found);
    EXPECT_EQ(found.error().message, live.error().message);
}

TEST_F(NodeSourceTest, NodeJsonFileWinsAndItsErrorsAreFinal) {
    ASSERT_TRUE(write_node_cache(RootFs(root_), fixtures::dgx_a100(8, 1)));
    const std::string file = dir_ + "/node.json";
    std::ofstream(file) << to_json(fixtures::dgx_a100(2, 1)).dump();
    auto found = resolve_node(file, RootFs(root_), cuda(mig_uuid(1, 7)));
    ASSERT_TRUE(found) << found.error().message;
    EXPECT_EQ(found->origin, NodeOrigin::File);
    EXPECT_EQ(found->node.gpus.size(), 8u);  // dgx_a100(2, 1): 2 MIG GPUs of 8
    // A partition only the cache knows is not looked up there: the file was asked for.
    auto missing = resolve_node(file, RootFs(root_), cuda(mig_uuid(5, 7)));
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find(mig_uuid(5, 7)), std::string::npos) << missing.error().message;
    std::ofstream(file) << "[";
    auto bad = resolve_node(file, RootFs(root_), cuda(mig_uuid(1, 7)));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, file + ": not valid JSON");
}

}  // namespace
}  // namespace xpart::binding
