// `xpart discover` on simulated nodes built by `xpart-sim build` (an NVIDIA MIG node with the
// fake NVML, an 8 x MI300X CPX node): JSON against the discovery goldens, the table, and the
// --gres-conf -> --check round trip with exact difference lines for edited files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <regex>

#include "libxpart/slurm_text/gres_conf.hpp"
#include "libxpart/gres/gres_node.hpp"
#include "libxpart/slurm_text/reshape_siblings.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/text.hpp"
#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

struct SimCase {
    const char* spec;     // sim/specs/<spec>.json
    const char* golden;   // tests/libxpart/golden/<golden>.json (the discovery goldens)
    bool nvidia;          // install and use the fake NVML
    std::size_t gpus;
    std::size_t partitions;
};

class DiscoverSim : public ::testing::TestWithParam<SimCase> {
protected:
    void SetUp() override {
        root_ = built_root(GetParam().spec);
        ASSERT_FALSE(root_.empty());
    }

    // Building a root takes seconds on a loaded machine: one per spec for the whole program
    // (the tests only read it). Removed when the program exits.
    static std::string built_root(const std::string& spec_name) {
        static std::map<std::string, std::unique_ptr<TempDir>> roots;
        auto& dir = roots[spec_name];
        if (!dir) {
            dir = std::make_unique<TempDir>();
            const std::string spec = source_dir() + "/sim/specs/" + spec_name + ".json";
            const auto built = run_command({build_dir() + "/xpart-sim", "build", spec, dir->path() + "/root"});
            if (built.exit_code != 0) {
                ADD_FAILURE() << "xpart-sim build " << spec << ": " << built.err;
                dir.reset();
                return "";
            }
        }
        return dir->path() + "/root";
    }

    CommandResult discover(const std::vector<std::string>& args) const {
        std::vector<std::string> argv{build_dir() + "/xpart", "--root", root_, "discover"};
        if (GetParam().nvidia) {
            argv.push_back("--nvml-library");
            argv.push_back(root_ + "/usr/lib/xpart-sim/libnvidia-ml.so.1");
        }
        argv.insert(argv.end(), args.begin(), args.end());
        return run_command(argv);
    }

