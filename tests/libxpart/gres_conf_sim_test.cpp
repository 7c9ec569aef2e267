// gres.conf generation and checking on simulated nodes (simulator + fake NVML + discovery).
// Expected lines are written from the spec (sim/specs/mixed-mig-full.json and its reviewed
// golden), not from the code under test.
#include <gtest/gtest.h>

#include "libxpart/discovery.hpp"
#include "libxpart/slurm_text/gres_conf.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart {
namespace {

using testing::SimRoot;

Node discover_sim(const SimRoot& r) {
    auto node = discover(r.discovery_options());
    EXPECT_TRUE(node.ok()) << node.error().message;
    return node.ok() ? *node : Node{};
}

std::string generated_text(const Node& node, const RootFs& root) {
    std::string text;
    for (const GresConfRecord& r : generate_gres_records(node, root)) text += format_gres_record(r) + "\n";
    return text;
}

TEST(GresConfSim, MixedMigAndWholeGpusGenerateMultipleFilesAndFile) {
    SimRoot sim(testing::read_text(testing::spec_file("mixed-mig-full")));
    ASSERT_EQ(sim.error(), "");
    const Node node = discover_sim(sim);
    const std::string R = sim.root();
    // GPU 3 waits for a reset (MIG pending): it has no partition, hence no record.
    EXPECT_EQ(generated_text(node, RootFs(R)),
              "Name=gpu Type=3g.40gb MultipleFiles=" + R + "/dev/nvidia0," + R +
                  "/dev/nvidia-caps/nvidia-cap21," + R + "/dev/nvidia-caps/nvidia-cap22 Cores=0-15\n"
              "Name=gpu Type=2g.20gb MultipleFiles=" + R + "/dev/nvidia0," + R +
                  "/dev/nvidia-caps/nvidia-cap30," + R + "/dev/nvidia-caps/nvidia-cap31 Cores=0-15\n"
              "Name=gpu Type=1g.10gb+me MultipleFiles=" + R + "/dev/nvidia0," + R +
                  "/dev/nvidia-caps/nvidia-cap84," + R + "/dev/nvidia-caps/nvidia-cap85 Cores=0-15\n"
              "Name=gpu Type=1g.10gb MultipleFiles=" + R + "/dev/nvidia0," + R +
                  "/dev/nvidia-caps/nvidia-cap93," + R + "/dev/nvidia-caps/nvidia-cap94 Cores=0-15\n"
              "Name=gpu Type=a100-sxm4-80gb File=" + R + "/dev/nvidia1 Cores=0-15\n"
              "Name=gpu Type=tesla-v100-sxm2-32gb File=" + R + "/dev/nvidia2 Cores=16-31\n");
}

TEST(GresConfSim, CheckOfGeneratedConfReportsOnlyThePendingGpu) {
    SimRoot sim(testing::read_text(testing::spec_file("mixed-mig-full")));
    ASSERT_EQ(sim.error(), "");
    const Node node = discover_sim(sim);
    auto conf = parse_gres_conf(generated_text(node, RootFs(sim.root())), "gres.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    GresCheckOptions options;
    options.root = RootFs(sim.root());
    options.file = "gres.conf";
    std::vector<std::string> lines;
    for (const GresMismatch& m : check_gres_records(conf->records, node, options))
        lines.push_back(m.to_string());
    EXPECT_EQ(lines, std::vector<std::string>{
                         "gres.conf: GPU 3 (GPU-a1000000-0000-4000-8000-000000000004, "
                         "0000:af:00.0): MIG mode change pending: reset the GPU, then regenerate "
                         "gres.conf"});
}

TEST(GresConfSim, NodePathsAgreeOnASimulatedRoot) {
    // A gres.conf written for the real node (/dev/... paths) checks clean against its replay.
    SimRoot sim(testing::read_text(testing::spec_file("a100-guide")));
    ASSERT_EQ(sim.error(), "");
    const Node node = discover_sim(sim);
    auto conf = parse_gres_conf(generated_text(node, RootFs("/")), "gres.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(conf->records.size(), 26u);
    GresCheckOptions options;
    options.root = RootFs(sim.root());
    EXPECT_TRUE(check_gres_records(conf->records, node, options).empty());
}

}  // namespace
}  // namespace xpart
