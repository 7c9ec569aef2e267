// The pictures of `xpart geometry` and `xpart reshape --dry-run`: rows line up cell for cell,
// spans take exactly their slices, a free slice shows ".", and a refused target shows what of
// it would fit and where the rest may start (the H100's placements, as recorded on r580).
#include <gtest/gtest.h>

#include "cli/slice_picture.hpp"
#include "tests/fixtures/h100_mig_profiles.hpp"

namespace xpart::cli {
namespace {

std::vector<nvml::GiProfile> h100() { return fixtures::h100_mig_profiles(); }

struct RowCase {
    const char* name;
    unsigned cells;
    std::vector<SliceSpan> spans;
    std::string want;
};

class Row : public ::testing::TestWithParam<RowCase> {};

TEST_P(Row, Draws) { EXPECT_EQ(slice_row("now", GetParam().cells, GetParam().spans), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Rows, Row,
    ::testing::Values(
        RowCase{"all_free", 3, {}, "    now             .         .         ."},
        RowCase{"one_slice", 2, {{1, 1, "1g.10gb"}}, "    now             .     [1g.10gb ]"},
        RowCase{"spans_in_start_order", 4, {{2, 2, "2g.20gb"}, {0, 1, "1g.10gb"}},
                "    now         [1g.10gb ]    .     [2g.20gb           ]"},
        RowCase{"a_long_label_is_cut", 1, {{0, 1, "1g.10gb+me.all"}}, "    now         [1g.10gb+]"},
        RowCase{"an_overlap_is_left_out", 2, {{0, 2, "2g.20gb"}, {1, 1, "1g.10gb"}},
                "    now         [2g.20gb           ]"},
        RowCase{"past_the_end_is_left_out", 2, {{1, 2, "2g.20gb"}}, "    now             .         ."}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Picture, ScaleNumbersEachCellAboveIt) {
    EXPECT_EQ(slice_scale_row("slices", 3), "    slices      0         1         2");
}

TEST(Picture, MigGpuNow) {
    GpuGeometry g;
    g.mig_capable = g.mig_on = true;
    g.profiles = h100();
    g.instances = {{3, "2g.20gb", 0, 1, {}, {}}, {9, "1g.10gb", 2, 1, {}, {}}, {2, "3g.40gb", 4, 1, {}, {}}};
    EXPECT_EQ(mig_picture(g),
              (std::vector<std::string>{
                  "    slices      0         1         2         3         4         5         6         7",
                  "    placed      [2g.20gb           ][1g.10gb ]    .     [3g.40gb                               ]"}));
    g.mig_on = false;
    EXPECT_TRUE(mig_picture(g).empty());
}

TEST(Picture, ARefusedTargetShowsWhatFitsAndWhereTheRestMayStart) {
    MigReshapePlan plan;
    plan.now.mig_capable = plan.now.mig_on = true;
    plan.now.profiles = h100();
    plan.now.instances = {{1, "7g.80gb", 0, 1, {}, {}}};
    auto names = parse_mig_geometry("2x3g.40gb+1g.10gb");
    ASSERT_TRUE(names);
    auto placed = plan_mig_geometry(plan.now.profiles, *names);
    ASSERT_FALSE(placed);
    plan.misfit = placed.error().message;
    plan.partial = place_what_fits(plan.now.profiles, *names);
    auto rows = mig_reshape_picture(plan);
    ASSERT_EQ(rows.size(), 4u);
    EXPECT_EQ(rows[1], "    placed      [7g.80gb                                                                       ]");
    EXPECT_EQ(rows[2], "    target      [3g.40gb                               ][3g.40gb                               ]");
    EXPECT_EQ(rows[3], "    no place    1g.10gb (1 slice, may start at 0-6)");
}

TEST(Picture, ATargetThatFitsHasNoRestRow) {
    MigReshapePlan plan;
    plan.now.mig_capable = plan.now.mig_on = true;
    plan.now.profiles = h100();
    plan.target = {{"1g.20gb", 0}, {"1g.20gb", 2}, {"1g.20gb", 4}, {"1g.20gb", 6}};
    auto rows = mig_reshape_picture(plan);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[1], "    placed          .         .         .         .         .         .         .         .");
    EXPECT_EQ(rows[2], "    target      [1g.20gb           ][1g.20gb           ][1g.20gb           ][1g.20gb           ]");
}

struct AmdCase {
    const char* name;
    unsigned partitions;
    const char* memory;
    std::vector<std::string> want;
};

class Amd : public ::testing::TestWithParam<AmdCase> {};

// An MI300X: 8 XCDs.
TEST_P(Amd, DrawsTheXcpsOverTheMemoryPartitions) {
    EXPECT_EQ(amd_picture("XCPs", 8, GetParam().partitions, GetParam().memory, false), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Mi300x, Amd,
    ::testing::Values(
        AmdCase{"dpx_nps1", 2, "NPS1",
                {"    XCPs        [xcp 0                                 ][xcp 1                                 ]",
                 "    memory      [NPS1                                                                          ]"}},
        AmdCase{"cpx_nps4", 8, "NPS4",
                {"    XCPs        [xcp 0   ][xcp 1   ][xcp 2   ][xcp 3   ][xcp 4   ][xcp 5   ][xcp 6   ][xcp 7   ]",
                 "    memory      [nps 0             ][nps 1             ][nps 2             ][nps 3             ]"}},
        AmdCase{"unknown_memory_is_one", 4, "",
                {"    XCPs        [xcp 0             ][xcp 1             ][xcp 2             ][xcp 3             ]",
                 "    memory      [NPS1                                                                          ]"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Picture, AnAmdModeThatDoesNotDivideTheXcdsDrawsNothing) {
    EXPECT_TRUE(amd_picture("XCPs", 8, 3, "NPS1", true).empty());
    EXPECT_EQ(amd_picture("XCPs", 8, 1, "NPS1", true).front(),
              "    XCDs        0         1         2         3         4         5         6         7");
}

}  // namespace
}  // namespace xpart::cli