    Node discovered() const {
        const auto r = discover({"--json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        auto node = node_from_json(nlohmann::json::parse(r.out));
        EXPECT_TRUE(node.ok()) << node.error().message;
        return node.ok() ? *node : Node{};
    }

    // Writes the generated gres.conf; returns its path.
    std::string generated_conf() const {
        const auto r = discover({"--gres-conf"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        const std::string path = work_.path() + "/gres.conf";
        write_text(path, r.out);
        return path;
    }

    TempDir work_;
    std::string root_;
};

// "GPU 0 MIG 1g.5gb gi 7 ci 0 (MIG-...)" / "GPU 0 XCP 3 cpx (GPU-...)": how check names one.
std::string describe(std::size_t gpu_position, const Gpu& g, const Partition& p) {
    std::string out = "GPU " + std::to_string(gpu_position) + " ";
    if (g.vendor == Vendor::Amd)
        out += "XCP " + std::to_string(p.index) + " " + p.type;
    else
        out += "MIG " + p.type + " gi " + std::to_string(p.gi) + " ci " + std::to_string(p.ci);
    return out + " (" + p.uuid + ")";
}

// 1-based numbers of the record (non-comment) lines of a gres.conf.
std::vector<std::size_t> record_lines(const std::vector<std::string>& lines) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < lines.size(); ++i)
        if (!lines[i].empty() && lines[i][0] != '#') out.push_back(i + 1);
    return out;
}

std::string join_lines(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
}

TEST_P(DiscoverSim, JsonIsTheNode) {
    const auto r = discover({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    const auto json = nlohmann::json::parse(r.out);
    auto node = node_from_json(json);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->gpus.size(), GetParam().gpus);
    EXPECT_EQ(node->partition_count(), GetParam().partitions);
    const std::string golden = source_dir() + "/tests/libxpart/golden/" + GetParam().golden + ".json";
    const std::string text = read_text(golden);
    ASSERT_FALSE(text.empty()) << golden << " is missing";
    EXPECT_EQ(json, nlohmann::json::parse(text)) << "differs from " << golden;
}

// --mig-monitor-capability (xpart.conf MigMonitorCapability=yes for the plugin): what each GPU
// withholds by default, the monitor cap, goes to every one of its partitions instead; nothing
// else changes. gres.conf lists no shared file, so its lines stay the same.
TEST_P(DiscoverSim, MonitorCapabilityMovesWithheldFilesIntoPartitions) {
    nlohmann::json want = nlohmann::json::parse(
        read_text(source_dir() + "/tests/libxpart/golden/" + GetParam().golden + ".json"));
    for (auto& g : want["gpus"]) {
        if (!g.contains("withheld_device_files")) continue;
        for (auto& p : g["partitions"])
            for (const auto& f : g["withheld_device_files"]) p["device_files"].push_back(f);
        g.erase("withheld_device_files");
    }
    std::vector<std::string> argv{build_dir() + "/xpart", "--root", root_, "--mig-monitor-capability",
                                  "discover", "--json"};
    if (GetParam().nvidia) {
        argv.push_back("--nvml-library");
        argv.push_back(root_ + "/usr/lib/xpart-sim/libnvidia-ml.so.1");
    }
    const auto granted = run_command(argv);
    ASSERT_EQ(granted.exit_code, 0) << granted.err;
    EXPECT_EQ(nlohmann::json::parse(granted.out), want);
    argv[5] = "--gres-conf";  // in place of --json
    const auto conf = run_command(argv);
    ASSERT_EQ(conf.exit_code, 0) << conf.err;
    EXPECT_EQ(conf.out, discover({"--gres-conf"}).out);
}

TEST_P(DiscoverSim, TableHasEveryGpuAndPartition) {
    const Node node = discovered();
    const auto r = discover({});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto lines = lines_of(r.out);
    std::size_t gpu_lines = 0, partition_rows = 0;
    for (const std::string& l : lines) {
        if (l.rfind("GPU ", 0) == 0) ++gpu_lines;
        if (l.rfind("    ", 0) == 0 && l.rfind("    idx ", 0) != 0) ++partition_rows;
    }
    EXPECT_EQ(gpu_lines, node.gpus.size()) << r.out;
    EXPECT_EQ(partition_rows, node.partition_count()) << r.out;
    for (std::size_t i = 0; i < node.gpus.size(); ++i) {
        EXPECT_NE(r.out.find("GPU " + std::to_string(i) + "  "), std::string::npos);
        EXPECT_NE(r.out.find(node.gpus[i].uuid), std::string::npos);
        for (const Partition& p : node.gpus[i].partitions)
            EXPECT_NE(r.out.find(p.uuid), std::string::npos) << p.uuid;
    }
}

TEST_P(DiscoverSim, GresConfNamesRealDeviceFiles) {
    const auto lines = lines_of(read_text(generated_conf()));
    auto conf = parse_gres_conf(join_lines(lines), "generated");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(conf->records.size(), GetParam().partitions);
    for (const GresConfRecord& r : conf->records) {
        ASSERT_FALSE(r.device_paths().empty());
        for (const std::string& path : r.device_paths()) {
            struct stat st {};
            ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
            EXPECT_TRUE(S_ISCHR(st.st_mode)) << path;
            EXPECT_EQ(path.rfind(root_ + "/dev/", 0), 0u) << path;
        }
    }
}

TEST_P(DiscoverSim, GeneratedGresConfChecksClean) {
    const auto r = discover({"--check", generated_conf()});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
}

TEST_P(DiscoverSim, ChangedTypeIsOneLine) {
    const Node node = discovered();
    const std::string path = generated_conf();
    auto lines = lines_of(read_text(path));
    const std::size_t first = record_lines(lines).at(0);
    const std::string type = node.gpus[0].partitions[0].type;
    lines[first - 1] = std::regex_replace(lines[first - 1], std::regex("Type=[^ ]+"), "Type=bogus");
    write_text(path, join_lines(lines));
    const auto r = discover({"--check", path});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, path + ":" + std::to_string(first) + ": type differs: Type=bogus, the hardware has " +
                         type + " (" + describe(0, node.gpus[0], node.gpus[0].partitions[0]) + ")\n");
}

TEST_P(DiscoverSim, RemovedRecordIsAMissingPartition) {
    const Node node = discovered();
    const std::string path = generated_conf();
    auto lines = lines_of(read_text(path));
    const std::size_t last = record_lines(lines).back();
    const std::string removed = lines[last - 1];
    lines.erase(lines.begin() + static_cast<long>(last - 1));
    write_text(path, join_lines(lines));
    const Gpu& gpu = node.gpus.back();
    const auto r = discover({"--check", path});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, path + ": missing partition: " +
                         describe(node.gpus.size() - 1, gpu, gpu.partitions.back()) +
                         " has no record; expected: " + removed + "\n");
}

TEST_P(DiscoverSim, ExtraRecordAndWrongCoresAreOneLineEach) {
    const Node node = discovered();
    const std::string path = generated_conf();
    auto lines = lines_of(read_text(path));
    const std::size_t first = record_lines(lines).at(0);
    lines[first - 1] = std::regex_replace(lines[first - 1], std::regex("Cores=[^ ]+"), "Cores=1");
    lines.push_back("Name=gpu Type=x File=/dev/nvidia99");
    write_text(path, join_lines(lines));
    const auto r = discover({"--check", path});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(r.out, path + ":" + std::to_string(first) + ": cores differ: Cores=1, GPU 0 is local to CPUs " +
                         format_cpu_list(node.gpus[0].cpus) + "\n" + path + ":" +
                         std::to_string(lines.size()) +
                         ": extra record: File=/dev/nvidia99: no partition on this node uses "
                         "/dev/nvidia99\n");
}

// One check for both: slurmd (plan_node_gres, what its discovery module runs) says each
// difference `xpart discover --check` prints, with what it does about it, and each note.
TEST_P(DiscoverSim, SlurmdSaysWhatTheCheckSays) {
    const Node node = discovered();
    using Lines = std::vector<std::string>;
    struct Edit {
        const char* name;
        std::function<void(Lines&, const std::vector<std::size_t>&)> apply;
        int exit_code;
    };
    const std::size_t gpu0 = node.gpus.at(0).partitions.size();
    const Edit edits[] = {
        {"generated", [](Lines&, const auto&) {}, 0},
        {"wrong type", [](Lines& l, const auto& at) {
             l[at[0] - 1] = std::regex_replace(l[at[0] - 1], std::regex("Type=[^ ]+"), "Type=bogus");
         }, 3},
        {"removed record", [](Lines& l, const auto& at) {
             l.erase(l.begin() + static_cast<long>(at.back() - 1));
         }, 3},
        {"wrong cores, extra record, files of no partition", [](Lines& l, const auto& at) {
             l[at[0] - 1] = std::regex_replace(l[at[0] - 1], std::regex("Cores=[^ ]+"), "Cores=1");
             l[at[1] - 1] = std::regex_replace(l[at[1] - 1], std::regex("((Multiple)?Files?=[^ ]+)"),
                                               "$1,/dev/nvidia77");
             l.push_back("Name=gpu Type=x File=/dev/nvidia99");
         }, 3},
        {"duplicate record", [](Lines& l, const auto& at) { l.push_back(l[at.back() - 1]); }, 3},
        {"count only", [](Lines& l, const auto& at) {
             l[at[0] - 1] = std::regex_replace(l[at[0] - 1], std::regex("(Multiple)?Files?=[^ ]+"), "Count=2");
         }, 3},
        // A reshape sibling's records for GPU 0: its partitions named by its files and types.
        {"sibling records", [&](Lines& l, const auto& at) {
             std::string files;
             for (const auto& f : sibling_files(node.gpus[0], RootFs(root_)))
                 files += (files.empty() ? "" : ",") + f;
             for (std::size_t i = 0; i < gpu0; ++i)
                 l[at[i] - 1] = "Name=gpu Type=" + node.gpus[0].partitions[gpu0 - 1 - i].type +
                                " MultipleFiles=" + files;
         }, 0},
    };
    XpartConf conf;
    conf.root = root_;
    for (const Edit& e : edits) {
        SCOPED_TRACE(e.name);
        const std::string path = generated_conf();
        auto lines = lines_of(read_text(path));
        e.apply(lines, record_lines(lines));
        write_text(path, join_lines(lines));
        const auto cli = discover({"--check", path});
        EXPECT_EQ(cli.exit_code, e.exit_code) << cli.out << cli.err;
        const NodeGres slurmd = plan_node_gres(node, conf, read_slurmd_gres_conf(path, "n1"));
        Lines want;
        for (const std::string& l : lines_of(cli.out)) want.push_back(l + "; registering what the hardware has");
        EXPECT_EQ(slurmd.errors, want);
        EXPECT_EQ(slurmd.warnings, lines_of(cli.err));
        EXPECT_EQ(slurmd.records.size(), node.partition_count());
    }
}

const SimCase kA100Guide{"a100-guide", "a100-guide", true, 8, 26};
const SimCase kSimCases[] = {kA100Guide, {"mi300x-cpx-8gpu", "mi300x-cpx-8gpu", false, 8, 64}};

// MIG nodes only: profile names that drift between drivers.
class DiscoverSimMig : public DiscoverSim {};

TEST_P(DiscoverSimMig, DriftedMigTypeIsANoteNotADifference) {
    const std::string path = generated_conf();
    auto lines = lines_of(read_text(path));
    std::size_t drifted = 0;
    for (std::size_t n : record_lines(lines)) {
        if (lines[n - 1].find(" Type=3g.20gb ") == std::string::npos) continue;
        lines[n - 1] = std::regex_replace(lines[n - 1], std::regex("Type=3g.20gb"), "Type=3g.19gb");
        drifted = n;
        break;
    }
    ASSERT_NE(drifted, 0u) << "the spec has no 3g.20gb partition";
    write_text(path, join_lines(lines));
    const auto r = discover({"--check", path});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, path + ":" + std::to_string(drifted) +
                         ": note: Type=3g.19gb accepted as 3g.20gb (MIG profile names drift "
                         "between drivers)\n");
}

