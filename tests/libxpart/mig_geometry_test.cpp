// The geometry planner against the placement rules a real H100 listed (r580, recorded in
// tests/fixtures/real/nvml): which geometries fit, where each instance goes, and the one line
// that says why one does not.
#include <gtest/gtest.h>

#include <algorithm>

#include "libxpart/nvidia/mig_geometry.hpp"
#include "libxpart/gres/xpart_conf.hpp"
#include "tests/fixtures/h100_mig_profiles.hpp"

namespace xpart {
namespace {

// nvidia-smi mig -lgip / -lgipp of the H100 80GB HBM3, driver 580.159.04.
std::vector<nvml::GiProfile> h100() { return fixtures::h100_mig_profiles(); }

struct PlanCase {
    const char* geometry;
    const char* placed;  // "profile@start ..." or the error's tail
};

std::string placed(const std::vector<MigSlot>& slots) {
    std::string out;
    for (const auto& s : slots) out += (out.empty() ? "" : " ") + s.profile + "@" + std::to_string(s.start);
    return out;
}

class Plan : public ::testing::TestWithParam<PlanCase> {};

TEST_P(Plan, PlacesLikeTheDriverOrSaysWhy) {
    auto names = parse_mig_geometry(GetParam().geometry);
    ASSERT_TRUE(names) << names.error().message;
    auto plan = plan_mig_geometry(h100(), *names);
    const std::string got = plan ? placed(*plan) : plan.error().message;
    EXPECT_EQ(got, GetParam().placed);
}

INSTANTIATE_TEST_SUITE_P(
    H100, Plan,
    ::testing::Values(
        PlanCase{"7x1g.10gb", "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6"},
        PlanCase{"1g.10gb+2g.20gb+3g.40gb", "3g.40gb@0 2g.20gb@4 1g.10gb@6"},
        // 3g@0 leaves one 1g placement (6): the search moves the 3g to 4.
        PlanCase{"3g.40gb+2g.20gb+2x1g.10gb", "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3"},
        PlanCase{"4g.40gb+3g.40gb", "4g.40gb@0 3g.40gb@4"},
        PlanCase{"7g.80gb", "7g.80gb@0"},
        PlanCase{"4x1g.20gb", "1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6"},
        PlanCase{"1g.10gb+me+6x1g.10gb",
                 "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb+me@6"},
        PlanCase{"3x3g.40gb", "3x3g.40gb does not fit: at most 2 3g.40gb per GPU"},
        PlanCase{"7g.80gb+1g.10gb", "7g.80gb+1g.10gb does not fit: 8 compute slices, a GPU has 7"},
        PlanCase{"2x1g.10gb+me", "2x1g.10gb+me does not fit: at most 1 1g.10gb+me per GPU"},
        PlanCase{"2x1g.10gb+me+5x1g.10gb", "5x1g.10gb+2x1g.10gb+me does not fit: at most 1 1g.10gb+me per GPU"},
        PlanCase{"2x3g.40gb+1g.10gb",
                 "2x3g.40gb+1g.10gb does not fit: no placement set keeps the instances' memory "
                 "slices apart"},
        PlanCase{"5g.50gb", "'5g.50gb' is not a profile of this GPU (it has 1g.10gb, 2g.20gb, "
                            "3g.40gb, 4g.40gb, 7g.80gb, 1g.10gb+me, 1g.20gb)"}));

struct PartialCase {
    const char* geometry;
    const char* placed;
    std::vector<std::string> left;
};

class Partial : public ::testing::TestWithParam<PartialCase> {};

// What a refused geometry's picture shows: the most of it one placement set holds.
TEST_P(Partial, PlacesWhatFitsAndNamesTheRest) {
    auto names = parse_mig_geometry(GetParam().geometry);
    ASSERT_TRUE(names) << names.error().message;
    auto plan = place_what_fits(h100(), *names);
    EXPECT_EQ(placed(plan.placed), GetParam().placed);
    EXPECT_EQ(plan.left, GetParam().left);
}

INSTANTIATE_TEST_SUITE_P(
    H100, Partial,
    ::testing::Values(
        PartialCase{"7x1g.10gb", "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6", {}},
        PartialCase{"2x3g.40gb+1g.10gb", "3g.40gb@0 3g.40gb@4", {"1g.10gb"}},
        PartialCase{"7g.80gb+1g.10gb", "7g.80gb@0", {"1g.10gb"}},
        PartialCase{"3x3g.40gb", "3g.40gb@0 3g.40gb@4", {"3g.40gb"}},
        PartialCase{"2x1g.10gb+me", "1g.10gb+me@0", {"1g.10gb+me"}},
        PartialCase{"4g.40gb+2x3g.40gb", "4g.40gb@0 3g.40gb@4", {"3g.40gb"}},
        PartialCase{"5g.50gb+1g.10gb", "1g.10gb@0", {"5g.50gb"}}));

TEST(Geometry, MemorySlicesOfTheGpuAndEachInstance) {
    EXPECT_EQ(mig_memory_slices(h100()), 8u);
    EXPECT_EQ(mig_instance_size(h100(), "3g.40gb"), 4u);
    EXPECT_EQ(mig_instance_size(h100(), "1g.20gb"), 2u);
    EXPECT_EQ(mig_instance_size(h100(), "5g.50gb"), 0u);
    EXPECT_EQ(mig_memory_slices({}), 0u);
}

TEST(Geometry, ParseAndFormatRoundTrip) {
    for (const char* text : {"3g.40gb+2g.20gb+2x1g.10gb", "7x1g.10gb", "1g.10gb+me+6x1g.10gb", "7g.80gb"}) {
        auto names = parse_mig_geometry(text);
        ASSERT_TRUE(names) << text;
        auto again = parse_mig_geometry(format_mig_geometry(*names, h100()));
        ASSERT_TRUE(again);
        auto a = *names, b = *again;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        EXPECT_EQ(a, b) << text;
    }
    EXPECT_EQ(format_mig_geometry({"1g.10gb", "3g.40gb", "1g.10gb", "2g.20gb"}, h100()),
              "3g.40gb+2g.20gb+2x1g.10gb");
}

TEST(Geometry, BadTextNamesTheTerm) {
    struct Bad {
        const char* text;
        const char* error;
    };
    for (const Bad& b : {Bad{"", "empty geometry (expected e.g. 3g.40gb+2x1g.10gb)"},
                         Bad{"0x1g.10gb", "'0x1g.10gb': count must be 1..7"},
                         Bad{"9x1g.10gb", "'9x1g.10gb': count must be 1..7"},
                         Bad{"3g.40gb+banana", "'banana': not a MIG profile name (expected e.g. "
                                               "3g.40gb or 2x1g.10gb)"}}) {
        auto r = parse_mig_geometry(b.text);
        ASSERT_FALSE(r) << b.text;
        EXPECT_EQ(r.error().message, b.error);
    }
}

TEST(Geometry, UniformGeometriesAreTheLargestCountOfEachProfile) {
    std::vector<std::string> got;
    for (const auto& g : uniform_mig_geometries(h100())) got.push_back(format_mig_geometry(g, h100()));
    EXPECT_EQ(got, (std::vector<std::string>{"7x1g.10gb", "4x1g.20gb", "3x2g.20gb", "2x3g.40gb",
                                             "4g.40gb", "7g.80gb"}));
}

TEST(Geometry, ServesCountsEachType) {
    const std::vector<std::string> g = {"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
    EXPECT_TRUE(geometry_serves(g, {{"1g.10gb", 2}}));
    EXPECT_TRUE(geometry_serves(g, {{"3g.40gb", 1}, {"2g.20gb", 1}}));
    EXPECT_FALSE(geometry_serves(g, {{"1g.10gb", 3}}));
    EXPECT_FALSE(geometry_serves(g, {{"4g.40gb", 1}}));
}

TEST(Geometry, XpartConfNamesGeometriesOncePerName) {
    auto conf = parse_xpart_conf("Geometry=h100-7x1g:7x1g.10gb\nGeometry=h100-mixed:3g.40gb+2g.20gb+2x1g.10gb\n",
                                 "/etc/slurm/xpart.conf");
    ASSERT_TRUE(conf) << conf.error().message;
    ASSERT_EQ(conf->geometries.size(), 2u);
    EXPECT_EQ(conf->geometries[1].name, "h100-mixed");
    auto twice = parse_xpart_conf("Geometry=a:7g.80gb\nGeometry=a:7x1g.10gb\n", "/etc/slurm/xpart.conf");
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().message, "/etc/slurm/xpart.conf:2: Geometry=a:7x1g.10gb: geometry 'a' named twice");
    auto bad = parse_xpart_conf("Geometry=x:0x1g.10gb\n", "/etc/slurm/xpart.conf");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "/etc/slurm/xpart.conf:1: Geometry=x:0x1g.10gb: '0x1g.10gb': count must be 1..7");
    auto noname = parse_xpart_conf("Geometry=7x1g.10gb\n", "/etc/slurm/xpart.conf");
    ASSERT_FALSE(noname);
}

TEST(Geometry, XpartConfNamesAmdModesToo) {
    auto conf = parse_xpart_conf("Geometry=mi300x-cpx:cpx.nps1\nGeometry=spx:SPX\n", "/etc/slurm/xpart.conf");
    ASSERT_TRUE(conf) << conf.error().message;
    ASSERT_EQ(conf->geometries.size(), 2u);
    EXPECT_EQ(conf->geometries[0].profiles, "cpx.nps1");
    auto bad = parse_xpart_conf("Geometry=x:cpx.nps9\n", "/etc/slurm/xpart.conf");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message,
              "/etc/slurm/xpart.conf:1: Geometry=x:cpx.nps9: 'cpx.nps9': 'nps9' is neither a compute partition mode "
              "(SPX, DPX, TPX, QPX, CPX), a memory partition (NPS1..NPS8) nor an AMD model");
}

}  // namespace
}  // namespace xpart
