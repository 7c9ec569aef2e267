// `scontrol show node -o` lines as Slurm 22.05 and 24.11 print them, read into the reshape
// flow's nodes: state words, the host's group, the reason protocol's target.
#include <gtest/gtest.h>

#include "reshape_request/slurm_nodes.hpp"
#include "tests/case_name.hpp"

namespace xpart::reshape_request {
namespace {

struct NodeCase {
    const char* name;
    const char* line;
    const char* node;
    const char* group;
    std::vector<std::string> state;
    const char* target;
    bool powered_down;
    bool waiting;
};

class ParseNode : public ::testing::TestWithParam<NodeCase> {};

TEST_P(ParseNode, Reads) {
    const auto& c = GetParam();
    auto nodes = parse_nodes(c.line);
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(nodes[0].name, c.node);
    EXPECT_EQ(nodes[0].group, c.group);
    EXPECT_EQ(nodes[0].state, c.state);
    EXPECT_EQ(nodes[0].reshape_target, c.target);
    EXPECT_EQ(nodes[0].powered_down(), c.powered_down);
    EXPECT_EQ(nodes[0].waiting_to_register(), c.waiting);
}

const NodeCase kNodes[] = {
    {"draining for a reshape",
     "NodeName=xp1small Arch=x86_64 CoresPerSocket=1 CPUAlloc=1 CPUEfctv=8 CPUTot=8 CPULoad=0.01 "
     "AvailableFeatures=xpart_host_xp1 ActiveFeatures=xpart_host_xp1 Gres=gpu:1g.10gb:7 NodeAddr=127.0.0.1 "
     "NodeHostName=localhost Port=17001 Version=22.05.8 OS=Linux 6.1.0 RealMemory=1000 State=MIXED+DRAIN+REBOOT_REQUESTED "
     "ThreadsPerCore=1 Partitions=p BootTime=2026-12-04T03:00:00 Reason=xpart-reshape:xp1big [slurm@2026-12-04T03:10:00]",
     "xp1small", "xpart_host_xp1", {"MIXED", "DRAIN", "REBOOT_REQUESTED"}, "xp1big", false, false},
    {"a powered-down sibling (24.11: NodeHostName is its NodeName)",
     "NodeName=xp1big CoresPerSocket=1 CPUAlloc=0 AvailableFeatures=xpart_host_xp1 ActiveFeatures=xpart_host_xp1 "
     "Gres=gpu:3g.40gb:2 NodeAddr=xp1big NodeHostName=xp1big State=IDLE+CLOUD+POWERED_DOWN ThreadsPerCore=1",
     "xp1big", "xpart_host_xp1", {"IDLE", "CLOUD", "POWERED_DOWN"}, "", true, true},
    {"powering up, not responding",
     "NodeName=xp1big AvailableFeatures=xpart_host_xp1 ActiveFeatures=xpart_host_xp1 NodeHostName=xp1big "
     "State=IDLE*+CLOUD+NOT_RESPONDING+POWERING_UP Reason=xpart-reshape withdrawn: no job [slurm@2026-12-04T03:11:00]",
     "xp1big", "xpart_host_xp1", {"IDLE", "CLOUD", "NOT_RESPONDING", "POWERING_UP"}, "", false, true},
    {"no host feature (22.05): the NodeHostName",
     "NodeName=gpu1-7x1g AvailableFeatures=(null) ActiveFeatures=(null) NodeHostName=gpu1 State=IDLE "
     "Reason=xpart-reshape:gpu1-2x3g",
     "gpu1-7x1g", "host:gpu1", {"IDLE"}, "gpu1-2x3g", false, false},
    {"a reason that only names the protocol further on",
     "NodeName=n1 NodeHostName=h1 State=DOWN Reason=maintenance see xpart-reshape:n2 [root@2026-12-04T03:00:00]",
     "n1", "host:h1", {"DOWN"}, "", false, false},
    {"powering down", "NodeName=n2 NodeHostName=h1 State=IDLE+POWERING_DOWN", "n2", "host:h1",
     {"IDLE", "POWERING_DOWN"}, "", true, true},
};
INSTANTIATE_TEST_SUITE_P(Lines, ParseNode, ::testing::ValuesIn(kNodes), testing::SentenceCaseName{});

// The reason without Slurm's " [user@time]"; DOWN at ResumeTimeout only as slurmctld words it.
TEST(ParseNode, ReadsTheReasonAndAResumeTimeout) {
    struct {
        const char* line;
        const char* reason;
        bool timed_out;
    } const cases[] = {
        {"NodeName=b NodeHostName=b State=DOWN+CLOUD+POWERED_DOWN Reason=ResumeTimeout reached [slurm@2026-12-07T13:00:00]",
         "ResumeTimeout reached", true},
        {"NodeName=b NodeHostName=b State=IDLE+CLOUD+POWERED_DOWN Reason=ResumeTimeout reached [slurm@2026-12-07T13:00:00]",
         "ResumeTimeout reached", false},
        {"NodeName=b NodeHostName=b State=DOWN Reason=ResumeTimeout reached, said the admin [root@2026-12-07T13:00:00]",
         "ResumeTimeout reached, said the admin", false},
        {"NodeName=b NodeHostName=b State=DOWN Reason=xpart-reshape:c", "xpart-reshape:c", false},
        {"NodeName=b NodeHostName=b State=DOWN", "", false},
    };
    for (const auto& c : cases) {
        auto nodes = parse_nodes(c.line);
        ASSERT_EQ(nodes.size(), 1u);
        EXPECT_EQ(nodes[0].reason, c.reason) << c.line;
        EXPECT_EQ(nodes[0].resume_timed_out(), c.timed_out) << c.line;
    }
}

TEST(ParseNodes, LeavesOutWhatIsNotANode) {
    auto nodes = parse_nodes("slurm_load_node error: Unable to contact slurm controller\n"
                             "NodeName=a NodeHostName=h State=IDLE\n\nNodeName=b NodeHostName=h State=ALLOCATED\n");
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].name, "a");
    EXPECT_EQ(nodes[1].name, "b");
    EXPECT_TRUE(parse_nodes("").empty());
}

}  // namespace
}  // namespace xpart::reshape_request
