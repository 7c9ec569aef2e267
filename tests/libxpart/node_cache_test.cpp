// The node cache the gres plugin writes for the launchers: round trip, atomic replacement,
// mode, left alone when unchanged, and one-line errors naming the file.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "libxpart/gres_record.hpp"
#include "libxpart/node_cache.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/node_json_writer.hpp"
#include "tests/case_name.hpp"
#include "tests/libxpart/amd_temp_root.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

using testing::TempRoot;

// The text write_node_cache writes for a node slurmd discovered.
std::string cache_text(const Node& node) {
    return node_cache_text(node, kNodeCacheFormat, gres_record_order(node)) + "\n";
}

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

// The file's identity and age: a write that leaves it alone changes neither.
struct FileStamp {
    ino_t ino;
    timespec mtime;
};

FileStamp stamp(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return {st.st_ino, st.st_mtim};
}

// Dates the cache back so that a rewrite shows in its mtime even within one clock tick.
void age(const std::string& path) {
    const timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old, 0), 0) << path;
}

TEST(NodeCache, TheSameNodeLeavesTheFileAlone) {
    TempRoot root;
    const std::string file = root.host("/run/xpart/node.json");
    const Node node = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), node));
    age(file);
    const FileStamp before = stamp(file);
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), node));
    const FileStamp after = stamp(file);
    EXPECT_EQ(after.ino, before.ino);
    EXPECT_EQ(after.mtime.tv_sec, before.mtime.tv_sec);
    EXPECT_EQ(after.mtime.tv_nsec, before.mtime.tv_nsec);
}

// Whatever the old file holds, unless it is exactly the new text, the node is written again.
struct OldCache {
    const char* name;
    std::string (*text)(const std::string& current);  // from the current node's text
};

const OldCache kOldCaches[] = {
    {"another node", [](const std::string&) {
         return cache_text(fixtures::dgx_a100());
     }},
    {"one byte more", [](const std::string& t) { return t + "x"; }},
    {"one byte less", [](const std::string& t) { return t.substr(0, t.size() - 1); }},
    {"one byte changed", [](const std::string& t) { return "[" + t.substr(1); }},
    {"empty", [](const std::string&) { return std::string(); }},
};

void PrintTo(const OldCache& c, std::ostream* os) { *os << c.name; }

class NodeCacheRewrite : public ::testing::TestWithParam<OldCache> {};

TEST_P(NodeCacheRewrite, AChangedFileIsReplaced) {
    TempRoot root;
    const std::string file = root.host("/run/xpart/node.json");
    const Node node = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    const std::string text = cache_text(node);
    root.write("/run/xpart/node.json", GetParam().text(text));
    age(file);
    const FileStamp before = stamp(file);
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), node));
    const FileStamp after = stamp(file);
    EXPECT_NE(after.mtime.tv_sec, before.mtime.tv_sec);
    EXPECT_EQ(root.read("/run/xpart/node.json"), text);
    auto entries = RootFs(root.path()).list("/run/xpart");
    ASSERT_TRUE(entries);
    EXPECT_EQ(*entries, std::vector<std::string>{"node.json"});
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeCacheRewrite, ::testing::ValuesIn(kOldCaches),
                         testing::SentenceCaseName{});

