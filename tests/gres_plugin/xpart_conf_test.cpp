#include <gtest/gtest.h>

#include <fstream>

#include "libxpart/gres/xpart_conf.hpp"

namespace xpart {
namespace {

TEST(XpartConf, DefaultsWhenEmpty) {
    auto c = parse_xpart_conf("# nothing\n\n", "xpart.conf");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->root, "");
    setenv("XPART_ROOT", "/sim/from-env", 1);
    EXPECT_EQ(discovery_options(*c).root.root(), "/sim/from-env");
    unsetenv("XPART_ROOT");
    EXPECT_EQ(discovery_options(*c).root.root(), "/");
    EXPECT_TRUE(c->nvidia);
    EXPECT_TRUE(c->amd);
    EXPECT_EQ(c->amd_type_naming, AmdTypeNaming::Mode);
    EXPECT_EQ(c->type_naming, TypeNaming::Xpart);
    EXPECT_EQ(discovery_options(*c).type_naming, TypeNaming::Xpart);
    EXPECT_EQ(c->amd_index_mode, AmdIndexMode::Index);
    EXPECT_EQ(c->on_mismatch, OnMismatch::RegisterHardware);
    EXPECT_FALSE(c->mig_monitor_capability);
    EXPECT_FALSE(discovery_options(*c).mig_monitor_capability);
}

// MigMonitorCapability= reaches discovery as written; "no" is the default spelled out.
struct MonitorSetting {
    const char* text;
    bool granted;
};

class XpartConfMonitor : public ::testing::TestWithParam<MonitorSetting> {};

TEST_P(XpartConfMonitor, ReachesDiscoveryOptions) {
    auto c = parse_xpart_conf(GetParam().text, "xpart.conf");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->mig_monitor_capability, GetParam().granted);
    EXPECT_EQ(discovery_options(*c).mig_monitor_capability, GetParam().granted);
}

INSTANTIATE_TEST_SUITE_P(Values, XpartConfMonitor,
                         ::testing::Values(MonitorSetting{"MigMonitorCapability=yes\n", true},
                                           MonitorSetting{"migmonitorcapability=YES\n", true},
                                           MonitorSetting{"MigMonitorCapability=no\n", false},
                                           // The words plugstack.conf and srun options take too.
                                           MonitorSetting{"MigMonitorCapability=True\n", true},
                                           MonitorSetting{"MigMonitorCapability=1\n", true},
                                           MonitorSetting{"MigMonitorCapability=false\n", false},
                                           MonitorSetting{"MigMonitorCapability=0\n", false},
                                           MonitorSetting{"# unset\n", false}));

// TypeNaming= reaches discovery as written, either case; the series stays discovery's default
// (load_node_gres sets it from the adapter).
struct NamingSetting {
    const char* text;
    TypeNaming naming;
};

class XpartConfTypeNaming : public ::testing::TestWithParam<NamingSetting> {};

TEST_P(XpartConfTypeNaming, ReachesDiscoveryOptions) {
    auto c = parse_xpart_conf(GetParam().text, "xpart.conf");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->type_naming, GetParam().naming);
    EXPECT_EQ(discovery_options(*c).type_naming, GetParam().naming);
    EXPECT_EQ(discovery_options(*c).slurm_series, SlurmSeries::S22_05);
}

INSTANTIATE_TEST_SUITE_P(Values, XpartConfTypeNaming,
                         ::testing::Values(NamingSetting{"TypeNaming=slurm\n", TypeNaming::Slurm},
                                           NamingSetting{"typenaming=SLURM # as gpu/nvml\n", TypeNaming::Slurm},
                                           NamingSetting{"TypeNaming=xpart\n", TypeNaming::Xpart},
                                           NamingSetting{"TypeNaming=Xpart Vendors=nvidia\n", TypeNaming::Xpart}));

TEST(XpartConf, EveryKeyCaseInsensitiveSeveralPerLine) {
    auto c = parse_xpart_conf(
        "ROOT=/tmp/sim/node1   vendors=amd # only AMD here\n"
        "NvmlLibrary=/opt/fake/libnvidia-ml.so.1\n"
        "amdtypenaming=Model_Mode_Memory AmdIndexMode=UUID\n"
        "OnMismatch=drain\n",
        "xpart.conf");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->root, "/tmp/sim/node1");
    EXPECT_FALSE(c->nvidia);
    EXPECT_TRUE(c->amd);
    EXPECT_EQ(c->nvml_library, "/opt/fake/libnvidia-ml.so.1");
    EXPECT_EQ(c->amd_type_naming, AmdTypeNaming::ModelModeMemory);
    EXPECT_EQ(c->amd_index_mode, AmdIndexMode::Uuid);
    EXPECT_EQ(c->on_mismatch, OnMismatch::Drain);
    auto opts = discovery_options(*c);
    EXPECT_EQ(opts.root.root(), "/tmp/sim/node1");
    EXPECT_FALSE(opts.nvidia);
    EXPECT_EQ(opts.nvml_library, "/opt/fake/libnvidia-ml.so.1");
    EXPECT_EQ(opts.amd_type_naming, AmdTypeNaming::ModelModeMemory);
}

