// `xpart-sim driver` playing amdgpu on a built root: a compute-partition switch leaves the tree
// `xpart-sim build` makes of the switched spec (but for generation_id), refusals (EINVAL, EBUSY
// from `xpart-sim kfd-hold`) leave the tree as it was, memory-partition writes wait for a
// reboot. Drives the build tree's xpart-sim; device nodes need root, as the tree tests do.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"
#include "tests/libxpart/amd_temp_root.hpp"
#include "tests/sim/sim_process.hpp"
#include "tests/sim/tree_snapshot.hpp"

namespace xpart::sim {
namespace {

using xpart::testing::eventually;
using xpart::testing::SimProcess;
using xpart::testing::snapshot_tree;
using xpart::testing::TempRoot;
using xpart::testing::tree_diff;

const std::string kGen = "/sys/class/kfd/kfd/topology/generation_id";
const std::string kPci = "/sys/bus/pci/devices/0000:05:00.0/";
const std::string kProc = "/sys/class/kfd/kfd/proc";

// One MI300X at 0000:05 in `mode`/`nps`; `other` adds a second GPU (JSON) after it.
std::string spec_text(const std::string& mode, const std::string& nps, const std::string& other = "") {
    return R"({"name":"mi300x","cpus":"0-15","majors":{"kfd":237},
      "numa":[{"node":0,"cpus":"0-7"},{"node":1,"cpus":"8-15"}],"amd":{"gpus":[
      {"model":"MI300X","unique_id":11,"pci_bus_id":"0000:05:00.0","hive_id":77,
       "compute_partition":")" + mode + R"(","memory_partition":")" + nps + R"("})" +
           (other.empty() ? "" : "," + other) + "]}}";
}
// A hive mate with the newer platform naming: its KFD nodes and render minors follow 0000:05's.
const std::string kHiveMate = R"({"model":"MI300X","unique_id":12,"pci_bus_id":"0000:85:00.0",
  "numa_node":1,"compute_partition":"CPX","memory_partition":"NPS4","xcp_naming":"underscore","hive_id":77})";

class AmdDriverTest : public ::testing::Test {
protected:
    // Writes `text` as scratch/<name>.json and builds it into `into` with xpart-sim build.
    std::string build(const std::string& name, const std::string& text, const TempRoot& into) {
        const std::string file = scratch.path() + "/" + name + ".json";
        std::ofstream(file) << text;
        SimProcess b({"build", file, into.path()}, log());
        EXPECT_EQ(b.finish(0), 0) << read_log();
        return file;
    }
    std::string log() const { return scratch.path() + "/stderr"; }
    std::string read_log() const { return scratch.read("/stderr"); }
    bool logged(const std::string& line) const { return read_log().find(line) != std::string::npos; }
    std::unique_ptr<SimProcess> start(const std::vector<std::string>& args) {
        auto p = std::make_unique<SimProcess>(args, log());
        EXPECT_TRUE(p->wait_ready()) << read_log();
        return p;
    }
    std::unique_ptr<SimProcess> start_driver(const std::string& spec) { return start({"driver", spec, root.path()}); }
    std::unique_ptr<SimProcess> hold() { return start({"kfd-hold", root.path(), "0000:05:00.0"}); }
    bool generation_is(unsigned n) const {
        return eventually([&] { return trim(root.read(kGen)) == std::to_string(n); });
    }
    // The root now against a fresh build of `spec_text`, generation_id aside.
    std::string diff_from_build(const std::string& text) {
        TempRoot fresh;
        build("fresh", text, fresh);
        return tree_diff(snapshot_tree(root.path(), {kGen}), snapshot_tree(fresh.path(), {kGen}));
    }

