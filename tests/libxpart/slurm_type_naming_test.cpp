// TypeNaming=slurm: the names Slurm's own autodetect computes. The table pins them as read off
// Slurm's sources (gpu_nvml.c of slurm-22-05-8-1 and slurm-24-11-5-1, gpu_rsmi.c), fed with the
// memorySizeMB figures the simulator's fake NVML reports (sim/nvidia_profiles.cpp). The
// integration test tests/integration/slurm_names_test compares with Slurm 22.05's own plugin.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "libxpart/discovery.hpp"
#include "libxpart/gres/gres_node.hpp"
#include "libxpart/slurm_type_naming.hpp"
#include "sim/nvidia_profiles.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart {
namespace {

using nlohmann::json;
using testing::SimRoot;

struct MigCase {
    const char* product;      // sim product key: the GPU name and the profile's memorySizeMB
    const char* profile;      // sim profile
    unsigned ci_slices;       // 0: the whole GPU instance
    const char* slurm_22_05;  // attributes only, roundl(MB / 1024)
    const char* slurm_24_11;  // from the MIG device's NVML name
    const char* slurm_24_11_no_name;  // its fallback: attributes, ROUNDUP(MB, 1024), "<ci>c."
};

class SlurmMigNames : public ::testing::TestWithParam<MigCase> {
protected:
    SlurmMigInput input(bool with_name) const {
        const MigCase& c = GetParam();
        const sim::GpuProductSpec* product = sim::find_gpu_product(c.product);
        EXPECT_NE(product, nullptr) << c.product;
        const sim::MigProfileSpec* p = product ? product->find_profile(c.profile) : nullptr;
        EXPECT_NE(p, nullptr) << c.profile;
        if (!p) return {};
        const unsigned ci = c.ci_slices ? c.ci_slices : p->slices;
        std::string mig_name;
        if (with_name)  // what the driver (and the fake NVML) answer for a MIG handle
            mig_name = product->name + " MIG " +
                       (ci < p->slices ? std::to_string(ci) + "c." : std::string()) + p->name;
        return {product->name, mig_name, p->slices, ci, p->memory_mib};
    }
};

TEST_P(SlurmMigNames, Slurm22_05) {
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S22_05, input(true)), GetParam().slurm_22_05);
    // 22.05 never asks for the MIG device's name.
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S22_05, input(false)), GetParam().slurm_22_05);
}

// 24.11, 25.11 and 26.05 share the rule (gpu_nvml.c's _handle_mig); only the buffer differs.
TEST_P(SlurmMigNames, Slurm24_11AndLaterFromTheMigDeviceName) {
    for (const auto& series : all_slurm_series()) {
        if (series.reads_mig_name) {
            EXPECT_EQ(slurm_nvml_mig_type(series.series, input(true)), GetParam().slurm_24_11)
                << series.name;
        }
    }
}

