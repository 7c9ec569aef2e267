// Which NodeName slurmd runs as, from its arguments: getopt_long's rules for slurmd's options.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "libxpart/slurm_text/slurmd_node_name.hpp"
#include "tests/case_name.hpp"

namespace xpart {
namespace {

struct ArgsCase {
    const char* name;
    std::vector<std::string> argv;
    std::optional<std::string> node;
};

class SlurmdNodeNameArg : public ::testing::TestWithParam<ArgsCase> {};

TEST_P(SlurmdNodeNameArg, ReadsTheValueOfN) {
    EXPECT_EQ(slurmd_node_name_arg(GetParam().argv), GetParam().node);
}

const ArgsCase kArgsCases[] = {
    {"none", {"/usr/sbin/slurmd", "-D"}, std::nullopt},
    {"separate", {"slurmd", "-D", "-N", "gpu1-7x1g"}, "gpu1-7x1g"},
    {"attached", {"slurmd", "-Ngpu1"}, "gpu1"},
    {"clustered", {"slurmd", "-DsN", "gpu1"}, "gpu1"},
    {"clustered_attached", {"slurmd", "-DNgpu1"}, "gpu1"},
    // The value of another option is not an option.
    {"value_of_f", {"slurmd", "-f", "-N", "-N", "gpu2"}, "gpu2"},
    {"value_of_conf", {"slurmd", "--conf", "-N x", "-N", "gpu3"}, "gpu3"},
    {"long_with_equals", {"slurmd", "--conf-server=ctl:6817", "-N", "gpu4"}, "gpu4"},
    {"F_takes_only_attached", {"slurmd", "-Ffeat", "-N", "gpu5"}, "gpu5"},
    {"last_wins", {"slurmd", "-N", "a", "-N", "b"}, "b"},
    {"after_double_dash", {"slurmd", "--", "-N", "a"}, std::nullopt},
    {"missing_value", {"slurmd", "-N"}, std::nullopt},
    {"no_argv0", {}, std::nullopt},
};

INSTANTIATE_TEST_SUITE_P(Cases, SlurmdNodeNameArg, ::testing::ValuesIn(kArgsCases),
                         testing::SentenceCaseName());

TEST(OwnArguments, ThisProgramsArgv0) {
    const auto args = own_arguments();
    ASSERT_FALSE(args.empty());
    EXPECT_NE(args[0].find("libxpart_test"), std::string::npos) << args[0];
}

TEST(ShortHostname, HasNoDot) {
    EXPECT_EQ(short_hostname().find('.'), std::string::npos);
}

}  // namespace
}  // namespace xpart
