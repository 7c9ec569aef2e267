// `xpart` builds only the subcommand a command line names (cli/subcommands.cpp); whatever it
// builds, the answer must be the one the whole command tree gives.
#include <gtest/gtest.h>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

struct SelectCase {
    std::vector<std::string> args;
    int exit_code;
    std::vector<std::string> out_has;  // stdout contains each
    std::vector<std::string> err_has;  // stderr contains each
};

class SubcommandSelect : public ::testing::TestWithParam<SelectCase> {};

TEST_P(SubcommandSelect, AnswersAsTheWholeTreeWould) {
    const SelectCase& c = GetParam();
    std::vector<std::string> argv{build_dir() + "/xpart"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto r = run_command(argv);
    EXPECT_EQ(r.exit_code, c.exit_code) << r.out << r.err;
    for (const auto& s : c.out_has) EXPECT_NE(r.out.find(s), std::string::npos) << s << " in\n" << r.out;
    for (const auto& s : c.err_has) EXPECT_NE(r.err.find(s), std::string::npos) << s << " in\n" << r.err;
}

const SelectCase kCases[] = {
    // The top-level help lists every subcommand.
    {{"--help"}, 0, {"discover", "cgroup", "launch", "mps"}, {}},
    {{"--version"}, 0, {"xpart "}, {}},
    // A named subcommand, with the global --root before it in both spellings.
    {{"launch", "--help"}, 0, {"--bind", "--confine", "--mps"}, {}},
    {{"--root", "/nonexistent", "mps", "--help"}, 0, {"start", "cleanup"}, {}},
    {{"--root=/nonexistent", "cgroup", "--help"}, 0, {"apply", "show", "clear"}, {}},
    {{"--root", "/nonexistent", "discover", "--help"}, 0, {"--json", "--gres-conf"}, {}},
    // A subcommand's own errors still come from CLI11.
    {{"launch", "--bind", "far", "--", "true"}, 105, {}, {"--bind"}},
    // A misspelt or missing subcommand: the whole tree answers.
    {{"lanch"}, 106, {}, {"subcommand is required"}},
    {{}, 106, {}, {"subcommand is required"}},
};
INSTANTIATE_TEST_SUITE_P(CommandLines, SubcommandSelect, ::testing::ValuesIn(kCases));

}  // namespace
}  // namespace xpart::test