// What write_node_cache writes is the direct writer's text: the bytes dump() gives for the
// node's JSON with the cache's format and record places added.
TEST(NodeCache, WritesTheDumpOfTheNode) {
    TempRoot root;
    const Node node = fixtures::mi300x_cpx_node(64);
    ASSERT_TRUE(write_node_cache(RootFs(root.path()), node));
    nlohmann::json want = to_json(node);
    want["format"] = kNodeCacheFormat;
    want["gres_records"] = nlohmann::json::array();
    for (std::size_t p = 0; p < 64; ++p) want["gres_records"].push_back({0, p});
    EXPECT_EQ(root.read("/run/xpart/node.json"), want.dump() + "\n");
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

// The format: this xpart's is read (with the records slurmd registered); any other, or none
// (an earlier xpart's cache), is refused in one line that says what to run.
struct FormatCase {
    const char* name;
    const char* format;   // the "format" member's JSON; nullptr: no member
    const char* message;  // after "<host path>: "; nullptr: read
};

const FormatCase kFormats[] = {
    {"Current", "1", nullptr},
    {"Newer", "2",
     "node cache format 2, this xpart reads format 1: restart slurmd so it rewrites the cache"},
    {"Older", "0",
     "node cache format 0, this xpart reads format 1: restart slurmd so it rewrites the cache"},
    {"NotANumber", "\"1\"",
     "node cache format \"1\", this xpart reads format 1: restart slurmd so it rewrites the "
     "cache"},
    {"Missing", nullptr,
     "node cache format (none: an earlier xpart), this xpart reads format 1: restart slurmd so "
     "it rewrites the cache"},
};

class NodeCacheFormatRead : public ::testing::TestWithParam<FormatCase> {};

TEST_P(NodeCacheFormatRead, ReadsItsOwnAndRefusesEveryOther) {
    TempRoot root;
    Node node = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    nlohmann::json j = nlohmann::json::parse(cache_text(node));
    j.erase("format");
    if (GetParam().format) j["format"] = nlohmann::json::parse(GetParam().format);
    root.write("/run/xpart/node.json", j.dump());
    CacheMiss miss = CacheMiss::Unavailable;
    auto back = read_node_cache(RootFs(root.path()), &miss);
    if (!GetParam().message) {
        ASSERT_TRUE(back) << back.error().message;
        EXPECT_EQ(to_json(*back), to_json(node));
        ASSERT_TRUE(back->gres_records);
        EXPECT_EQ(*back->gres_records, gres_record_order(node));
        return;
    }
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().message,
              root.host("/run/xpart/node.json") + ": " + GetParam().message);
    EXPECT_EQ(miss, CacheMiss::OtherFormat);
}

INSTANTIATE_TEST_SUITE_P(Cases, NodeCacheFormatRead, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

// The record places are what slurmd wrote, not the order the node would give now.
TEST(NodeCache, RecordPlacesAreTheFilesAndCheckedAgainstTheNode) {
    TempRoot root;
    const Node node = fixtures::a100_40gb_mig_whole_and_mi300x_node();
    nlohmann::json j = nlohmann::json::parse(cache_text(node));
    j["gres_records"] = nlohmann::json::array({{1, 0}, {0, 0}});
    root.write("/run/xpart/node.json", j.dump());
    auto back = read_node_cache(RootFs(root.path()));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back->gres_records, (std::vector<PartitionPlace>{{1, 0}, {0, 0}}));

    j["gres_records"] = nlohmann::json::array({{0, 99}});
    root.write("/run/xpart/node.json", j.dump());
    CacheMiss miss = CacheMiss::OtherFormat;
    back = read_node_cache(RootFs(root.path()), &miss);
    ASSERT_FALSE(back);
    EXPECT_EQ(back.error().message, root.host("/run/xpart/node.json") +
                                        ": gres_records: [0,99] names no partition of the node");
    EXPECT_EQ(miss, CacheMiss::Unavailable);
}

TEST(NodeCache, NotANodeSaysWhatIsWrong) {
    TempRoot root;
    root.write("/run/xpart/node.json", "{\"format\": 1, \"gpus\": 3}");
    auto node = read_node_cache(RootFs(root.path()));
    ASSERT_FALSE(node);
    const std::string prefix = root.host("/run/xpart/node.json") + ": ";
    EXPECT_EQ(node.error().message.rfind(prefix, 0), 0u) << node.error().message;
    EXPECT_GT(node.error().message.size(), prefix.size());
    EXPECT_EQ(node.error().message.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace xpart