TEST_P(DiscoverSimMig, FarOffMigTypeIsADifference) {
    const std::string path = generated_conf();
    std::string text = read_text(path);
    const std::size_t at = text.find(" Type=3g.20gb ");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 14, " Type=3g.10gb ");
    write_text(path, text);
    const auto r = discover({"--check", path});
    EXPECT_EQ(r.exit_code, 3);
    ASSERT_EQ(lines_of(r.out).size(), 1u) << r.out;
    EXPECT_NE(r.out.find(": type differs: Type=3g.10gb, the hardware has 3g.20gb (GPU 2 MIG 3g.20gb gi 1 ci 0 "),
              std::string::npos) << r.out;
}

// --type-naming slurm: Slurm's own names, per series; a generated gres.conf checks clean
// against the same naming and is all differences against the default.
TEST_P(DiscoverSimMig, SlurmTypeNamingPerSeries) {
    const Node xp = discovered();
    auto types = [&](const std::vector<std::string>& args) {
        std::vector<std::string> argv{"--json"};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = discover(argv);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        auto node = node_from_json(nlohmann::json::parse(r.out));
        std::vector<std::string> out;
        if (node.ok())
            for (const Gpu& g : node->gpus)
                for (const Partition& p : g.partitions) out.push_back(p.type);
        return out;
    };
    const auto s22 = types({"--type-naming", "slurm"});
    const auto s24 = types({"--type-naming", "SLURM", "--slurm-series", "24.11"});
    std::vector<std::string> want22, want24;
    for (const Gpu& g : xp.gpus)
        for (const Partition& p : g.partitions) {
            // The guide's GPUs are "A100-SXM4-40GB": stem "a100". 22.05 drops the "Nc."
            // prefix and names memory by NVML's figure, 7g.40gb being 39.25 GiB.
            ASSERT_EQ(g.model, "A100-SXM4-40GB");
            const std::size_t ci = p.type.find("c.");
            std::string gi = ci == std::string::npos ? p.type : p.type.substr(ci + 2);
            if (gi == "7g.40gb") gi = "7g.39gb";
            want22.push_back("a100_" + gi);
            want24.push_back("a100_" + p.type);
        }
    EXPECT_EQ(s22, want22);
    EXPECT_EQ(s24, want24);
    // Every later series the table knows is a choice, and names as 24.11 does here.
    for (const char* later : {"25.11", "26.05"})
        EXPECT_EQ(types({"--type-naming", "slurm", "--slurm-series", later}), want24) << later;
    EXPECT_NE(discover({"--type-naming", "slurm", "--slurm-series", "25.05"}).exit_code, 0);
    const auto r = discover({"--type-naming", "slurm", "--gres-conf"});
    const std::string path = work_.path() + "/slurm-gres.conf";
    write_text(path, r.out);
    EXPECT_EQ(discover({"--type-naming", "slurm", "--check", path}).exit_code, 0);
    EXPECT_EQ(discover({"--check", path}).exit_code, 3);
    EXPECT_NE(discover({"--type-naming", "nvml"}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Specs, DiscoverSimMig, ::testing::Values(kA100Guide),
                         [](const auto&) { return std::string("a100_guide"); });

INSTANTIATE_TEST_SUITE_P(Specs, DiscoverSim, ::testing::ValuesIn(kSimCases),
                         [](const auto& info) {
                             std::string name = info.param.spec;
                             for (char& c : name)
                                 if (c == '-') c = '_';
                             return name;
                         });

}  // namespace
}  // namespace xpart::test