TEST_P(SlurmMigNames, Slurm24_11AndLaterFallbackFromAttributes) {
    for (const auto& series : all_slurm_series()) {
        if (series.reads_mig_name) {
            EXPECT_EQ(slurm_nvml_mig_type(series.series, input(false)),
                      GetParam().slurm_24_11_no_name)
                << series.name;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Products, SlurmMigNames, ::testing::Values(
    // A100-SXM4-40GB: "NVIDIA A100-SXM4-40GB" cut at its first '-'.
    MigCase{"A100-SXM4-40GB", "1g.5gb", 0, "nvidia_a100_1g.5gb", "nvidia_a100_1g.5gb", "nvidia_a100_1g.5gb"},
    MigCase{"A100-SXM4-40GB", "1g.5gb+me", 0, "nvidia_a100_1g.5gb", "nvidia_a100_1g.5gb+me", "nvidia_a100_1g.5gb"},
    MigCase{"A100-SXM4-40GB", "1g.10gb", 0, "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb"},
    MigCase{"A100-SXM4-40GB", "2g.10gb", 0, "nvidia_a100_2g.10gb", "nvidia_a100_2g.10gb", "nvidia_a100_2g.10gb"},
    MigCase{"A100-SXM4-40GB", "3g.20gb", 0, "nvidia_a100_3g.20gb", "nvidia_a100_3g.20gb", "nvidia_a100_3g.20gb"},
    MigCase{"A100-SXM4-40GB", "3g.20gb", 1, "nvidia_a100_3g.20gb", "nvidia_a100_1c.3g.20gb", "nvidia_a100_1c.3g.20gb"},
    MigCase{"A100-SXM4-40GB", "4g.20gb", 0, "nvidia_a100_4g.20gb", "nvidia_a100_4g.20gb", "nvidia_a100_4g.20gb"},
    // 40192 MB = 39.25 GiB: 22.05 rounds to 39, 24.11's fallback rounds up to 40.
    MigCase{"A100-SXM4-40GB", "7g.40gb", 0, "nvidia_a100_7g.39gb", "nvidia_a100_7g.40gb", "nvidia_a100_7g.40gb"},
    MigCase{"A100-SXM4-40GB", "7g.40gb", 2, "nvidia_a100_7g.39gb", "nvidia_a100_2c.7g.40gb", "nvidia_a100_2c.7g.40gb"},
    // A100-SXM4-80GB: the same "nvidia_a100" stem as the 40GB part.
    MigCase{"A100-SXM4-80GB", "1g.10gb", 0, "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb"},
    MigCase{"A100-SXM4-80GB", "1g.10gb+me", 0, "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb+me", "nvidia_a100_1g.10gb"},
    MigCase{"A100-SXM4-80GB", "1g.20gb", 0, "nvidia_a100_1g.20gb", "nvidia_a100_1g.20gb", "nvidia_a100_1g.20gb"},
    MigCase{"A100-SXM4-80GB", "3g.40gb", 0, "nvidia_a100_3g.39gb", "nvidia_a100_3g.40gb", "nvidia_a100_3g.40gb"},
    MigCase{"A100-SXM4-80GB", "7g.80gb", 0, "nvidia_a100_7g.79gb", "nvidia_a100_7g.80gb", "nvidia_a100_7g.80gb"},
    // H100 80GB HBM3: no '-' in the name, so all of it stays.
    MigCase{"H100-SXM5-80GB", "1g.10gb", 0, "nvidia_h100_80gb_hbm3_1g.10gb", "nvidia_h100_80gb_hbm3_1g.10gb", "nvidia_h100_80gb_hbm3_1g.10gb"},
    MigCase{"H100-SXM5-80GB", "1g.10gb+me", 0, "nvidia_h100_80gb_hbm3_1g.10gb", "nvidia_h100_80gb_hbm3_1g.10gb+me", "nvidia_h100_80gb_hbm3_1g.10gb"},
    MigCase{"H100-SXM5-80GB", "1g.20gb", 0, "nvidia_h100_80gb_hbm3_1g.20gb", "nvidia_h100_80gb_hbm3_1g.20gb", "nvidia_h100_80gb_hbm3_1g.20gb"},
    MigCase{"H100-SXM5-80GB", "3g.40gb", 1, "nvidia_h100_80gb_hbm3_3g.40gb", "nvidia_h100_80gb_hbm3_1c.3g.40gb", "nvidia_h100_80gb_hbm3_1c.3g.40gb"},
    MigCase{"H100-SXM5-80GB", "7g.80gb", 0, "nvidia_h100_80gb_hbm3_7g.79gb", "nvidia_h100_80gb_hbm3_7g.80gb", "nvidia_h100_80gb_hbm3_7g.80gb"},
    // H200: 17152 MB = 16.75 GiB, so both formulas say 17 where the driver says 18.
    MigCase{"H200-SXM-141GB", "1g.18gb", 0, "nvidia_h200_1g.17gb", "nvidia_h200_1g.18gb", "nvidia_h200_1g.17gb"},
    MigCase{"H200-SXM-141GB", "1g.18gb+me", 0, "nvidia_h200_1g.17gb", "nvidia_h200_1g.18gb+me", "nvidia_h200_1g.17gb"},
    MigCase{"H200-SXM-141GB", "1g.35gb", 0, "nvidia_h200_1g.34gb", "nvidia_h200_1g.35gb", "nvidia_h200_1g.34gb"},
    // 70144 MB = 68.5 GiB: roundl goes half away from zero.
    MigCase{"H200-SXM-141GB", "3g.71gb", 0, "nvidia_h200_3g.69gb", "nvidia_h200_3g.71gb", "nvidia_h200_3g.69gb"},
    MigCase{"H200-SXM-141GB", "7g.141gb", 0, "nvidia_h200_7g.137gb", "nvidia_h200_7g.141gb", "nvidia_h200_7g.138gb"}));

// The one series table: every front end's choices come from it (the CLI's --slurm-series, the
// plugin's series number across the discovery module's seam).
TEST(SlurmSeriesTable, OneRowPerSeriesOldestFirst) {
    struct Want {
        SlurmSeries series;
        const char* name;
        bool reads_mig_name;
        std::size_t buffer;
    };
    const Want want[] = {{SlurmSeries::S22_05, "22.05", false, 0},
                         {SlurmSeries::S24_11, "24.11", true, 64},
                         {SlurmSeries::S25_11, "25.11", true, 96},
                         {SlurmSeries::S26_05, "26.05", true, 96}};
    const auto& table = all_slurm_series();
    ASSERT_EQ(table.size(), std::size(want));
    for (std::size_t i = 0; i < table.size(); ++i) {
        SCOPED_TRACE(want[i].name);
        EXPECT_EQ(table[i].series, want[i].series);
        EXPECT_STREQ(table[i].name, want[i].name);
        EXPECT_STREQ(to_string(want[i].series), want[i].name);
        EXPECT_EQ(table[i].reads_mig_name, want[i].reads_mig_name);
        EXPECT_EQ(slurm_reads_mig_name(want[i].series), want[i].reads_mig_name);
        EXPECT_EQ(table[i].mig_name_buffer, want[i].buffer);
        // The number that crosses the plugin's seam comes back as the same series.
        EXPECT_EQ(slurm_series_from_number(static_cast<std::uint32_t>(want[i].series)),
                  want[i].series);
    }
    EXPECT_EQ(slurm_series_from_number(static_cast<std::uint32_t>(table.size())), std::nullopt);
}

TEST(SlurmNames, UnderscorifyTolowerTouchesOnlyCaseAndSpaces) {
    EXPECT_EQ(slurm_underscorify_tolower("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"),
              "nvidia_a100-sxm4-40gb_mig_1c.3g.20gb");
    EXPECT_EQ(slurm_underscorify_tolower("Tab\there"), "tab\there");
}

TEST(SlurmNames, WholeGpus) {
    EXPECT_EQ(slurm_nvml_gpu_type("NVIDIA A100-SXM4-40GB"), "nvidia_a100-sxm4-40gb");
    EXPECT_EQ(slurm_nvml_gpu_type("NVIDIA H100 80GB HBM3"), "nvidia_h100_80gb_hbm3");
    EXPECT_EQ(slurm_nvml_gpu_type("Tesla V100-SXM2-32GB"), "tesla_v100-sxm2-32gb");
    EXPECT_EQ(slurm_rsmi_gpu_type("MI300X"), "mi300x");
    EXPECT_EQ(slurm_rsmi_gpu_type("AMD Instinct MI210"), "amd_instinct_mi210");
}

TEST(SlurmNames, Series24_11EdgesOfTheNameRule) {
    SlurmMigInput m{"NVIDIA H100 80GB HBM3", "", 3, 1, 40448};
    // A name without "mig_" after underscoring: the attributes decide.
    m.mig_name = "NVIDIA H100 80GB HBM3";
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, m), "nvidia_h100_80gb_hbm3_1c.3g.40gb");
    // A name Slurm's 64-byte buffer cannot take (NVML: INSUFFICIENT_SIZE): attributes too.
    m.mig_name = "NVIDIA H100 80GB HBM3 Engineering Sample With A Long Name MIG 1c.3g.40gb";
    ASSERT_GE(m.mig_name.size(), 64u);
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, m), "nvidia_h100_80gb_hbm3_1c.3g.40gb");
    // Up to 63 characters the name is used as written, whatever it says.
    m.mig_name = "NVIDIA H100 80GB HBM3 MIG 1c.3g.41gb";
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, m), "nvidia_h100_80gb_hbm3_1c.3g.41gb");
    // 64 to 95 characters: 24.11's buffer cannot take the name, 25.11's and 26.05's can.
    m.mig_name = "NVIDIA H100 80GB HBM3 Engineering Sample With Long Name MIG 1c.3g.41gb";
    ASSERT_GE(m.mig_name.size(), 64u);
    ASSERT_LT(m.mig_name.size(), 96u);
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, m), "nvidia_h100_80gb_hbm3_1c.3g.40gb");
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S25_11, m), "nvidia_h100_80gb_hbm3_1c.3g.41gb");
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S26_05, m), "nvidia_h100_80gb_hbm3_1c.3g.41gb");
    // 96 and more: no series takes it.
    m.mig_name = std::string(90, 'X') + " MIG 1c.3g.41gb";
    for (const auto& series : all_slurm_series()) {
        if (series.reads_mig_name) {
            EXPECT_EQ(slurm_nvml_mig_type(series.series, m), "nvidia_h100_80gb_hbm3_1c.3g.40gb")
                << series.name;
        }
    }
    // Half a GiB: 22.05 rounds up, exactly a GiB below: both formulas agree.
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S22_05, {"X", "", 1, 1, 1536}), "x_1g.2gb");
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S22_05, {"X", "", 1, 1, 1535}), "x_1g.1gb");
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, {"X", "", 1, 1, 1025}), "x_1g.2gb");
    EXPECT_EQ(slurm_nvml_mig_type(SlurmSeries::S24_11, {"X", "", 1, 1, 1024}), "x_1g.1gb");
}

