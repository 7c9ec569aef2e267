// The shipped examples under etc/ go through the real parsers: etc/xpart.conf must parse and
// say exactly the defaults it claims, the gres.conf examples must parse,
// gres.conf.explicit must agree with the simulated H100 node it was printed from, and
// etc/plugstack.conf's line and arguments must be what the SPANK plugin accepts.
#include <gtest/gtest.h>

#include "spank_plugin/step_options.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/gres/xpart_conf.hpp"
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
    // The commented-out settings (Root, NvmlLibrary, two Geometry= names) must be valid lines too.
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
    EXPECT_EQ(enabled, 4);
    auto conf = parse_xpart_conf(uncommented, "xpart.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(conf->root, "/");
    EXPECT_EQ(conf->nvml_library, "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
    ASSERT_EQ(conf->geometries.size(), 2u);
    EXPECT_EQ(conf->geometries[1].name, "h100-mixed");
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

// plugstack.conf: the one active line loads xpart.so with no argument (every default); each
// documented "#   key=value" parses, and says the default where the default has a value;
// the commented example line's arguments parse too.
TEST(Examples, PlugstackConfLineAndArguments) {
    std::istringstream in(testing::read_text(example("plugstack.conf")));
    std::vector<std::vector<std::string>> active, documented, commented_lines;
    std::string line;
    while (std::getline(in, line)) {
        std::vector<std::string> words;
        std::istringstream ws(line);
        for (std::string w; ws >> w;) words.push_back(w);
        if (words.empty()) continue;
        if (words[0][0] != '#') active.push_back(words);
        else if (words[0] == "#required") commented_lines.push_back(words);
        else if (words.size() > 1 && words[0] == "#" && words[1].find('=') != std::string::npos)
            documented.push_back(words);
    }
    ASSERT_EQ(active.size(), 1u);
    ASSERT_EQ(active[0].size(), 2u) << "arguments on the active line";
    EXPECT_EQ(active[0][0], "required");
    EXPECT_EQ(active[0][1], "/usr/lib/x86_64-linux-gnu/xpart/slurm/xpart.so");

    const spank::StepOptions defaults;
    ASSERT_EQ(documented.size(), 8u);
    for (const auto& d : documented) {
        auto o = spank::parse_site_args({d[1]});
        ASSERT_TRUE(o.ok()) << o.error().message;
        if (d[1].rfind("confine=", 0) == 0) continue;  // its default is "unset"
        EXPECT_EQ(o->bind, defaults.bind) << d[1];
        EXPECT_EQ(o->mps, defaults.mps) << d[1];
        EXPECT_EQ(o->nic, defaults.nic) << d[1];
        EXPECT_EQ(o->mps_job.run_dir, defaults.mps_job.run_dir) << d[1];
        EXPECT_EQ(o->mps_job.control, defaults.mps_job.control) << d[1];
        EXPECT_EQ(o->mps_job.timeout, defaults.mps_job.timeout) << d[1];
        EXPECT_EQ(o->mps_job.job_dir_mib, defaults.mps_job.job_dir_mib) << d[1];
    }

    ASSERT_EQ(commented_lines.size(), 1u);
    EXPECT_EQ(commented_lines[0][1], active[0][1]);
    auto example_site = spank::parse_site_args({commented_lines[0].begin() + 2, commented_lines[0].end()});
    ASSERT_TRUE(example_site.ok()) << example_site.error().message;
    EXPECT_EQ(example_site->bind, spank::StepBind::Rank);
    EXPECT_TRUE(example_site->effective_confine());
}

}  // namespace
}  // namespace xpart
