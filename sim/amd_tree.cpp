// Writes the AMD part of a simulated node as amdgpu/KFD show it: KFD topology (CPU nodes first,
// one per NUMA node, then one node per XCP in PCI order), io_links, the PCI device with its
// partition attributes, DRM render and card nodes (XCPs 1..N under amdgpu_xcp platform
// devices) and the device nodes. Property key sets and order follow real captures
// (tests/fixtures/real/kfd).
#include <set>

#include "libxpart/amd/amd_models.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/text.hpp"
#include "sim/pcie_layout.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr const char* kTopology = "/sys/class/kfd/kfd/topology";
constexpr unsigned kVendorAti = 0x1002;  // AMD's GPUs keep ATI's PCI vendor id

// Per-family values KFD reports that discovery does not interpret (copied from captures).
struct GfxFamily {
    unsigned caches_per_xcc, array_per_xcc, cu_per_simd_array, sdma_xgmi_engines;
    unsigned fcompute_clk, fw_version, sdma_fw_version, debug_prop, ccompute_clk;
    std::uint64_t capability;
    const char* name;  // KFD nodes/N/name
};
constexpr GfxFamily kMi300Family{80, 4, 10, 0, 2100, 177, 24, 1511, 2750, 2893521536ull,
                                 "ip discovery"};
constexpr GfxFamily kCdna2Family{217, 8, 14, 3, 1700, 92, 9, 470, 2450, 746037888ull,
                                 "aldebaran"};

// One KFD GPU node: a partition (XCP) of a GPU, or a whole GPU.
struct XcpNode {
    std::size_t gpu = 0;        // index into spec.amd.gpus (PCI order)
    unsigned partition = 0;     // index within the GPU
    unsigned kfd_id = 0;
    unsigned render_minor = 0;  // 128 + KFD order
    unsigned card_minor = 0;
    int platform_id = -1;       // N of amdgpu_xcp.N; -1: the PCI device itself
};

std::string platform_name(const AmdGpuSpec& g, int id) {
    return std::string(g.xcp_naming == XcpNaming::Dot ? "amdgpu_xcp." : "amdgpu_xcp_") +
           std::to_string(id);
}

std::string kfd_node_dir(unsigned id) { return std::string(kTopology) + "/nodes/" + std::to_string(id); }

struct Line {
    const char* key;
    std::uint64_t value;
};
std::string lines(std::initializer_list<Line> ls) {
    std::string out;
    for (const auto& l : ls) out += std::string(l.key) + " " + std::to_string(l.value) + "\n";
    return out;
}

std::string io_link(unsigned type, unsigned from, unsigned to, unsigned weight,
                    std::uint64_t min_bw, std::uint64_t max_bw, unsigned sdma_mask, unsigned flags) {
    return lines({{"type", type}, {"version_major", 0}, {"version_minor", 0}, {"node_from", from},
                  {"node_to", to}, {"weight", weight}, {"min_latency", 0}, {"max_latency", 0},
                  {"min_bandwidth", min_bw}, {"max_bandwidth", max_bw},
                  {"recommended_transfer_size", 0},
                  {"recommended_sdma_engine_id_mask", sdma_mask}, {"flags", flags}});
}

Status write_links(TreeWriter& tree, unsigned node, const std::vector<std::string>& links) {
    for (std::size_t i = 0; i < links.size(); ++i)
        if (auto st = tree.write_file(kfd_node_dir(node) + "/io_links/" + std::to_string(i) +
                                          "/properties",
                                      links[i]);
            !st)
            return st;
    return ok_status();
}

// Distinct, non-zero, stable gpu_id values. The kernel hashes the GPU's identity and the
// XCP's XCC mask, so a compute-mode switch re-makes every XCP with a new gpu_id: so here.
unsigned gpu_id_for(std::uint64_t unique_id, unsigned partition, unsigned num_xcc,
                    std::set<unsigned>& used) {
    std::uint64_t h = (unique_id ^ (0x9e3779b97f4a7c15ull * (partition + 1)) ^
                       (std::uint64_t{num_xcc} << 48)) *
                      0xff51afd7ed558ccdull;
    unsigned id = static_cast<unsigned>((h >> 33) % 64000) + 1024;
    while (!used.insert(id).second) ++id;
    return id;
}

}  // namespace

