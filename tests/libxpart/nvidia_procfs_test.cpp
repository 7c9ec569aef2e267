#include <gtest/gtest.h>

#include "libxpart/nvidia/nvidia_procfs.hpp"

namespace xpart {
namespace {

TEST(MigMinorTable, ReadsEntries) {
    auto t = MigMinorTable::parse("config 1\nmonitor 2\ngpu0/gi0/access 3\ngpu0/gi0/ci0/access 4\n",
                                  "mig-minors");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_EQ(*t->minor("monitor"), 2u);
    EXPECT_EQ(*t->minor("gpu0/gi0/ci0/access"), 4u);
    EXPECT_EQ(t->minor("gpu1/gi0/access").error().message, "mig-minors: no entry 'gpu1/gi0/access'");
}

struct BadTable {
    const char* text;
    const char* message;
};
class MigMinorTableErrorTest : public ::testing::TestWithParam<BadTable> {};
TEST_P(MigMinorTableErrorTest, NamesFileAndLine) {
    auto t = MigMinorTable::parse(GetParam().text, "mig-minors");
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.error().message, GetParam().message);
}
INSTANTIATE_TEST_SUITE_P(Malformed, MigMinorTableErrorTest, ::testing::Values(
    BadTable{"config 1\nmonitor\n", "mig-minors:2: expected 'key value', got 'monitor'"},
    BadTable{"config 1\nmonitor two\n", "mig-minors:2: expected '<capability> <minor>', got 'monitor two'"},
    BadTable{"config 1\nconfig 1\n", "mig-minors:2: duplicate capability 'config'"},
    BadTable{"config -1\n", "mig-minors:1: expected '<capability> <minor>', got 'config -1'"}));

TEST(MigCapability, PathsAndNames) {
    EXPECT_EQ(mig_capability_path(0, 1, -1), "/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access");
    EXPECT_EQ(mig_capability_path(3, 14, 7),
              "/proc/driver/nvidia/capabilities/gpu3/mig/gi14/ci7/access");
    EXPECT_EQ(mig_capability_name(3, 14, 7), "gpu3/gi14/ci7/access");
    EXPECT_EQ(mig_capability_name(0, 1, -1), "gpu0/gi1/access");
}

}  // namespace
}  // namespace xpart
