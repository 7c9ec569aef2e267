// `xpart node check` end to end on a simulated MIG node with the fake NVML: slurmd's node cache
// is what `xpart discover --json` printed for the spec as it was, then the root is rebuilt as
// an admin left it (mig-parted, `nvidia-smi mig -dci/-dgi/-cgi`). Differences the step check
// cannot see without NVML (a UUID re-made under the same ids) must show here.
#include <gtest/gtest.h>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"
#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

const std::string kSpec = "mixed-mig-full";
const std::string kLast = "MIG-a1000001-0000-5000-8000-000000000010";  // the 1g.10gb at start 3 (GI 10)

struct CheckCase {
    const char* name;
    std::function<void(std::string&)> edit;  // the spec text as the node is now
    int want_exit;
    std::vector<std::string> want_lines;  // without the final advice line
};

void PrintTo(const CheckCase& c, std::ostream* os) { *os << c.name; }

void replace(std::string& text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
}

class NodeCheckSim : public ::testing::TestWithParam<CheckCase> {
protected:
    // Builds ROOT from spec TEXT; returns the NVML library path inside it.
    std::string build(const std::string& text, const std::string& root) {
        const std::string spec = dir_.path() + "/" + std::to_string(builds_++) + ".json";
        write_text(spec, text);
        const auto built = run_command({build_dir() + "/xpart-sim", "build", spec, root});
        EXPECT_EQ(built.exit_code, 0) << built.err;
        return root + "/usr/lib/xpart-sim/libnvidia-ml.so.1";
    }

    TempDir dir_;
    int builds_ = 0;
};

TEST_P(NodeCheckSim, ReportsWhatChangedSinceSlurmdRegistered) {
    const std::string original = read_text(source_dir() + "/sim/specs/" + kSpec + ".json");
    const std::string root = dir_.path() + "/root";
    std::string nvml = build(original, root);
    const auto registered = run_command({build_dir() + "/xpart", "--root", root, "discover",
                                         "--nvml-library", nvml, "--json"});
    ASSERT_EQ(registered.exit_code, 0) << registered.err;

    std::string now = original;
    GetParam().edit(now);
    if (HasFatalFailure()) return;
    nvml = build(now, root);
    // The cache as slurmd writes it from what it discovered (its format and records added).
    auto node = node_from_json(nlohmann::json::parse(registered.out));
    ASSERT_TRUE(node) << node.error().message;
    ASSERT_TRUE(write_node_cache(RootFs(root), *node));

    const auto check = run_command(
        {build_dir() + "/xpart", "--root", root, "node", "check", "--nvml-library", nvml});
    EXPECT_EQ(check.exit_code, GetParam().want_exit) << check.out << check.err;
    EXPECT_EQ(check.err, "");
    auto lines = lines_of(check.out);
    if (GetParam().want_exit == 3) {
        ASSERT_FALSE(lines.empty());
        EXPECT_NE(lines.back().find("restart slurmd (or scontrol reconfigure)"), std::string::npos)
            << lines.back();
        lines.pop_back();
    }
    EXPECT_EQ(lines, GetParam().want_lines);
}

const std::string kGpu0 = "GPU 0 (0000:3b:00.0, GPU-a1000000-0000-4000-8000-000000000001): ";

INSTANTIATE_TEST_SUITE_P(
    MigNode, NodeCheckSim,
    ::testing::Values(
        CheckCase{"Unchanged", [](std::string&) {}, 0, {}},
        CheckCase{"InstanceRemadeWithNewUuid",
                  [](std::string& s) {
                      replace(s, kLast, "MIG-a1000001-0000-5000-8000-0000000000ff");
                  },
                  3,
                  {kGpu0 + "GI 10 CI 0 (1g.10gb): UUID is now "
                           "MIG-a1000001-0000-5000-8000-0000000000ff, slurmd registered " +
                   kLast}},
        CheckCase{"InstanceDestroyed",
                  [](std::string& s) {
                      replace(s, ",\n         {\"profile\": \"1g.10gb\", \"start\": 3, \"uuid\": \"" +
                                     kLast + "\"}",
                              "");
                  },
                  3, {kGpu0 + "GI 10 CI 0 (1g.10gb) " + kLast + " gone"}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace xpart::test