Status write_amd_devices(const NodeSpec& spec, TreeWriter& tree) {
    const auto& gpus = spec.amd.gpus;
    // KFD ids: CPU nodes 0..numa-1 (spec.numa order), then the XCPs in PCI order.
    auto cpu_kfd_id = [&](int numa_node) {
        for (std::size_t i = 0; i < spec.numa.size(); ++i)
            if (spec.numa[i].node == numa_node) return static_cast<unsigned>(i);
        return 0u;
    };
    std::vector<XcpNode> xcps;
    int next_platform = 0;
    for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
        for (unsigned p = 0; p < gpus[gi].partitions_present; ++p) {
            XcpNode x;
            x.gpu = gi;
            x.partition = p;
            x.kfd_id = static_cast<unsigned>(spec.numa.size() + xcps.size());
            x.render_minor = 128 + static_cast<unsigned>(xcps.size());
            x.card_minor = static_cast<unsigned>(xcps.size());
            if (p > 0) x.platform_id = next_platform++;
            xcps.push_back(x);
        }
    }

    // CPU nodes.
    for (std::size_t c = 0; c < spec.numa.size(); ++c) {
        const NumaSpec& numa = spec.numa[c];
        std::vector<std::string> links;
        for (std::size_t o = 0; o < spec.numa.size(); ++o)
            if (o != c)
                links.push_back(io_link(1, static_cast<unsigned>(c), static_cast<unsigned>(o), 32,
                                        0, 0, 0, 0));
        for (const XcpNode& x : xcps)
            if (gpus[x.gpu].numa_node == numa.node)
                links.push_back(io_link(2, static_cast<unsigned>(c), x.kfd_id, 20, 0, 64000, 3, 3));
        const std::string dir = kfd_node_dir(static_cast<unsigned>(c));
        std::string props = lines({{"cpu_cores_count", numa.cpus.size()}, {"simd_count", 0},
                                   {"mem_banks_count", 1}, {"caches_count", 0},
                                   {"io_links_count", links.size()}, {"p2p_links_count", 0},
                                   {"cpu_core_id_base", numa.cpus.empty() ? 0 : numa.cpus.front()},
                                   {"simd_id_base", 0}});
        for (const char* zero : {"max_waves_per_simd", "lds_size_in_kb", "gds_size_in_kb",
                                 "num_gws", "wave_front_size", "array_count",
                                 "simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu",
                                 "max_slots_scratch_cu", "gfx_target_version", "vendor_id",
                                 "device_id", "location_id", "domain", "drm_render_minor",
                                 "hive_id", "num_sdma_engines", "num_sdma_xgmi_engines",
                                 "num_sdma_queues_per_engine", "num_cp_queues"})
            props += std::string(zero) + " 0\n";
        props += "max_engine_clk_ccompute 2750\n";
        if (auto st = tree.write_file(dir + "/properties", props); !st) return st;
        if (auto st = tree.write_file(dir + "/gpu_id", "0\n"); !st) return st;
        if (auto st = tree.write_file(dir + "/name", "\n"); !st) return st;
        if (auto st = write_links(tree, static_cast<unsigned>(c), links); !st) return st;
    }

    // GPU (XCP) nodes.
    std::set<unsigned> used_ids;
    for (std::size_t i = 0; i < xcps.size(); ++i) {
        const XcpNode& x = xcps[i];
        const AmdGpuSpec& g = gpus[x.gpu];
        const AmdModel& model = *find_amd_model(g.model);
        const GfxFamily& fam = model.partitionable ? kMi300Family : kCdna2Family;
        const bool whole = g.compute_partition == PartitionMode::Full;
        const unsigned parts = whole ? 1 : amd_mode_partition_count(g.compute_partition, model);
        const unsigned num_xcc = model.total_xcc / parts;
        const unsigned cus = model.cus_per_xcc * num_xcc;

        std::vector<std::string> links;
        links.push_back(io_link(2, x.kfd_id, cpu_kfd_id(g.numa_node), 20, 0, 64000, 3, 1));
        for (const XcpNode& y : xcps) {
            if (y.kfd_id == x.kfd_id) continue;
            const AmdGpuSpec& h = gpus[y.gpu];
            if (y.gpu == x.gpu)
                links.push_back(io_link(11, x.kfd_id, y.kfd_id, 13, 819200, 819200, 3, 1));
            else if (g.hive_id != 0 && g.hive_id == h.hive_id)
                links.push_back(io_link(11, x.kfd_id, y.kfd_id, whole ? 15 : 41, 0, 0, 3, 1));
        }
        const std::uint64_t location = (std::uint64_t{g.bus} << 8) | (whole ? 0 : x.partition);
        const std::string props = lines({
            {"cpu_cores_count", 0}, {"simd_count", cus * 4}, {"mem_banks_count", 1},
            {"caches_count", fam.caches_per_xcc * num_xcc}, {"io_links_count", links.size()},
            {"p2p_links_count", 0}, {"cpu_core_id_base", 0},
            {"simd_id_base", 2147488064ull + 40ull * num_xcc * i}, {"max_waves_per_simd", 8},
            {"lds_size_in_kb", 64}, {"gds_size_in_kb", 0}, {"num_gws", 64},
            {"wave_front_size", 64}, {"array_count", fam.array_per_xcc * num_xcc},
            {"simd_arrays_per_engine", 1}, {"cu_per_simd_array", fam.cu_per_simd_array},
            {"simd_per_cu", 4}, {"max_slots_scratch_cu", 32},
            {"gfx_target_version", model.gfx_target_version}, {"vendor_id", 4098},
            {"device_id", model.device_id}, {"location_id", location}, {"domain", g.domain},
            {"drm_render_minor", x.render_minor}, {"hive_id", g.hive_id},
            {"num_sdma_engines", 2}, {"num_sdma_xgmi_engines", fam.sdma_xgmi_engines},
            {"num_sdma_queues_per_engine", 8}, {"num_cp_queues", 24 * num_xcc},
            {"max_engine_clk_fcompute", fam.fcompute_clk}, {"local_mem_size", 0},
            {"fw_version", fam.fw_version}, {"capability", fam.capability},
            {"debug_prop", fam.debug_prop}, {"sdma_fw_version", fam.sdma_fw_version},
            {"unique_id", g.unique_id}, {"num_xcc", num_xcc},
            {"max_engine_clk_ccompute", fam.ccompute_clk}});
        const std::string dir = kfd_node_dir(x.kfd_id);
        // amdgpu gives each XCP its share of the HBM (memory partition / XCPs sharing it).
        const std::uint64_t bytes = (model.memory_mb << 20) / parts;
        const std::string bank = lines({{"heap_type", 1}, {"size_in_bytes", bytes}, {"flags", 0},
                                        {"width", 8192}, {"mem_clk_max", 1300}});
        if (auto st = tree.write_file(dir + "/properties", props); !st) return st;
        if (auto st = tree.write_file(dir + "/mem_banks/0/properties", bank); !st) return st;
        if (auto st = tree.write_file(dir + "/gpu_id",
                                      std::to_string(gpu_id_for(g.unique_id, x.partition, num_xcc, used_ids)) + "\n");
            !st)
            return st;
        if (auto st = tree.write_file(dir + "/name", std::string(fam.name) + "\n"); !st) return st;
        if (auto st = write_links(tree, x.kfd_id, links); !st) return st;

        // DRM: partition 0 hangs off the PCI device, the others off amdgpu_xcp platform devices.
        const std::string owner = x.platform_id < 0
                                      ? pci_device_dir(spec, g.pci_bus_id())
                                      : "/sys/devices/platform/" + platform_name(g, x.platform_id);
        const std::string owner_name = owner.substr(owner.rfind('/') + 1);
        for (const auto& [kind, minor] : {std::make_pair(std::string("renderD"), x.render_minor),
                                          std::make_pair(std::string("card"), x.card_minor)}) {
            const std::string name = kind + std::to_string(minor);
            const std::string drm = owner + "/drm/" + name;
            if (auto st = tree.write_file(drm + "/dev", "226:" + std::to_string(minor) + "\n"); !st)
                return st;
            if (auto st = tree.make_symlink(drm + "/device", "../../../" + owner_name); !st) return st;
            if (auto st = tree.make_symlink("/sys/class/drm/" + name, "../.." + drm.substr(4)); !st) return st;
            if (auto st = tree.make_char_device("/dev/dri/" + name, 226, minor,
                                                kind == "card" ? 0660 : 0666);
                !st)
                return st;
        }
    }

    // PCI devices.
    for (const AmdGpuSpec& g : gpus) {
        const AmdModel& model = *find_amd_model(g.model);
        const std::string dir = pci_device_dir(spec, g.pci_bus_id());
        // No class file: the captures this tree follows were taken without one.
        const PciIds ids{kVendorAti, model.device_id, 0};
        if (auto st = write_pci_function(spec, tree, dir, ids, g.numa_node); !st) return st;
        if (g.pci_attributes && g.compute_partition != PartitionMode::Full) {
            const std::string mode = amd_mode_name(g.compute_partition);
            for (const auto& [file, text] :
                 {std::make_pair("current_compute_partition", mode),
                  std::make_pair("available_compute_partition", std::string(model.compute_modes)),
                  std::make_pair("current_memory_partition", g.memory_partition),
                  std::make_pair("available_memory_partition", std::string(model.memory_modes))})
                if (auto st = tree.write_file(dir + "/" + file, text + "\n"); !st) return st;
        }
    }
    return ok_status();
}

Status write_amd_tree(const NodeSpec& spec, TreeWriter& tree) {
    const unsigned kfd_major = spec.majors.at("kfd");
    if (auto st = write_amd_devices(spec, tree); !st) return st;
    if (auto st = tree.write_file(std::string(kTopology) + "/generation_id", "1\n"); !st) return st;
    if (auto st = tree.write_file(std::string(kTopology) + "/system_properties",
                                  "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
        !st)
        return st;
    if (auto st = tree.make_char_device("/dev/kfd", kfd_major, 0, 0666); !st) return st;
    tree.add_char_driver(226, "drm");
    tree.add_char_driver(kfd_major, "kfd");
    return ok_status();
}

}  // namespace xpart::sim
