// unit-start's decision on a host whose slurmds are slurmd@ units, against recorded scontrol
// lines: the boot after a power cut between the RebootProgram's `enable` of the next sibling's
// unit and its `disable` of the old one's finds both enabled, and only the next one starts; the
// sibling that gave the host up is powered down by the next one's start.
#include <gtest/gtest.h>

#include "reshape_request/sibling_units.hpp"
#include "tests/case_name.hpp"

namespace xpart::reshape_request {
namespace {

// Host h: small gave the host up for big (its RebootProgram died with the host); c is a third
// sibling; other is another host's node.
const std::string kCutDuringSwitch =
    "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE+DRAIN+REBOOT_ISSUED+NOT_RESPONDING "
    "Reason=xpart-reshape:big [slurm@2026-12-07T02:00:00]\n"
    "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERING_UP\n"
    "NodeName=c AvailableFeatures=xpart_host_h NodeHostName=c State=IDLE+CLOUD+POWERED_DOWN\n"
    "NodeName=other AvailableFeatures=xpart_host_o NodeHostName=o State=IDLE+REBOOT_ISSUED "
    "Reason=xpart-reshape:big\n";

// The host is small, in service; big's unit enabled by hand.
const std::string kNoReshape =
    "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE\n"
    "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERED_DOWN\n"
    "NodeName=c AvailableFeatures=xpart_host_h NodeHostName=c State=IDLE+CLOUD+POWERED_DOWN\n";

struct UnitStartCase {
    const char* name;
    const std::string* cluster;
    std::string node;
    std::vector<std::string> enabled;  // the other siblings' units enabled (the node's own is)
    UnitStart want;
};

// The host is small, running a job; a reboot for big asked but not issued.
const std::string kRequested =
    "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=MIXED+DRAIN+REBOOT_REQUESTED "
    "Reason=xpart-reshape:big\n"
    "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERING_UP\n";

const std::string kRefused = " enabled together, no reshape between them under way: slurmd not started";
const std::string kBigNow = "xpart-reshape: host is big now";

const UnitStartCase kCases[] = {
    {"alone enabled it starts", &kCutDuringSwitch, "small", {}, {UnitStart::Start, {}, {}, ""}},
    {"alone enabled the reshape's target powers the sibling left down", &kCutDuringSwitch, "big", {},
     {UnitStart::Start, {}, {"small"}, kBigNow}},
    {"a reboot only asked for is not powered down", &kRequested, "big", {}, {UnitStart::Start, {}, {}, ""}},
    {"the reshape's target starts, disables the unit left and powers its node down", &kCutDuringSwitch, "big",
     {"small"}, {UnitStart::Start, {"small"}, {"small"}, kBigNow}},
    {"the sibling left stands down", &kCutDuringSwitch, "small", {"big"}, {UnitStart::StandDown, {}, {}, kBigNow}},
    {"the sibling left stands down beside a third", &kCutDuringSwitch, "small", {"big", "c"},
     {UnitStart::StandDown, {}, {}, kBigNow}},
    {"a third sibling beside the cut is refused", &kCutDuringSwitch, "c", {"small", "big"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of c and small, big" + kRefused}},
    {"the target beside a third is refused", &kCutDuringSwitch, "big", {"small", "c"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of big and small, c" + kRefused}},
    {"a sibling the reshape was not for is refused", &kCutDuringSwitch, "c", {"small"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of c and small" + kRefused}},
    {"the target of a reboot only asked for is refused", &kRequested, "big", {"small"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of big and small" + kRefused}},
    {"without a reshape the host's sibling is refused", &kNoReshape, "small", {"big"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of small and big" + kRefused}},
    {"without a reshape the other is refused", &kNoReshape, "big", {"small"},
     {UnitStart::Refuse, {}, {}, "xpart-reshape: slurmd units of big and small" + kRefused}},
};

class DecideUnitStart : public ::testing::TestWithParam<UnitStartCase> {};

TEST_P(DecideUnitStart, OnlyTheSiblingTheHostBecameStarts) {
    const auto& c = GetParam();
    const UnitStart got = decide_unit_start(parse_nodes(*c.cluster), c.node, true, c.enabled);
    EXPECT_EQ(got.what, c.want.what);
    EXPECT_EQ(got.disable, c.want.disable);
    EXPECT_EQ(got.power_down, c.want.power_down);
    EXPECT_EQ(got.reason, c.want.reason);
}

INSTANTIATE_TEST_SUITE_P(Boots, DecideUnitStart, ::testing::ValuesIn(kCases), testing::SentenceCaseName{});

// A unit not enabled itself starts only where no sibling's is: it stands aside, tells slurmctld
// nothing, and disables nothing.
TEST(DecideUnitStart, AUnitNotEnabledStandsAsideForTheSiblingWhoseIs) {
    const UnitStart aside = decide_unit_start(parse_nodes(kCutDuringSwitch), "big", false, {"small"});
    EXPECT_EQ(aside.what, UnitStart::StandAside);
    EXPECT_TRUE(aside.disable.empty());
    EXPECT_TRUE(aside.power_down.empty());
    EXPECT_EQ(aside.reason, "xpart-reshape: host is small (its unit enabled)");
    const UnitStart alone = decide_unit_start(parse_nodes(kCutDuringSwitch), "big", false, {});
    EXPECT_EQ(alone.what, UnitStart::Start);
    EXPECT_EQ(alone.power_down, std::vector<std::string>{"small"});
}

TEST(SiblingsOf, TheOtherNodeNamesOfTheHost) {
    const auto cluster = parse_nodes(kCutDuringSwitch);
    EXPECT_EQ(siblings_of(cluster, "big"), (std::vector<std::string>{"small", "c"}));
    EXPECT_EQ(siblings_of(cluster, "other"), std::vector<std::string>{});
    EXPECT_EQ(siblings_of(cluster, "unknown"), std::vector<std::string>{});
}

}  // namespace
}  // namespace xpart::reshape_request