    TempRoot scratch, root;
};

struct SwitchCase {
    const char* name;
    const char *mode, *nps, *to, *written;  // written: what the user writes for `to`
    bool hive_mate;
};
class AmdDriverSwitchTest : public AmdDriverTest, public ::testing::WithParamInterface<SwitchCase> {};

// There and back: each switch gives the tree of a fresh build, generation_id 2 then 3; the
// second switch by a new driver, which takes the mode from the root.
TEST_P(AmdDriverSwitchTest, SwitchGivesTheTreeOfAFreshBuild) {
    const SwitchCase& c = GetParam();
    const std::string other = c.hive_mate ? kHiveMate : "";
    const std::string spec = build("start", spec_text(c.mode, c.nps, other), root);
    auto driver = start_driver(spec);
    root.write(kPci + "current_compute_partition", c.written);
    ASSERT_TRUE(generation_is(2)) << read_log();
    EXPECT_EQ(diff_from_build(spec_text(c.to, c.nps, other)), "");
    EXPECT_TRUE(logged(std::string("0000:05:00.0: ") + c.mode + " -> " + c.to + " (")) << read_log();
    EXPECT_EQ(driver->finish(), 0);

    driver = start_driver(spec);
    root.write(kPci + "current_compute_partition", std::string(c.mode) + "\n");
    ASSERT_TRUE(generation_is(3)) << read_log();
    EXPECT_EQ(diff_from_build(spec_text(c.mode, c.nps, other)), "");
    EXPECT_EQ(driver->finish(), 0);
    EXPECT_EQ(read_log().find("refused"), std::string::npos) << read_log();
}
INSTANTIATE_TEST_SUITE_P(Switches, AmdDriverSwitchTest, ::testing::Values(
    SwitchCase{"SpxToCpx", "SPX", "NPS1", "CPX", "CPX\n", false},
    SwitchCase{"LowerCaseUntrimmed", "SPX", "NPS1", "DPX", " dpx \n", false},
    SwitchCase{"CpxToQpxUnderNps4", "CPX", "NPS4", "QPX", "QPX", false},
    SwitchCase{"HiveMateRenumbered", "SPX", "NPS1", "CPX", "CPX\n", true}),
    [](const auto& info) { return std::string(info.param.name); });

struct RefusalCase {
    const char* name;
    const char *mode, *nps, *file, *written, *log;
};
class AmdDriverRefusalTest : public AmdDriverTest, public ::testing::WithParamInterface<RefusalCase> {};

// The file shows the old value again, one line says why, nothing else changes.
TEST_P(AmdDriverRefusalTest, RefusedWriteLeavesTheTree) {
    const RefusalCase& c = GetParam();
    const std::string spec = build("start", spec_text(c.mode, c.nps), root);
    const std::string file = kPci + c.file, old = root.read(file);
    const auto before = snapshot_tree(root.path());
    auto driver = start_driver(spec);
    root.write(file, c.written);
    EXPECT_TRUE(eventually([&] { return logged(c.log) && root.read(file) == old; }))
        << read_log() << root.read(file);
    EXPECT_EQ(tree_diff(snapshot_tree(root.path()), before), "");
    EXPECT_EQ(driver->finish(), 0);
}
INSTANTIATE_TEST_SUITE_P(Refusals, AmdDriverRefusalTest, ::testing::Values(
    RefusalCase{"TpxOnMi300x", "SPX", "NPS1", "current_compute_partition", "TPX\n",
                "0000:05:00.0: TPX refused: EINVAL (not a mode of the MI300X"},
    RefusalCase{"NotAMode", "SPX", "NPS1", "current_compute_partition", "bogus",
                "0000:05:00.0: BOGUS refused: EINVAL"},
    RefusalCase{"SpxUnderNps4", "CPX", "NPS4", "current_compute_partition", "SPX\n",
                "0000:05:00.0: SPX refused: EINVAL (NPS4 allows QPX, CPX only)"},
    RefusalCase{"Nps4WaitsForReboot", "SPX", "NPS1", "current_memory_partition", "NPS4\n",
                "0000:05:00.0: NPS4 requested: applied at the next driver load (reboot)"},
    RefusalCase{"Nps2NotAMemoryMode", "SPX", "NPS1", "current_memory_partition", "nps2\n",
                "0000:05:00.0: NPS2 refused: EINVAL (not a memory mode of the MI300X"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(AmdDriverTest, KfdHolderMakesTheGpuBusyUntilItExits) {
    const std::string spec = build("start", spec_text("SPX", "NPS1"), root);
    auto driver = start_driver(spec);
    auto holder = hold();
    const std::string registry = kProc + "/" + std::to_string(holder->pid());
    ASSERT_TRUE(RootFs(root.path()).exists(registry + "/pasid"));
    const auto before = snapshot_tree(root.path());
    root.write(kPci + "current_compute_partition", "CPX\n");
    EXPECT_TRUE(eventually([&] {
        return logged("CPX refused: EBUSY (pid " + std::to_string(holder->pid()) + " holds it)") &&
               root.read(kPci + "current_compute_partition") == "SPX\n";
    })) << read_log();
    EXPECT_EQ(tree_diff(snapshot_tree(root.path()), before), "");

    EXPECT_EQ(holder->finish(), 0);
    EXPECT_FALSE(RootFs(root.path()).exists(kProc));
    root.write(kPci + "current_compute_partition", "CPX\n");
    ASSERT_TRUE(generation_is(2)) << read_log();
    EXPECT_EQ(diff_from_build(spec_text("CPX", "NPS1")), "");
    EXPECT_EQ(driver->finish(), 0);
}

// A holder killed outright leaves its registry; the driver removes it as the kernel would.
TEST_F(AmdDriverTest, KilledHoldersRegistryIsIgnored) {
    const std::string spec = build("start", spec_text("SPX", "NPS1"), root);
    auto driver = start_driver(spec);
    auto holder = hold();
    const std::string pid = std::to_string(holder->pid());
    EXPECT_EQ(holder->finish(SIGKILL), 128 + SIGKILL);
    ASSERT_TRUE(RootFs(root.path()).exists(kProc + "/" + pid));
    root.write(kPci + "current_compute_partition", "CPX\n");
    ASSERT_TRUE(generation_is(2)) << read_log();
    EXPECT_TRUE(logged("KFD process " + pid + " is gone")) << read_log();
    EXPECT_EQ(diff_from_build(spec_text("CPX", "NPS1")), "");
    EXPECT_EQ(driver->finish(), 0);
}

// Wrong spec or root: one line naming it, exit 1.
TEST_F(AmdDriverTest, NoAmdGpusOrNoSimRootIsOneLineAndExit1) {
    const std::string spec = build("start", spec_text("SPX", "NPS1"), root);
    const std::string plain = scratch.path() + "/plain.json";
    std::ofstream(plain) << R"({"name":"plain","cpus":"0-7","numa":[{"node":0,"cpus":"0-7"}]})";
    TempRoot empty;
    struct Case { std::vector<std::string> args; std::string line; };
    for (const Case& c : {Case{{"driver", plain, root.path()}, "xpart-sim driver: " + plain + ": no AMD GPUs"},
                          Case{{"driver", spec, empty.path()}, "xpart-sim driver: " + empty.path() + ": not an xpart-sim root"},
                          Case{{"kfd-hold", empty.path(), "0000:05:00.0"}, "xpart-sim kfd-hold: " + empty.path() + ": not an xpart-sim root"},
                          Case{{"kfd-hold", root.path(), "0000:99:00.0"}, "no KFD node of the GPU 0000:99:00.0"}}) {
        scratch.write("/stderr", "");
        SimProcess p(c.args, log());
        EXPECT_EQ(p.finish(0), 1) << c.line;
        const std::string err = read_log();
        EXPECT_NE(err.find(c.line), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
}

}  // namespace
}  // namespace xpart::sim
