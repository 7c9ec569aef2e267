#include <gtest/gtest.h>

#include "sim/spec.hpp"

namespace xpart::sim {
namespace {

struct BadSpec {
    const char* text;
    const char* message;
};

class SpecErrorTest : public ::testing::TestWithParam<BadSpec> {};

TEST_P(SpecErrorTest, OneLineNamingKeyAndValue) {
    auto r = parse_spec(GetParam().text, "node.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(TopLevel, SpecErrorTest, ::testing::Values(
    BadSpec{"{", "node.json: invalid JSON: [json.exception.parse_error.101] parse error at line 1, "
                 "column 2: syntax error while parsing object key - unexpected end of input; "
                 "expected string literal"},
    BadSpec{R"({"cpus":"0-3"})", "node.json: name: missing (a string is required)"},
    BadSpec{R"({"name":"n","cpus":"3-1"})", "node.json: cpus: invalid CPU list '3-1'"},
    BadSpec{R"({"name":"n","cpus":"0-3","gpus":[]})", "node.json: gpus: unknown key"},
    BadSpec{R"({"name":"n","cpus":"0-3","majors":{"kfd":0}})",
            "node.json: majors.kfd: expected a major number 1..511, got 0"},
    BadSpec{R"({"name":"n","cpus":"0-3","numa":[{"node":0,"cpus":"x"}]})",
            "node.json: numa[0].cpus: invalid CPU list 'x' at 'x'"}));

TEST(Spec, DefaultsAndComments) {
    auto r = parse_spec("// a node without GPUs\n{\"name\":\"n\", \"cpus\":\"0-7\"}", "n.json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->numa.size(), 1u);
    EXPECT_EQ(r->numa[0].cpus.size(), 8u);
    EXPECT_EQ(r->majors.at("nvidia-caps"), kDefaultNvidiaCapsMajor);
}

}  // namespace
}  // namespace xpart::sim