// --- discovery with TypeNaming=slurm on simulated nodes ---------------------------------------

Result<Node> discover_named(const SimRoot& r, TypeNaming naming, SlurmSeries series) {
    DiscoveryOptions o = r.discovery_options();
    o.type_naming = naming;
    o.slurm_series = series;
    return discover(o);
}

// On 24.11 the name is the stem plus the profile the driver prints, which is xpart's own
// name: every MIG device of the guide's node, compute instances included, says so.
TEST(SlurmNamesDiscovery, Series24_11IsTheStemAndTheDriverProfile) {
    SimRoot r(testing::spec_json("a100-guide"));
    ASSERT_EQ(r.error(), "");
    auto ours = discover_named(r, TypeNaming::Xpart, SlurmSeries::S24_11);
    auto slurm = discover_named(r, TypeNaming::Slurm, SlurmSeries::S24_11);
    ASSERT_TRUE(ours) << ours.error().message;
    ASSERT_TRUE(slurm) << slurm.error().message;
    ASSERT_EQ(ours->partition_count(), slurm->partition_count());
    std::size_t compared = 0, with_ci = 0;
    for (std::size_t g = 0; g < ours->gpus.size(); ++g) {
        // The guide's node names its GPUs "A100-SXM4-40GB" (no "NVIDIA "): stem "a100".
        ASSERT_EQ(ours->gpus[g].model, "A100-SXM4-40GB");
        for (std::size_t p = 0; p < ours->gpus[g].partitions.size(); ++p) {
            const std::string& x = ours->gpus[g].partitions[p].type;
            EXPECT_EQ(slurm->gpus[g].partitions[p].type, "a100_" + x);
            with_ci += x.find("c.") != std::string::npos;
            ++compared;
        }
    }
    EXPECT_GT(compared, 20u);
    EXPECT_GT(with_ci, 5u);
}

