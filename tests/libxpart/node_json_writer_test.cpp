// The node cache's direct writer: the same bytes as to_json(node).dump() for every node the
// unit tests know (hand-built fixtures and the discovery goldens), and JSON string escaping.
#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "libxpart/gres_record.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/node_json_writer.hpp"
#include "tests/case_name.hpp"
#include "tests/fixtures/sample_nodes.hpp"
#include "tests/libxpart/amd_temp_root.hpp"

namespace xpart {
namespace {

namespace fx = fixtures;

// A fixture node with every optional key: errors, withheld files, NICs, warnings.
Node node_with_every_key() {
    Node n = fx::dgx_a100(2, 2);
    n.errors = {"NVML /lib/libnvidia-ml.so.1: nvmlInit_v2: NVML_ERROR_DRIVER_NOT_LOADED (9)"};
    n.warnings = {"GPU 3: MIG mode change pending", "second"};
    n.nics = {{"mlx5_0", "0000:0c:00.0", 0, {{1, "ACTIVE", "InfiniBand"}, {2, "DOWN", "Ethernet"}}},
              {"mlx5_1", "0000:8c:00.0", -1, {}}};
    n.gpus[0].nics = {{"mlx5_0", 1, PciPath::Switch}, {"mlx5_1", 2, PciPath::CrossSocket}};
    n.gpus[1].index = -1;  // never null: a plain number
    return n;
}

struct FixtureNode {
    const char* name;
    std::function<Node()> make;
};

const FixtureNode kFixtureNodes[] = {
    {"empty node", [] { return Node{}; }},
    {"A100 80GB MIG and whole", [] { return fx::a100_80gb_mig_node(); }},
    {"MI300X CPX 8 XCPs", [] { return fx::mi300x_cpx_node(); }},
    {"MI300X CPX 64 XCPs", [] { return fx::mi300x_cpx_node(64); }},
    {"MI300X CPX reverse KFD order",
     [] { return fx::mi300x_cpx_node(8, fx::XcpListing::ReverseKfdOrder); }},
    {"A100 MIG and MI300X", [] { return fx::a100_80gb_mig_and_mi300x_node(); }},
    {"DGX A100 all MIG", [] { return fx::dgx_a100(); }},
    {"DGX A100 half MIG 7 each", [] { return fx::dgx_a100(4, 7); }},
    {"DGX A100 no MIG", [] { return fx::dgx_a100(0); }},
    {"A100 MIG whole and MI300X", [] { return fx::a100_40gb_mig_whole_and_mi300x_node(); }},
    {"every optional key", node_with_every_key},
};

void PrintTo(const FixtureNode& c, std::ostream* os) { *os << c.name; }

class NodeJsonWriterFixture : public ::testing::TestWithParam<FixtureNode> {};

TEST_P(NodeJsonWriterFixture, SameBytesAsNlohmannDump) {
    const Node node = GetParam().make();
    EXPECT_EQ(node_json_text(node), to_json(node).dump());
}

// The cache's text: the same members, "format" and "gres_records" in their key order.
TEST_P(NodeJsonWriterFixture, CacheTextIsTheDumpWithFormatAndRecords) {
    const Node node = GetParam().make();
    const std::vector<PartitionPlace> records = gres_record_order(node);
    nlohmann::json want = to_json(node);
    want["format"] = 7;
    want["gres_records"] = nlohmann::json::array();
    for (const PartitionPlace& p : records) want["gres_records"].push_back({p.gpu, p.partition});
    EXPECT_EQ(node_cache_text(node, 7, records), want.dump());
}

INSTANTIATE_TEST_SUITE_P(Nodes, NodeJsonWriterFixture, ::testing::ValuesIn(kFixtureNodes),
                         testing::SentenceCaseName{});

// Every node the discovery goldens hold (simulated reference nodes, NICs included).
TEST(NodeJsonWriter, SameBytesAsNlohmannDumpForEveryGolden) {
    const std::string dir = testing::srcdir() + "/tests/libxpart/golden";
    DIR* d = opendir(dir.c_str());
    ASSERT_NE(d, nullptr) << dir;
    int goldens = 0;
    while (const dirent* e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.size() < 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
        SCOPED_TRACE(name);
        std::ifstream in(dir + "/" + name);
        std::stringstream text;
        text << in.rdbuf();
        auto node = node_from_json(nlohmann::json::parse(text.str()));
        ASSERT_TRUE(node) << node.error().message;
        EXPECT_EQ(node_json_text(*node), to_json(*node).dump());
        ++goldens;
    }
    closedir(d);
    EXPECT_GE(goldens, 10);
}

struct EscapeCase {
    const char* name;
    std::string value;
    const char* json;  // as the writer must quote it
};

const EscapeCase kEscapes[] = {
    {"plain", "1g.10gb", R"("1g.10gb")"},
    {"empty", "", R"("")"},
    {"quote", "a\"b", R"("a\"b")"},
    {"backslash", "a\\b\\", R"("a\\b\\")"},
    {"short escapes", "\b\f\n\r\t", R"("\b\f\n\r\t")"},
    {"NUL", std::string("a\0b", 3), R"("a\u0000b")"},
    {"other control chars", "\x01\x1f\x0b", R"("\u0001\u001f\u000b")"},
    {"DEL as is", "a\x7f", "\"a\x7f\""},
    {"slash as is", "/dev/kfd", R"("/dev/kfd")"},
    {"UTF-8 as is", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80", "\"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80\""},
    {"escape at both ends", "\"mid\"", R"("\"mid\"")"},
};

void PrintTo(const EscapeCase& c, std::ostream* os) { *os << c.name; }

class NodeJsonWriterEscape : public ::testing::TestWithParam<EscapeCase> {};

// The value as a partition type and a device file path: quoted as given, and as nlohmann does.
TEST_P(NodeJsonWriterEscape, QuotesStringsAsNlohmannDoes) {
    Node node = fx::mi300x_cpx_node(1);
    node.gpus[0].partitions[0].type = GetParam().value;
    node.gpus[0].partitions[0].device_files[0].path = GetParam().value;
    node.warnings = {GetParam().value};
    const std::string text = node_json_text(node);
    EXPECT_EQ(text, to_json(node).dump());
    const std::string json = GetParam().json;
    EXPECT_NE(text.find("\"type\":" + json + ","), std::string::npos) << text;
    EXPECT_NE(text.find("\"path\":" + json + ","), std::string::npos) << text;
    EXPECT_NE(text.find("\"warnings\":[" + json + "]}"), std::string::npos) << text;
}

INSTANTIATE_TEST_SUITE_P(Strings, NodeJsonWriterEscape, ::testing::ValuesIn(kEscapes),
                         testing::SentenceCaseName{});

// dump() throws on invalid UTF-8; the writer copies it, and the reader then rejects the cache
// (the launchers discover the node themselves) instead of the plugin failing at slurmd start.
TEST(NodeJsonWriter, InvalidUtf8IsCopiedAndFailsToParse) {
    Node node = fx::mi300x_cpx_node(1);
    node.gpus[0].model = "MI300X\xff";
    const std::string text = node_json_text(node);
    EXPECT_NE(text.find("\"model\":\"MI300X\xff\""), std::string::npos) << text;
    EXPECT_TRUE(nlohmann::json::parse(text, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace xpart