struct BadCase {
    const char* text;
    const char* message;  // the whole error line
};

class XpartConfErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(XpartConfErrors, OneLineNamingFileLineKeyValue) {
    auto c = parse_xpart_conf(GetParam().text, "/etc/slurm/xpart.conf");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, XpartConfErrors,
    ::testing::Values(
        BadCase{"Vendors=intel\n", "/etc/slurm/xpart.conf:1: Vendors=intel: unknown vendor 'intel' (expected nvidia, amd or nvidia,amd)"},
        BadCase{"\nRoot=relative/dir\n", "/etc/slurm/xpart.conf:2: Root=relative/dir: must be an absolute path"},
        BadCase{"AmdTypeNaming=long\n", "/etc/slurm/xpart.conf:1: AmdTypeNaming=long: expected mode, mode_memory or model_mode_memory"},
        BadCase{"AmdIndexMode=name\n", "/etc/slurm/xpart.conf:1: AmdIndexMode=name: expected index or uuid"},
        BadCase{"OnMismatch=ignore\n", "/etc/slurm/xpart.conf:1: OnMismatch=ignore: expected register_hardware or drain"},
        BadCase{"Colour=blue\n", "/etc/slurm/xpart.conf:1: Colour=blue: unknown key (known: Root, Vendors, NvmlLibrary, TypeNaming, AmdTypeNaming, AmdIndexMode, OnMismatch, MigMonitorCapability, Geometry)"},
        BadCase{"TypeNaming=nvml\n", "/etc/slurm/xpart.conf:1: TypeNaming=nvml: expected xpart or slurm"},
        BadCase{"\n\nTypeNaming=\n", "/etc/slurm/xpart.conf:3: TypeNaming=: expected xpart or slurm"},
        BadCase{"MigMonitorCapability=maybe\n", "/etc/slurm/xpart.conf:1: MigMonitorCapability=maybe: expected yes or no"},
        BadCase{"\nMigMonitorCapability=\n", "/etc/slurm/xpart.conf:2: MigMonitorCapability=: expected yes or no"},
        BadCase{"MigMonitorCapability=2\n", "/etc/slurm/xpart.conf:1: MigMonitorCapability=2: expected yes or no"},
        BadCase{"OnMismatch=Drains\n", "/etc/slurm/xpart.conf:1: OnMismatch=Drains: expected register_hardware or drain"},
        BadCase{"Root=/a\n# c\nroot=/b\n", "/etc/slurm/xpart.conf:3: root=/b: key given twice"},
        BadCase{"Root /a\n", "/etc/slurm/xpart.conf:1: Root: expected Key=Value"},
        BadCase{"=x\n", "/etc/slurm/xpart.conf:1: =x: expected Key=Value"},
        BadCase{"Vendors=nvidia,,amd\n", "/etc/slurm/xpart.conf:1: Vendors=nvidia,,amd: unknown vendor '' (expected nvidia, amd or nvidia,amd)"}));

TEST(XpartConf, MissingFileGivesDefaultsUnreadableIsAnError) {
    auto missing = load_xpart_conf("/nonexistent/xpart.conf");
    ASSERT_TRUE(missing) << missing.error().message;
    EXPECT_EQ(missing->root, "");
    auto dir = load_xpart_conf("/");
    ASSERT_FALSE(dir);
    EXPECT_NE(dir.error().message.find("/"), std::string::npos);
}

TEST(XpartConf, LoadsFromFileAndNamesIt) {
    char path[] = "/tmp/xpart_conf_testXXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    close(fd);
    std::ofstream(path) << "Vendors=nvidia\nAmdIndexMode=bogus\n";
    auto c = load_xpart_conf(path);
    unlink(path);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, std::string(path) + ":2: AmdIndexMode=bogus: expected index or uuid");
}

}  // namespace
}  // namespace xpart
