// AMD compute partition switches (libxpart/reshape/amd_reshape): the target words, which modes a memory
// partition allows, the KFD process check, and every refusal of reshape_amd_gpu on a simulated
// MI300X, each leaving the GPU as it was. The switch itself needs the driver that xpart-sim
// plays (tests/cli/amd_reshape_test).
#include <gtest/gtest.h>

#include <functional>

#include "libxpart/reshape/amd_reshape.hpp"
#include "libxpart/text.hpp"
#include "tests/libxpart/amd_temp_root.hpp"

namespace xpart {
namespace {

using testing::TempRoot;

struct TargetCase {
    const char* text;
    const char* parsed;  // AmdTarget::text(); "" for none; nullptr for an error
};

TEST(AmdTarget, ParsesModesOfEveryTypeNaming) {
    const TargetCase cases[] = {
        {"cpx", "CPX"},           {"CPX", "CPX"},   {"cpx.nps4", "CPX.NPS4"}, {"mi300x.cpx.nps4", "CPX.NPS4"},
        {"nps1.spx", "SPX.NPS1"}, {"dpx", "DPX"},   {"3g.40gb", ""},          {"7x1g.10gb", ""},
        {"mi300x", ""},           {"cpx.foo", nullptr}, {"cpx.spx", nullptr},
    };
    for (const auto& c : cases) {
        auto t = parse_amd_target(c.text);
        if (!c.parsed) {
            EXPECT_FALSE(t) << c.text;
            continue;
        }
        ASSERT_TRUE(t) << c.text << ": " << t.error().message;
        EXPECT_EQ(*t ? (*t)->text() : "", c.parsed) << c.text;
    }
}

TEST(AmdTarget, MemoryPartitionAllowsModesItDivides) {
    const AmdModel& mi300x = *find_amd_model("MI300X");
    struct Case {
        PartitionMode mode;
        const char* nps;
        bool fits;
    } cases[] = {
        {PartitionMode::Spx, "NPS1", true},  {PartitionMode::Cpx, "NPS1", true},  {PartitionMode::Spx, "NPS4", false},
        {PartitionMode::Dpx, "NPS4", false}, {PartitionMode::Qpx, "NPS4", true},  {PartitionMode::Cpx, "NPS4", true},
        {PartitionMode::Dpx, "NPS2", true},  {PartitionMode::Spx, "", true},
    };
    for (const auto& c : cases)
        EXPECT_EQ(amd_mode_fits_memory(c.mode, mi300x, c.nps), c.fits) << to_string(c.mode) << " " << c.nps;
}

constexpr const char* kSpx = R"({"name":"spx","cpus":"0-15","amd":{"gpus":[
    {"model":"MI300X","unique_id":42,"pci_bus_id":"0000:05:00.0","compute_partition":"SPX",
     "memory_partition":"NPS1","xcp_naming":"dot"}]}})";
const std::string kPci = "/sys/bus/pci/devices/0000:05:00.0";
const std::string kProc = "/sys/class/kfd/kfd/proc";

DiscoveryOptions options_of(const TempRoot& root) {
    DiscoveryOptions o;
    o.root = RootFs(root.path());
    o.nvidia = false;
    return o;
}

std::string gpu_id(const TempRoot& root) { return root.read("/sys/class/kfd/kfd/topology/nodes/1/gpu_id"); }

TEST(AmdKfdHolders, ProcessesWithTheGpusVramFile) {
    TempRoot root;
    testing::build_spec_text(root, kSpx);
    const std::uint64_t id = std::stoull(gpu_id(root));
    auto none = amd_kfd_holders(RootFs(root.path()), {id});
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_TRUE(none->empty());
    root.write(kProc + "/505/pasid", "32770\n");
    root.write(kProc + "/505/vram_" + std::to_string(id), "0\n");
    root.write(kProc + "/77/pasid", "32771\n");
    root.write(kProc + "/77/vram_" + std::to_string(id + 1), "0\n");  // another GPU's
    root.write(kProc + "/606/vram_" + std::to_string(id), "0\n");
    auto held = amd_kfd_holders(RootFs(root.path()), {id});
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(*held, (std::vector<unsigned>{505, 606}));
}

struct Refusal {
    const char* name;
    const char* target;
    std::function<void(const TempRoot&)> setup;
    const char* message;
};

