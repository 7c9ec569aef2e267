// `xpart discover --siblings` on simulated hosts: the reshape flow's NodeNames, one per
// geometry the host may take, with the current one up and first, as slurm.conf and gres.conf
// lines; MIG geometries from the fake NVML's profiles and the site's Geometry= names, AMD
// modes from what amdgpu offers under the memory partition; and the hosts it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

// An A100 80GB host laid out as seven 1g.10gb, as the reshape flow's tests lay it.
const char* kA100 = R"({"name": "n1", "cpus": "0-7", "numa": [{"node": 0, "cpus": "0-7"}],
  "nvidia": {"driver_version": "550.54.15", "gpus": [
    {"product": "A100-SXM4-80GB", "uuid": "GPU-a1000000-0000-4000-8000-0000000000f1", "pci_bus_id": "0000:3b:00.0",
     "minor": 0, "numa_node": 0, "mig": "enabled", "instances": [
      {"profile": "1g.10gb", "start": 0, "uuid": "MIG-a1000000-0000-5000-8000-000000000000"},
      {"profile": "1g.10gb", "start": 1, "uuid": "MIG-a1000000-0000-5000-8000-000000000001"},
      {"profile": "1g.10gb", "start": 2, "uuid": "MIG-a1000000-0000-5000-8000-000000000002"},
      {"profile": "1g.10gb", "start": 3, "uuid": "MIG-a1000000-0000-5000-8000-000000000003"},
      {"profile": "1g.10gb", "start": 4, "uuid": "MIG-a1000000-0000-5000-8000-000000000004"},
      {"profile": "1g.10gb", "start": 5, "uuid": "MIG-a1000000-0000-5000-8000-000000000005"},
      {"profile": "1g.10gb", "start": 6, "uuid": "MIG-a1000000-0000-5000-8000-000000000006"}]}]}})";

const char* kMi300x = R"({"name": "n1", "cpus": "0-15", "numa": [{"node": 0, "cpus": "0-15"}],
  "amd": {"gpus": [{"model": "MI300X", "unique_id": 16404946649897475633, "pci_bus_id": "0000:05:00.0",
   "numa_node": 0, "compute_partition": "SPX", "memory_partition": "NPS1", "xcp_naming": "underscore"}]}})";

class SiblingsSim : public ::testing::Test {
protected:
    void build(const std::string& spec, bool is_file = false) {
        root_ = dir_.path() + "/root";
        std::string file = spec;
        if (!is_file) {
            file = dir_.path() + "/spec.json";
            write_text(file, spec);
        }
        const auto built = run_command({build_dir() + "/xpart-sim", "build", file, root_});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        conf_ = dir_.path() + "/xpart.conf";
        write_text(conf_, "Geometry=a100-mixed:3g.40gb+2g.20gb+2x1g.10gb\nGeometry=a100-7x1g:7x1g.10gb\n");
    }
    CommandResult siblings(const std::string& what, std::vector<std::string> more = {}) {
        std::vector<std::string> argv = {build_dir() + "/xpart", "--root", root_, "discover", what, "--siblings",
                                         "--node-name", "n1", "--xpart-conf", conf_,
                                         "--nvml-library", root_ + "/usr/lib/xpart-sim/libnvidia-ml.so.1"};
        argv.insert(argv.end(), more.begin(), more.end());
        return run_command(argv);
    }
    // The lines that are not comments.
    static std::vector<std::string> records(const CommandResult& r) {
        std::vector<std::string> out;
        for (const auto& l : lines_of(r.out))
            if (!l.empty() && l[0] != '#') out.push_back(l);
        return out;
    }
    static std::vector<std::string> names(const std::vector<std::string>& lines) {
        std::vector<std::string> out;
        for (const auto& l : lines) out.push_back(l.substr(0, l.find(' ')));
        return out;
    }

    TempDir dir_;
    std::string root_, conf_;
};

TEST_F(SiblingsSim, MigHostOneNodeNamePerGeometryCurrentFirst) {
    build(kA100);
    const auto r = siblings("--slurm-conf", {"--node-options", "CPUs=8 RealMemory=64000"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = records(r);
    ASSERT_GE(lines.size(), 3u) << r.out;
    EXPECT_EQ(lines[0], "NodeName=n1-a100-7x1g NodeHostname=n1 Port=6818 Gres=gpu:1g.10gb:7 Features=xpart_host_n1 "
                        "CPUs=8 RealMemory=64000");
    // The current geometry goes by the site's name for it (a100-7x1g), and makes one sibling.
    EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](auto& l) { return l.find("1g.10gb:7") != l.npos; }), 1);
    EXPECT_EQ(lines[1], "NodeName=n1-a100-mixed NodeHostname=n1 Port=6819 Gres=gpu:3g.40gb:1,gpu:2g.20gb:1,"
                        "gpu:1g.10gb:2 Features=xpart_host_n1 CPUs=8 RealMemory=64000 State=CLOUD");
    const auto all = names(lines);
    for (const char* want : {"NodeName=n1-4x1g20gb", "NodeName=n1-2x3g40gb", "NodeName=n1-3x2g20gb", "NodeName=n1-7g80gb"})
        EXPECT_NE(std::find(all.begin(), all.end(), want), all.end()) << want << " in\n" << r.out;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        EXPECT_NE(lines[i].find(" Port=" + std::to_string(6818 + i) + " "), std::string::npos) << lines[i];
        EXPECT_EQ(lines[i].substr(lines[i].size() - 12), " State=CLOUD") << lines[i];
    }
}

