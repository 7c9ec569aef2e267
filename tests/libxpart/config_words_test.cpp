#include <gtest/gtest.h>

#include "libxpart/config_words.hpp"

namespace xpart {
namespace {

TEST(ConfigWords, YesNoInAnyCase) {
    for (const char* yes : {"yes", "YES", "true", "True", "1"}) EXPECT_TRUE(parse_yes_no(yes).value()) << yes;
    for (const char* no : {"no", "No", "false", "FALSE", "0"}) EXPECT_FALSE(parse_yes_no(no).value()) << no;
    for (const char* bad : {"", "y", "2", "yes ", "maybe"}) {
        auto r = parse_yes_no(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().message, "expected yes or no");
    }
}

enum class Colour { Red, Green, Blue };

TEST(ConfigWords, EnumFromTable) {
    auto parse = [](const char* v) {
        return parse_word<Colour>(v, {{"red", Colour::Red}, {"green", Colour::Green}, {"blue", Colour::Blue}});
    };
    EXPECT_EQ(parse("green").value(), Colour::Green);
    EXPECT_EQ(parse("BLUE").value(), Colour::Blue);
    EXPECT_EQ(parse("reds").error().message, "expected red, green or blue");
    EXPECT_EQ(parse("").error().message, "expected red, green or blue");
}

TEST(ConfigWords, ExpectedOneOf) {
    EXPECT_EQ(expected_one_of({"a"}), "expected a");
    EXPECT_EQ(expected_one_of({"a", "b"}), "expected a or b");
    EXPECT_EQ(expected_one_of({"a", "b", "c"}), "expected a, b or c");
}

}  // namespace
}  // namespace xpart
