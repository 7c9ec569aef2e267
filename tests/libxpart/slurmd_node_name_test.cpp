// Which NodeName slurmd runs as, from its arguments: getopt_long's rules for slurmd's options.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Another process's argv as the kernel keeps it: every word, an empty one and one with a space
// included; none for a pid that does not run.
TEST(ProcessArguments, AnotherProcessExactly) {
    const std::vector<std::string> argv{"/bin/sh", "-c", "sleep 30; :", "sh", "", "a b"};
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        execl(argv[0].c_str(), argv[0].c_str(), argv[1].c_str(), argv[2].c_str(), argv[3].c_str(),
              argv[4].c_str(), argv[5].c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    std::vector<std::string> got;
    for (int tries = 0; tries < 200 && got != argv; ++tries) {  // until the exec is done
        got = process_arguments(std::to_string(child));
        usleep(10000);
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    EXPECT_EQ(got, argv);
    EXPECT_TRUE(process_arguments(std::to_string(child)).empty());
    EXPECT_TRUE(process_arguments("no-such-pid").empty());
}

TEST(ShortHostname, HasNoDot) {
    EXPECT_EQ(short_hostname().find('.'), std::string::npos);
}

}  // namespace
}  // namespace xpart