TEST(SlurmNamesDiscovery, Series22_05DropsComputeInstancesAndMedia) {
    SimRoot r(testing::spec_json("mixed-mig-full"));
    ASSERT_EQ(r.error(), "");
    auto node = discover_named(r, TypeNaming::Slurm, SlurmSeries::S22_05);
    ASSERT_TRUE(node) << node.error().message;
    std::vector<std::string> types;
    for (const Gpu& g : node->gpus)
        for (const Partition& p : g.partitions) types.push_back(p.type);
    // mixed-mig-full: A100-80GB MIG 3g.40gb, 2g.20gb, 1g.10gb+me, 1g.10gb (in GI order), an
    // A100-80GB whole, a V100 whole; the pending GPU has none.
    std::vector<std::string> want = {"nvidia_a100_3g.39gb", "nvidia_a100_2g.20gb",
                                     "nvidia_a100_1g.10gb", "nvidia_a100_1g.10gb",
                                     "nvidia_a100-sxm4-80gb", "tesla_v100-sxm2-32gb"};
    std::vector<std::string> xpart_types;
    auto ours = discover_named(r, TypeNaming::Xpart, SlurmSeries::S22_05);
    ASSERT_TRUE(ours) << ours.error().message;
    for (const Gpu& g : ours->gpus)
        for (const Partition& p : g.partitions) xpart_types.push_back(p.type);
    ASSERT_EQ(xpart_types.size(), want.size());
    std::sort(types.begin(), types.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(types, want);
}

// slurmd start: xpart.conf TypeNaming=slurm and the adapter's series reach the records.
TEST(SlurmNamesDiscovery, LoadNodeGresTakesTheSeries) {
    json spec = testing::spec_json("h100-80gb");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    const std::string conf = r.root() + "/xpart.conf";
    std::ofstream(conf) << "Root=" << r.root() << " NvmlLibrary=" << r.nvml_library()
                        << "\nVendors=nvidia TypeNaming=Slurm\n";
    std::map<std::string, int> s22, s24, xp;
    for (const auto& rec : load_node_gres(conf, "", "", nullptr).records) ++s22[rec.type];
    for (const auto& rec : load_node_gres(conf, "", "", nullptr, SlurmSeries::S24_11).records) ++s24[rec.type];
    std::ofstream(conf) << "Root=" << r.root() << " NvmlLibrary=" << r.nvml_library() << "\nVendors=nvidia\n";
    for (const auto& rec : load_node_gres(conf, "", "", nullptr, SlurmSeries::S24_11).records) ++xp[rec.type];
    // h100-80gb: three 1c.3g.40gb and two 1g.10gb (notes: the R570 reference node).
    EXPECT_EQ(xp, (std::map<std::string, int>{{"1c.3g.40gb", 3}, {"1g.10gb", 2}}));
    EXPECT_EQ(s24, (std::map<std::string, int>{{"nvidia_h100_80gb_hbm3_1c.3g.40gb", 3},
                                               {"nvidia_h100_80gb_hbm3_1g.10gb", 2}}));
    EXPECT_EQ(s22, (std::map<std::string, int>{{"nvidia_h100_80gb_hbm3_3g.40gb", 3},
                                               {"nvidia_h100_80gb_hbm3_1g.10gb", 2}}));
}

// --- MIG mode on, no MIG device ----------------------------------------------------------------

TEST(MigWithoutDevices, OneLineTheGpuUnboundTheOthersKept) {
    json spec = testing::spec_json("a100-guide");
    spec["nvidia"]["gpus"][2]["instances"] = json::array();
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    auto node = discover(r.discovery_options());
    ASSERT_TRUE(node) << node.error().message;
    const json& g2 = spec["nvidia"]["gpus"][2];
    ASSERT_EQ(node->errors.size(), 1u);
    EXPECT_EQ(node->errors[0], "GPU 2 (" + g2["uuid"].get<std::string>() + ", " +
                                   g2["pci_bus_id"].get<std::string>() +
                                   "): MIG mode is on but no MIG device exists; not registered: "
                                   "create MIG devices (nvidia-smi mig -cgi ... -C) or disable "
                                   "MIG mode");
    ASSERT_EQ(node->gpus.size(), spec["nvidia"]["gpus"].size());
    const Gpu& g = node->gpus[2];
    EXPECT_EQ(g.mode, PartitionMode::Mig);
    EXPECT_TRUE(g.partitions.empty());
    // Its device node belongs to no partition: withheld, so deny rules cover it.
    const std::string node_file = "/dev/nvidia" + std::to_string(g2["minor"].get<int>());
    bool withheld = false;
    for (const DeviceFile& f : g.withheld_files) withheld = withheld || f.path == node_file;
    EXPECT_TRUE(withheld) << node_file;
    // Every other GPU keeps its MIG devices.
    for (std::size_t i = 0; i < node->gpus.size(); ++i) {
        if (i == 2) continue;
        std::size_t want = 0;
        for (const json& gi : spec["nvidia"]["gpus"][i]["instances"])
            want += gi.contains("compute_instances") ? gi["compute_instances"].size() : 1;
        EXPECT_EQ(node->gpus[i].partitions.size(), want) << "GPU " << i;
    }
}

TEST(MigWithoutDevices, PlanRegistersTheRestAndSaysWhy) {
    json spec = testing::spec_json("mixed-mig-full");
    spec["nvidia"]["gpus"][0]["instances"] = json::array();
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    const std::string conf = r.root() + "/xpart.conf";
    std::ofstream(conf) << "Root=" << r.root() << " NvmlLibrary=" << r.nvml_library()
                        << " Vendors=nvidia\n";
    NodeGres g = load_node_gres(conf, "", "", nullptr);
    // mixed-mig-full less GPU 0's MIG devices: the whole A100 and the V100.
    ASSERT_EQ(g.records.size(), 2u);
    for (const GresRecord& rec : g.records) EXPECT_NE(rec.gpu_uuid, spec["nvidia"]["gpus"][0]["uuid"]);
    ASSERT_EQ(g.errors.size(), 1u);
    EXPECT_EQ(g.errors[0].rfind("GPU 0 (" + spec["nvidia"]["gpus"][0]["uuid"].get<std::string>() +
                                    ", 0000:3b:00.0): MIG mode is on but no MIG device exists",
                                0),
              0u)
        << g.errors[0];
}

}  // namespace
}  // namespace xpart
