#include <gtest/gtest.h>

#include "libxpart/text.hpp"

namespace xpart {
namespace {

struct CpuListCase {
    const char* text;
    std::vector<unsigned> cpus;
    const char* formatted;
};

class CpuListTest : public ::testing::TestWithParam<CpuListCase> {};

TEST_P(CpuListTest, ParsesAndFormatsBack) {
    const auto& c = GetParam();
    auto cpus = parse_cpu_list(c.text);
    ASSERT_TRUE(cpus.ok()) << cpus.error().message;
    EXPECT_EQ(*cpus, c.cpus);
    EXPECT_EQ(format_cpu_list(*cpus), c.formatted);
}

INSTANTIATE_TEST_SUITE_P(Kernel, CpuListTest, ::testing::Values(
    CpuListCase{"", {}, ""},
    CpuListCase{"5", {5}, "5"},
    CpuListCase{"0-3", {0, 1, 2, 3}, "0-3"},
    CpuListCase{"0-1,8,10-11\n", {0, 1, 8, 10, 11}, "0-1,8,10-11"},
    CpuListCase{"3,1-2", {1, 2, 3}, "1-3"},
    // Out of order, overlapping or repeated: sorted and deduplicated (ranges in order skip it).
    CpuListCase{"0-3,2-5", {0, 1, 2, 3, 4, 5}, "0-5"},
    CpuListCase{"4,4,0", {0, 4}, "0,4"},
    CpuListCase{"0-1,1", {0, 1}, "0-1"},
    CpuListCase{" 0 - 1 , 4 ", {0, 1, 4}, "0-1,4"}));

TEST(CpuList, RangesInOrderAreEveryCpuInOrder) {
    auto r = parse_cpu_list("0-47,96-143");
    ASSERT_TRUE(r.ok()) << r.error().message;
    std::vector<unsigned> want;
    for (unsigned c = 0; c < 48; ++c) want.push_back(c);
    for (unsigned c = 96; c < 144; ++c) want.push_back(c);
    EXPECT_EQ(*r, want);
}

TEST(CpuList, RejectsMalformed) {
    for (const char* bad : {"a", "3-1", "1-", ",", "1,,2", "-4", "70000", "0-3,", "1-2-3"}) {
        auto r = parse_cpu_list(bad);
        EXPECT_FALSE(r.ok()) << bad;
        if (!r.ok()) {
            EXPECT_NE(r.error().message.find("invalid CPU list"), std::string::npos);
        }
    }
}

TEST(ParseU64, StrictDecimal) {
    EXPECT_EQ(parse_u64("0"), 0u);
    EXPECT_EQ(parse_u64("18446744073709551615"), 18446744073709551615ull);
    EXPECT_FALSE(parse_u64("18446744073709551616"));
    EXPECT_FALSE(parse_u64(""));
    EXPECT_FALSE(parse_u64("12a"));
    EXPECT_FALSE(parse_u64("-1"));
    EXPECT_FALSE(parse_u64(" 1"));
}

TEST(ColonLines, SplitsOnFirstColonAndTrims) {
    auto r = parse_colon_lines("Model: \t A100\nBus Location: 0000:07:00.0\n\n", "info");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[0].key, "Model");
    EXPECT_EQ((*r)[0].value, "A100");
    EXPECT_EQ((*r)[1].value, "0000:07:00.0");
    EXPECT_EQ((*r)[1].line, 2u);
}

TEST(ColonLines, MalformedLineNamesFileAndLine) {
    auto r = parse_colon_lines("Model: A100\ngarbage\n", "/x/information");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "/x/information:2: expected 'Key: value', got 'garbage'");
}

TEST(SpaceLines, KfdProperties) {
    auto r = parse_space_lines("simd_count 152\nlocation_id 1280\n", "props");
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[1].key, "location_id");
    EXPECT_EQ((*r)[1].value, "1280");
    EXPECT_FALSE(parse_space_lines("lonely\n", "props").ok());
}

TEST(SplitWords, AnyRunOfBlanksSeparatesNothingEmptyKept) {
    using V = std::vector<std::string>;
    EXPECT_EQ(split_words(""), V{});
    EXPECT_EQ(split_words(" \t\n "), V{});
    EXPECT_EQ(split_words("36 25 0:30 / /sys/fs/cgroup rw"), (V{"36", "25", "0:30", "/", "/sys/fs/cgroup", "rw"}));
    EXPECT_EQ(split_words("  systemctl\tstart  slurmd\n"), (V{"systemctl", "start", "slurmd"}));
}

}  // namespace
}  // namespace xpart