TEST(AmdReshape, RefusesAndLeavesTheGpuAsItWas) {
    const Refusal cases[] = {
        {"held", "cpx", [](const TempRoot& r) { r.write(kProc + "/505/vram_" + trim(gpu_id(r)), "0\n"); },
         "GPU 0000:05:00.0: 1 KFD process holds it (pid 505): not reshaped (EBUSY)"},
        {"not offered", "tpx", [](const TempRoot&) {},
         "GPU 0000:05:00.0: TPX is not one of the modes amdgpu offers (SPX, DPX, QPX, CPX): not reshaped"},
        {"offered list of the driver", "dpx", [](const TempRoot& r) { r.write(kPci + "/available_compute_partition", "SPX, CPX\n"); },
         "GPU 0000:05:00.0: DPX is not one of the modes amdgpu offers (SPX, CPX): not reshaped"},
        {"memory change", "cpx.nps4", [](const TempRoot&) {},
         "GPU 0000:05:00.0: CPX needs NPS4, the GPU is in NPS1: a memory partition change takes effect only when "
         "amdgpu loads again (reboot class): not reshaped"},
        {"mode the memory partition cannot hold", "spx.nps4", [](const TempRoot&) {},
         "GPU 0000:05:00.0: SPX does not fit in NPS4 (each partition lies in one of its 4 memory partitions): not reshaped"},
        {"old kernel", "cpx", [](const TempRoot& r) { r.remove(kPci + "/current_compute_partition"); },
         "GPU 0000:05:00.0: no <root>/sys/bus/pci/devices/0000:05:00.0/current_compute_partition: this kernel "
         "cannot switch compute partitions"},
    };
    for (const auto& c : cases) {
        TempRoot root;
        testing::build_spec_text(root, kSpx);
        c.setup(root);
        const std::string before = root.read(kPci + "/current_compute_partition") + root.read(kPci + "/current_memory_partition");
        auto target = parse_amd_target(c.target);
        ASSERT_TRUE(target && *target) << c.name;
        auto out = reshape_amd_gpu(options_of(root), "0000:05:00.0", **target, {});
        ASSERT_FALSE(out) << c.name;
        std::string msg = out.error().message;
        for (std::size_t at; (at = msg.find(root.path())) != std::string::npos;) msg.replace(at, root.path().size(), "<root>");
        EXPECT_EQ(msg, c.message) << c.name;
        EXPECT_EQ(root.read(kPci + "/current_compute_partition") + root.read(kPci + "/current_memory_partition"), before)
            << c.name;
    }
}

// No driver re-lays the topology after the write here: discovery never confirms CPX, so the
// old mode is written back and the error says so.
TEST(AmdReshape, PutsTheOldModeBackWhenDiscoveryDoesNotConfirm) {
    TempRoot root;
    testing::build_spec_text(root, kSpx);
    AmdReshapeOptions how;
    how.settle = std::chrono::milliseconds(200);
    auto out = reshape_amd_gpu(options_of(root), "0000:05:00.0", {PartitionMode::Cpx, ""}, how);
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().message,
              "GPU 0000:05:00.0: wrote CPX but discovery shows CPX with 1 partition (incomplete); put back SPX");
    EXPECT_EQ(root.read(kPci + "/current_compute_partition"), "SPX\n");
}

TEST(AmdReshape, AlreadyInTheModeChangesNothing) {
    TempRoot root;
    testing::build_spec_text(root, kSpx);
    auto out = reshape_amd_gpu(options_of(root), "0000:05:00.0", {PartitionMode::Spx, "NPS1"}, {});
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_FALSE(out->changed);
    EXPECT_FALSE(out->reboot_needed);
    EXPECT_EQ(out->partitions, 1u);
}

TEST(AmdReshape, AllowedMemoryChangeIsWrittenForTheNextDriverLoad) {
    TempRoot root;
    testing::build_spec_text(root, kSpx);
    AmdReshapeOptions how;
    how.allow_reboot_class = true;
    auto out = reshape_amd_gpu(options_of(root), "0000:05:00.0", {PartitionMode::Cpx, "NPS4"}, how);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_TRUE(out->reboot_needed);
    EXPECT_EQ(out->memory_before, "NPS1");
    EXPECT_EQ(out->memory_after, "NPS4");
    EXPECT_EQ(root.read(kPci + "/current_memory_partition"), "NPS4\n");
    EXPECT_EQ(root.read(kPci + "/current_compute_partition"), "SPX\n");
}

TEST(AmdReshape, UnpartitionableGpuIsRefused) {
    TempRoot root;
    testing::build_spec_text(root, R"({"name":"mi210","cpus":"0-15","amd":{"gpus":[
        {"model":"MI210","unique_id":43,"pci_bus_id":"0000:07:00.0"}]}})");
    auto out = reshape_amd_gpu(options_of(root), "0000:07:00.0", {PartitionMode::Cpx, ""}, {});
    ASSERT_FALSE(out);
    EXPECT_EQ(out.error().message, "GPU 0000:07:00.0 (MI210) has no compute partitions");
}

}  // namespace
}  // namespace xpart
