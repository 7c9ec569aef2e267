// `xpart discover` where NVML fails to initialise (the fake NVML told to, everywhere; NVIDIA's
// real library in tests/cli/real_nvml_test): one line on stderr naming the library and the
// code, the other vendor's GPUs on stdout, exit 4 in every output mode.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

class DiscoverNvmlFailing : public ::testing::Test {
protected:
    void SetUp() override {
        const auto built = run_command({build_dir() + "/xpart-sim", "build",
                                        source_dir() + "/tests/fixtures/mixed-vendor.json", root()});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        ::setenv("XPART_SIM_NVML_FAULTS", "nvmlInit_v2=9", 1);  // inherited by xpart
    }
    void TearDown() override { ::unsetenv("XPART_SIM_NVML_FAULTS"); }

    std::string root() const { return dir_.path() + "/root"; }
    std::string library() const { return root() + "/usr/lib/xpart-sim/libnvidia-ml.so.1"; }
    CommandResult discover(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{build_dir() + "/xpart", "--root", root(), "discover",
                                      "--nvml-library", library()};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv);
    }
    std::string error_line() const {
        return "xpart discover: NVML " + library() +
               ": nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9) \"Driver Not Loaded\": NVIDIA "
               "GPUs not discovered\n";
    }

    TempDir dir_;
};

TEST_F(DiscoverNvmlFailing, TableShowsTheAmdGpuAndStderrTheOneLine) {
    const auto r = discover({});
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.err, error_line());
    EXPECT_EQ(r.out.rfind("GPU 0  amd  MI300X", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find("nvidia"), std::string::npos) << r.out;
}

TEST_F(DiscoverNvmlFailing, JsonCarriesTheErrorLine) {
    const auto r = discover({"--json"});
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.err, error_line());
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["gpus"].size(), 1u);
    EXPECT_EQ(j["gpus"][0]["vendor"], "amd");
    ASSERT_EQ(j["errors"].size(), 1u);
    EXPECT_EQ("xpart discover: " + j["errors"][0].get<std::string>() + "\n", error_line());
}

TEST_F(DiscoverNvmlFailing, CheckExitsFourNotThree) {
    ::unsetenv("XPART_SIM_NVML_FAULTS");
    const auto full = discover({"--gres-conf"});
    ASSERT_EQ(full.exit_code, 0) << full.err;
    const std::string conf = dir_.path() + "/gres.conf";
    write_text(conf, full.out);
    ::setenv("XPART_SIM_NVML_FAULTS", "nvmlInit_v2=9", 1);
    const auto r = discover({"--check", conf});
    EXPECT_EQ(r.exit_code, 4);  // the cause, not the differences it leads to
    EXPECT_EQ(r.err.rfind(error_line(), 0), 0u) << r.err;
    EXPECT_NE(r.out, "") << "the missing NVIDIA records are still listed";
}

TEST_F(DiscoverNvmlFailing, NvidiaOnlyTableSaysNoneDiscovered) {
    const auto r = run_command({build_dir() + "/xpart", "--root", root(), "discover", "--vendor",
                                "nvidia", "--nvml-library", library()});
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.out, "no GPUs discovered\n");
    EXPECT_EQ(r.err, error_line());
}

}  // namespace
}  // namespace xpart::test