TEST_F(SiblingsSim, MigHostGresLinesNameTheGpusSharedFiles) {
    build(kA100);
    const auto r = siblings("--gres-conf", {"--geometry", "2x3g.40gb"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string named = " Name=gpu Type=3g.40gb MultipleFiles=" + root_ + "/dev/nvidia0," + root_ + "/dev/nvidiactl";
    const auto lines = records(r);
    ASSERT_EQ(lines.size(), 9u) << r.out;  // seven for the current geometry, two for 2x3g.40gb
    EXPECT_EQ(lines[0], "NodeName=n1-a100-7x1g Name=gpu Type=1g.10gb MultipleFiles=" + root_ + "/dev/nvidia0," + root_ +
                            "/dev/nvidiactl");
    EXPECT_EQ(lines[7], "NodeName=n1-2x3g40gb" + named);
    EXPECT_EQ(lines[8], "NodeName=n1-2x3g40gb" + named);
}

TEST_F(SiblingsSim, GeometryChoosesAndUnknownOnesAreRefused) {
    build(kA100);
    auto r = siblings("--slurm-conf", {"--geometry", "a100-mixed,7g.80gb"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(names(records(r)),
              (std::vector<std::string>{"NodeName=n1-a100-7x1g", "NodeName=n1-a100-mixed", "NodeName=n1-7g80gb"}));
    r = siblings("--slurm-conf", {"--geometry", "5x9g.1gb"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("xpart discover: --siblings: --geometry 5x9g.1gb: not a geometry this host can take "
                          "(it can take a100-mixed, a100-7x1g, 4x1g.20gb, 3x2g.20gb, 2x3g.40gb, ",
                          0),
              0u)
        << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
}

TEST_F(SiblingsSim, AmdHostOneNodeNamePerModeItsMemoryPartitionAllows) {
    build(kMi300x);
    auto r = siblings("--slurm-conf");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(records(r), (std::vector<std::string>{
                              "NodeName=n1-spx NodeHostname=n1 Port=6818 Gres=gpu:spx:1 Features=xpart_host_n1",
                              "NodeName=n1-dpx NodeHostname=n1 Port=6819 Gres=gpu:dpx:2 Features=xpart_host_n1 State=CLOUD",
                              "NodeName=n1-qpx NodeHostname=n1 Port=6820 Gres=gpu:qpx:4 Features=xpart_host_n1 State=CLOUD",
                              "NodeName=n1-cpx NodeHostname=n1 Port=6821 Gres=gpu:cpx:8 Features=xpart_host_n1 State=CLOUD"}))
        << r.out;
    r = siblings("--gres-conf", {"--geometry", "cpx", "--amd-type-naming", "mode_memory"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = records(r);
    ASSERT_EQ(lines.size(), 9u) << r.out;
    const std::string files = " MultipleFiles=" + root_ + "/dev/kfd," + root_ + "/dev/dri/renderD128";
    EXPECT_EQ(lines[0], "NodeName=n1-spx Name=gpu Type=spx.nps1" + files);
    for (std::size_t i = 1; i < 9; ++i) EXPECT_EQ(lines[i], "NodeName=n1-cpx Name=gpu Type=cpx.nps1" + files);
}

// Eight MI300X in CPX under NPS4: only QPX and CPX fit the memory partition; each GPU's lines
// name its own render node.
TEST_F(SiblingsSim, AmdNps4HostOnlyTheModesNps4Holds) {
    build(source_dir() + "/sim/specs/mi300x-cpx-8gpu.json", true);
    auto r = siblings("--slurm-conf");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(names(records(r)), (std::vector<std::string>{"NodeName=n1-cpx", "NodeName=n1-qpx"})) << r.out;
    EXPECT_NE(r.out.find(" Gres=gpu:cpx:64 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" Gres=gpu:qpx:32 "), std::string::npos) << r.out;
    r = siblings("--gres-conf");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> renders;
    for (const auto& l : records(r))
        if (l.rfind("NodeName=n1-qpx ", 0) == 0) {
            const std::string render = l.substr(l.rfind(',') + 1);
            if (std::find(renders.begin(), renders.end(), render) == renders.end()) renders.push_back(render);
        }
    EXPECT_EQ(renders.size(), 8u) << r.out;
}

TEST_F(SiblingsSim, HostsTheFlowCannotReshapeAreRefusedInOneLine) {
    build(source_dir() + "/sim/specs/mixed-mig-full.json", true);
    auto r = siblings("--slurm-conf");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "xpart discover: --siblings: GPU 1 (NVIDIA A100-SXM4-80GB): MIG is off: the reshape flow needs "
                     "MIG on (turning it on is a GPU reset, an admin's)\n");
    build(kA100);
    r = siblings("--slurm-conf", {"--type-naming", "slurm"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("--type-naming xpart"), std::string::npos) << r.err;
    r = run_command({build_dir() + "/xpart", "--root", root_, "discover", "--siblings"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart discover: --siblings: give --gres-conf or --slurm-conf\n");
}

}  // namespace
}  // namespace xpart::test
