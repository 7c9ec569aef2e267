// The shipped examples under etc/ go through the real parsers: etc/xpart.conf must parse and
// say exactly the defaults it claims, the gres.conf examples must parse, and
// gres.conf.explicit must agree with the simulated H100 node it was printed from.
#include <gtest/gtest.h>

#include "libxpart/discovery.hpp"
#include "libxpart/gres_conf.hpp"
#include "libxpart/xpart_conf.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart {
namespace {

std::string example(const std::string& name) { return testing::source_dir() + "/etc/" + name; }

TEST(Examples, XpartConfParsesAndShowsTheDefaults) {
    const std::string path = example("xpart.conf");
    auto conf = load_xpart_conf(path);
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(conf->file, path);  // read, not the missing-file defaults
    const XpartConf defaults;
    EXPECT_EQ(conf->root, defaults.root);
    EXPECT_EQ(conf->nvidia, defaults.nvidia);
    EXPECT_EQ(conf->amd, defaults.amd);
    EXPECT_EQ(conf->nvml_library, defaults.nvml_library);
    EXPECT_EQ(conf->amd_type_naming, defaults.amd_type_naming);
    EXPECT_EQ(conf->amd_index_mode, defaults.amd_index_mode);
    EXPECT_EQ(conf->on_mismatch, defaults.on_mismatch);
}

TEST(Examples, XpartConfCommentedKeysAreValidWhenUncommented) {
    // The commented-out settings (Root, NvmlLibrary) must be valid lines too.
    std::string text = testing::read_text(example("xpart.conf"));
    std::string uncommented, line;
    std::istringstream in(text);
    int enabled = 0;
    while (std::getline(in, line)) {
        if (line.size() > 1 && line[0] == '#' && line.find('=') != std::string::npos &&
            line.find(' ') == std::string::npos) {
            line.erase(0, 1);
            ++enabled;
        }
        uncommented += line + "\n";
    }
    EXPECT_EQ(enabled, 2);
    auto conf = parse_xpart_conf(uncommented, "xpart.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(conf->root, "/");
    EXPECT_EQ(conf->nvml_library, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
}

TEST(Examples, GresConfAutodetectHasNoGpuRecord) {
    auto conf = parse_gres_conf(testing::read_text(example("gres.conf.autodetect")),
                                example("gres.conf.autodetect"));
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_TRUE(conf->records.empty());
    EXPECT_EQ(conf->autodetect, "");
}

TEST(Examples, GresConfExplicitAgreesWithTheSimulatedH100) {
    const std::string path = example("gres.conf.explicit");
    auto conf = parse_gres_conf(testing::read_text(path), path);
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    const auto records = records_for_node(*conf, "mig01");
    ASSERT_EQ(records.size(), 5u);

    testing::SimRoot sim(testing::read_text(testing::spec_file("h100-80gb")));
    ASSERT_EQ(sim.error(), "");
    auto node = discover(sim.discovery_options());
    ASSERT_TRUE(node.ok()) << node.error().message;
    GresCheckOptions options;
    options.root = RootFs(sim.root());
    options.file = path;
    std::vector<std::string> lines;
    for (const GresMismatch& m : check_gres_records(records, *node, options))
        lines.push_back(m.to_string());
    EXPECT_EQ(lines, std::vector<std::string>{});
}

}  // namespace
}  // namespace xpart
