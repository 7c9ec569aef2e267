// The node cache the gres plugin writes for the launchers: round trip, atomic replacement,
// mode, and one-line errors naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"
#include "tests/libxpart/amd_temp_root.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

using testing::TempRoot;

TEST(NodeCache, RoundTripsThroughTheRootAndMakesItsDirectory) {
    TempRoot root;
    const Node node = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    const mode_t old_umask = umask(077);  // slurmd's umask must not hide the cache from users
    Status written = write_node_cache(RootFs(root.path()), node);
    umask(old_umask);
    ASSERT_TRUE(written) << written.error().message;
    struct stat st {};
    ASSERT_EQ(stat(root.host("/run/xpart/node.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    ASSERT_EQ(stat(root.host("/run/xpart").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    auto back = read_node_cache(RootFs(root.path()));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(to_json(*back), to_json(node));
}

TEST(NodeCache, ReplacesTheOldOneAndLeavesNoTemporaryFile) {
    TempRoot root;
    Node first = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), first));
    Node second = first;
    second.gpus.pop_back();
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), second));
    auto back = read_node_cache(RootFs(root.path()));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->gpus.size(), second.gpus.size());
    auto entries = RootFs(root.path()).list("/run/xpart");
    ASSERT_TRUE(entries);
    EXPECT_EQ(*entries, std::vector<std::string>{"node.json"});
}

// What write_node_cache writes is the direct writer's text, the bytes dump() gave before it.
TEST(NodeCache, WritesTheDumpOfTheNode) {
    TempRoot root;
    const Node node = fixtures::mi300x_cpx_node(64);
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), node));
    EXPECT_EQ(root.read("/run/xpart/node.json"), to_json(node).dump() + "\n");
}

TEST(NodeCache, RemoveDropsItAndAMissingOneIsNoError) {
    TempRoot root;
    ASSERT_TRUE(
        write_node_cache(RootFs(root.path()), fixtures::a100_40gb_mig_whole_and_mi300x_node()));
    EXPECT_TRUE(remove_node_cache(RootFs(root.path())));
    EXPECT_FALSE(RootFs(root.path()).exists("/run/xpart/node.json"));
    EXPECT_TRUE(remove_node_cache(RootFs(root.path())));
}

TEST(NodeCache, WriteFailureNamesThePath) {
    TempRoot root;
    root.write("/run", "a file where the directory should be");
    Status s =
        write_node_cache(RootFs(root.path()), fixtures::a100_40gb_mig_whole_and_mi300x_node());
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message, root.host("/run/xpart") + ": mkdir: Not a directory");
}

struct BadCache {
    const char* name;
    const char* text;      // nullptr: no file
    const char* message;   // after "<host path>: "
};

class NodeCacheRead : public ::testing::TestWithParam<BadCache> {};

TEST_P(NodeCacheRead, FailsWithOneLineNamingTheFile) {
    TempRoot root;
    if (GetParam().text) root.write("/run/xpart/node.json", GetParam().text);
    auto node = read_node_cache(RootFs(root.path()));
    ASSERT_FALSE(node);
    EXPECT_EQ(node.error().message, root.host("/run/xpart/node.json") + ": " + GetParam().message);
}

const BadCache kBadCaches[] = {
    {"Missing", nullptr, "No such file or directory"},
    {"NotJson", "{\"gpus\": [", "not valid JSON"},
};
INSTANTIATE_TEST_SUITE_P(Cases, NodeCacheRead, ::testing::ValuesIn(kBadCaches),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(NodeCache, NotANodeSaysWhatIsWrong) {
    TempRoot root;
    root.write("/run/xpart/node.json", "{\"gpus\": 3}");
    auto node = read_node_cache(RootFs(root.path()));
    ASSERT_FALSE(node);
    const std::string prefix = root.host("/run/xpart/node.json") + ": ";
    EXPECT_EQ(node.error().message.rfind(prefix, 0), 0u) << node.error().message;
    EXPECT_GT(node.error().message.size(), prefix.size());
    EXPECT_EQ(node.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace xpart
