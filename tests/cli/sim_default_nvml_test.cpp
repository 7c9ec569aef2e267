// xpart-sim's default --nvml-lib: the build tree's own program takes the fake built beside it;
// any other copy (an installed one, on a node that never had the build tree) the installed
// fake, and where that is missing one line names it and the option, and no root is written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

const std::string kBuilt = "/sim/fake_nvml/.libs/libnvidia-ml.so.1";

// The default CLI11 shows after the option: "--nvml-lib TEXT=PATH" (2.3), "TEXT [PATH]" (2.4).
std::string help_default(const std::string& help) {
    const auto at = help.find("/libnvidia-ml.so.1");
    if (at == std::string::npos) return "";
    const auto from = help.find_last_of("=[ ", at) + 1;
    return help.substr(from, help.find_first_of("] \n", at) - from);
}

TEST(SimDefaultNvml, TheBuildTreesXpartSimTakesTheFakeBuiltBesideIt) {
    const auto r = run_command({build_dir() + "/xpart-sim", "build", "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(help_default(r.out), build_dir() + kBuilt) << r.out;
}

TEST(SimDefaultNvml, ACopyElsewhereTakesTheInstalledFakeAndNamesItWhenMissing) {
    TempDir dir;
    std::filesystem::copy_file(build_dir() + "/xpart-sim", dir.path() + "/xpart-sim");
    const auto help = run_command({dir.path() + "/xpart-sim", "build", "--help"});
    ASSERT_EQ(help.exit_code, 0) << help.err;
    const std::string installed = help_default(help.out);
    EXPECT_NE(installed, build_dir() + kBuilt);
    const std::string tail = "/xpart/sim/libnvidia-ml.so.1";  // PKGLIBDIR/sim
    EXPECT_TRUE(installed.size() > tail.size() &&
                installed.compare(installed.size() - tail.size(), tail.size(), tail) == 0)
        << help.out;
    if (::access(installed.c_str(), F_OK) == 0) GTEST_SKIP() << installed << " is installed here";
    const auto r = run_command({dir.path() + "/xpart-sim", "build",
                                source_dir() + "/sim/specs/h100-80gb.json", dir.path() + "/root"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart-sim: fake NVML library " + installed +
                         " (--nvml-lib): No such file or directory\n");
    EXPECT_NE(::access((dir.path() + "/root").c_str(), F_OK), 0) << "no half-written root";
}

}  // namespace
}  // namespace xpart::test
