// AMD discovery: physical GPUs and their compute partitions (XCPs) from KFD topology, the PCI
// partition attributes when the kernel has them, and the DRM render nodes.
//
// Decisions:
// - KFD nodes with the same unique_id (else the same domain and bus) are one GPU; GPUs are
//   indexed in (domain, bus) order, partitions by the function bits of location_id.
// - The mode comes from current_compute_partition when present; otherwise it is inferred from
//   num_xcc and the model's XCC count (libxpart/amd/amd_models.hpp).
// - A GPU showing FEWER partitions than its mode makes (a real MI300X capture shows 7 of 8) is
//   reported with the partitions it has and a Node warning: the missing one has no KFD node
//   and no render node to bind, so it is not invented, and the others stay usable. MORE nodes
//   than the mode makes cannot be, and is an error.
// - NUMA locality from the PCI device's numa_node/local_cpulist, else from the KFD PCIe link
//   to a CPU node (whose id is the NUMA node) and that node's cpulist.
// - Reads: each node's properties once, mem_banks/<i> by number (no directory listing), one
//   readlink per render node, io_links only when the PCI device has no NUMA node.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include "libxpart/amd/amd_kfd.hpp"
#include "libxpart/amd/amd_models.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/proc_devices.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

constexpr unsigned kDrmMajor = 226;

// The partitions (KFD nodes) of one physical GPU.
struct GpuGroup {
    std::uint64_t domain = 0;
    std::uint64_t bus = 0;
    std::vector<const KfdNode*> nodes;  // KFD order
};

std::string node_dir(unsigned id) {
    return std::string(kKfdTopology) + "/nodes/" + std::to_string(id);
}

// Groups GPU nodes by unique_id (fallback: domain + bus when unique_id is 0 or absent).
Result<std::vector<GpuGroup>> group_gpus(const std::vector<KfdNode>& nodes) {
    std::map<std::pair<int, std::uint64_t>, GpuGroup> groups;
    for (const auto& n : nodes) {
        if (!n.is_gpu()) continue;
        const std::uint64_t domain = n.props.get_or("domain", 0);
        const std::uint64_t bus = n.props.get_or("location_id", 0) >> 8;
        const std::uint64_t uid = n.props.get_or("unique_id", 0);
        auto key = uid != 0 ? std::make_pair(0, uid) : std::make_pair(1, domain << 8 | bus);
        GpuGroup& g = groups[key];
        if (!g.nodes.empty() && (g.domain != domain || g.bus != bus))
            return Error{n.props.file() + ": KFD node " + std::to_string(n.id) +
                         " shares unique_id " + std::to_string(uid) + " with node " +
                         std::to_string(g.nodes.front()->id) + " but sits on another PCI bus"};
        g.domain = domain;
        g.bus = bus;
        g.nodes.push_back(&n);
    }
    std::vector<GpuGroup> out;
    for (auto& [key, g] : groups) out.push_back(std::move(g));
    std::sort(out.begin(), out.end(), [](const GpuGroup& a, const GpuGroup& b) {
        return std::tie(a.domain, a.bus) < std::tie(b.domain, b.bus);
    });
    return out;
}

// The kfd major: /proc/devices, else the node's /dev/kfd.
Result<unsigned> kfd_major(const RootFs& root) {
    if (root.exists("/proc/devices")) {
        auto majors = CharMajors::load(root);
        if (!majors) return majors.error();
        if (auto m = majors->find("kfd")) return *m;
    }
    struct stat st;
    const std::string dev = root.host_path("/dev/kfd");
    if (::stat(dev.c_str(), &st) == 0 && S_ISCHR(st.st_mode)) return major(st.st_rdev);
    return Error{root.host_path("/proc/devices") + ": no character device driver 'kfd', and " +
                 dev + " is not a character device: cannot name /dev/kfd's major"};
}

// An optional sysfs attribute: nullopt when absent; an Error when present but unreadable
// (EPERM during a GPU reset): never a guess.
Result<std::optional<std::string>> read_optional(const RootFs& root, const std::string& path) {
    auto text = root.read(path);
    if (text) return std::optional<std::string>(std::move(*text));
    if (!root.exists(path)) return std::optional<std::string>();
    return Error{text.error().message + " (while reading a GPU partition attribute)"};
}

// An optional attribute in the form `parse` accepts (it returns std::optional<T>): nullopt
// when absent; an Error when unreadable or not one of `expected`.
template <class Parse>
auto read_attribute(const RootFs& root, const std::string& path, Parse parse,
                    const char* expected) -> Result<decltype(parse(std::string()))> {
    auto text = read_optional(root, path);
    if (!text) return text.error();
    if (!*text) return decltype(parse(std::string())){};
    auto value = parse(**text);
    if (!value)
        return file_error(root.host_path(path), 1,
                          std::string("expected ") + expected + ", got '" + trim(**text) + "'");
    return value;
}

// readlink that tells "absent" (nullopt) from other failures.
Result<std::optional<std::string>> read_link_optional(const RootFs& root, const std::string& path) {
    const std::string host = root.host_path(path);
    char buf[4096];
    ssize_t n = ::readlink(host.c_str(), buf, sizeof buf - 1);
    if (n >= 0) return std::optional<std::string>(std::string(buf, static_cast<std::size_t>(n)));
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>();
    return Error{host + ": " + std::strerror(errno)};
}

struct Locality {
    int numa_node = -1;
    std::vector<unsigned> cpus;
};

Result<Locality> gpu_locality(const RootFs& root, const std::string& pci_dir,
                              const KfdNode& first, const std::vector<KfdNode>& nodes) {
    Locality loc;
    auto numa = read_optional(root, pci_dir + "/numa_node");
    if (!numa) return numa.error();
    if (*numa) {
        const std::string t = trim(**numa);
        if (t != "-1") {
            auto v = parse_u64(t);
            if (!v || *v > 4095)
                return file_error(root.host_path(pci_dir + "/numa_node"), 1,
                                  "expected a NUMA node number or -1, got '" + t + "'");
            loc.numa_node = static_cast<int>(*v);
            auto list = read_optional(root, pci_dir + "/local_cpulist");
            if (!list) return list.error();
            if (*list) {
                auto cpus = parse_cpu_list(**list);
                if (!cpus)
                    return file_error(root.host_path(pci_dir + "/local_cpulist"), 1,
                                      cpus.error().message);
                loc.cpus = std::move(*cpus);
                return loc;
            }
        }
    }
    if (loc.numa_node < 0) {
        auto cpu = read_kfd_cpu_link(root, node_dir(first.id), nodes);
        if (!cpu) return cpu.error();
        if (!*cpu) return loc;
        loc.numa_node = static_cast<int>(**cpu);
    }
    const std::string list_path =
        "/sys/devices/system/node/node" + std::to_string(loc.numa_node) + "/cpulist";
    auto list = read_optional(root, list_path);
    if (!list) return list.error();
    if (*list) {
        auto cpus = parse_cpu_list(**list);
        if (!cpus) return file_error(root.host_path(list_path), 1, cpus.error().message);
        loc.cpus = std::move(*cpus);
    }
    return loc;
}

std::string hex16(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
    return buf;
}

// Partitioned GPUs carry the partition in the function bits of location_id.
int partition_index(const KfdNode& n, PartitionMode mode) {
    return mode == PartitionMode::Full ? 0 : static_cast<int>(n.props.get_or("location_id", 0) & 0x7);
}

// Why an XCP has no render node to bind, or nullopt when it has one: KFD gives it no
// drm_render_minor, or the node has /dev/dri but not its renderD file (a mode switch whose
// render nodes the kernel or udev did not make). ROCr drops such an XCP and renumbers the
// rest, so it is left out, not registered with a file no task can open. A root without
// /dev/dri (a topology capture) is not checked.
std::optional<std::string> missing_render_node(const RootFs& root, const KfdNode& n) {
    auto minor = n.props.find("drm_render_minor");
    if (!minor) return n.props.file() + ": no drm_render_minor";
    const std::string dev = "/dev/dri/renderD" + std::to_string(*minor);
    if (*minor >= 128 && root.exists("/dev/dri") && !root.exists(dev))
        return root.host_path(dev) + " is missing";
    return std::nullopt;
}

// One KFD node of a GPU whose pci_bus_id, uuid and mode are known: its index, size, render node
// (ownership checked) and device files.
Result<Partition> build_partition(const DiscoveryOptions& o, const KfdNode& n, const Gpu& gpu,
                                  const std::string& type, unsigned kfd_major_number) {
    const RootFs& root = o.root;
    Partition p;
    p.uuid = gpu.uuid;
    p.type = type;
    p.kfd_node = static_cast<int>(n.id);
    p.index = partition_index(n, gpu.mode);
    const std::uint64_t simd_per_cu = n.props.get_or("simd_per_cu", 0);
    p.compute_units =
        simd_per_cu ? static_cast<unsigned>(n.props.get_or("simd_count", 0) / simd_per_cu) : 0;
    auto mem = read_kfd_memory_mb(root, node_dir(n.id), n.props.get_or("mem_banks_count", 0));
    if (!mem) return mem.error();
    p.memory_mb = *mem;

    // Render minors start at 128; kernels since 6.x allocate past 255 on large nodes.
    auto minor = n.props.find("drm_render_minor");
    if (!minor || *minor < 128 || *minor >= (1u << 20))
        return Error{n.props.file() + ": drm_render_minor " +
                     (minor ? std::to_string(*minor) : std::string("missing")) +
                     " is not a render node minor (128 or more)"};
    const std::string render = "renderD" + std::to_string(*minor);
    const std::string link = "/sys/class/drm/" + render + "/device";
    auto target = read_link_optional(root, link);
    if (!target) return target.error();
    if (*target)
        if (auto st = check_amd_render_link(**target, gpu.pci_bus_id, p.index, root.host_path(link));
            !st)
            return st.error();
    p.device_files.push_back({"/dev/dri/" + render, kDrmMajor, static_cast<unsigned>(*minor), false});
    p.device_files.push_back({"/dev/kfd", kfd_major_number, 0, true});
    return p;
}

Result<Gpu> build_gpu(const DiscoveryOptions& o, const GpuGroup& group, int index,
                      unsigned kfd_major_number, const std::vector<KfdNode>& nodes,
                      std::vector<std::string>& warnings) {
    const RootFs& root = o.root;
    const KfdNode& first = *group.nodes.front();
    Gpu gpu;
    gpu.vendor = Vendor::Amd;
    gpu.index = index;
    char bdf[32];
    std::snprintf(bdf, sizeof bdf, "%04x:%02x:00.0", static_cast<unsigned>(group.domain & 0xffff),
                  static_cast<unsigned>(group.bus & 0xff));
    gpu.pci_bus_id = bdf;
    const std::uint64_t uid = first.props.get_or("unique_id", 0);
    gpu.uuid = uid != 0 ? "GPU-" + hex16(uid) : std::string();
    const AmdModel* model = find_amd_model(static_cast<unsigned>(first.props.get_or("device_id", 0)));
    gpu.model = model ? model->name
                      : "gfx" + std::to_string(first.props.get_or("gfx_target_version", 0));
    const std::string label = "GPU " + std::to_string(index) + " (" + gpu.pci_bus_id +
                              (gpu.uuid.empty() ? "" : ", " + gpu.uuid) + ")";

    const std::uint64_t num_xcc = first.props.get_or("num_xcc", 0);
    for (const KfdNode* n : group.nodes)
        if (n->props.get_or("num_xcc", 0) != num_xcc)
            return Error{n->props.file() + ": num_xcc " +
                         std::to_string(n->props.get_or("num_xcc", 0)) + " differs from " +
                         std::to_string(num_xcc) + " of node " + std::to_string(first.id) +
                         " of the same GPU"};

    // Mode: the PCI attribute when the kernel has it, else inferred from the topology.
    const std::string pci_dir = "/sys/bus/pci/devices/" + gpu.pci_bus_id;
    auto attr_mode = read_attribute(root, pci_dir + "/current_compute_partition",
                                    parse_amd_compute_partition, "SPX, DPX, TPX, QPX or CPX");
    if (!attr_mode) return attr_mode.error();
    const bool mode_from_attribute = attr_mode->has_value();
    if (mode_from_attribute) {
        gpu.mode = **attr_mode;
    } else {
        auto mode = infer_amd_mode(model, static_cast<unsigned>(num_xcc), group.nodes.size());
        if (!mode) return Error{first.props.file() + ": " + mode.error().message};
        gpu.mode = *mode;
    }
    auto attr_memory = read_attribute(root, pci_dir + "/current_memory_partition",
                                      parse_amd_memory_partition, "NPS1, NPS2, NPS4 or NPS8");
    if (!attr_memory) return attr_memory.error();
    if (*attr_memory) gpu.memory_mode = **attr_memory;

    // How many partitions the mode makes; fewer in KFD is reported, more is impossible.
    std::size_t expected = group.nodes.size();
    if (gpu.mode == PartitionMode::Full)
        expected = 1;
    else if (model && model->partitionable)
        expected = num_xcc > 0 && !mode_from_attribute ? model->total_xcc / num_xcc
                                               : amd_mode_partition_count(gpu.mode, *model);
    if (group.nodes.size() > expected)
        return Error{first.props.file() + ": " + label + " has " +
                     std::to_string(group.nodes.size()) + " KFD nodes, but " +
                     to_string(gpu.mode) + " mode makes " + std::to_string(expected)};
    if (group.nodes.size() < expected)
        warnings.push_back(label + ": KFD shows " + std::to_string(group.nodes.size()) + " of the " +
                           std::to_string(expected) + " partitions of " + to_string(gpu.mode) +
                           " mode; only those are reported");

    auto loc = gpu_locality(root, pci_dir, first, nodes);
    if (!loc) return loc.error();
    gpu.numa_node = loc->numa_node;
    gpu.cpus = std::move(loc->cpus);

    // TypeNaming=slurm: gpu/rsmi sees the whole GPU only; each XCP carries its name.
    const std::string type = o.type_naming == TypeNaming::Slurm
                                 ? slurm_rsmi_gpu_type(gpu.model)
                                 : amd_partition_type(o.amd_type_naming, gpu.mode, gpu.memory_mode, gpu.model);
    for (const KfdNode* n : group.nodes) {
        const int index = partition_index(*n, gpu.mode);
        for (const Partition& q : gpu.partitions)
            if (q.index == index)
                return Error{n->props.file() + ": " + label + ": KFD nodes " +
                             std::to_string(q.kfd_node) + " and " + std::to_string(n->id) +
                             " both claim partition " + std::to_string(index)};
        if (auto why = missing_render_node(root, *n)) {
            warnings.push_back(label + ": partition " + std::to_string(index) + " (KFD node " +
                               std::to_string(n->id) + ") has no render node (" + *why +
                               "); not registered, the others are");
            continue;
        }
        auto p = build_partition(o, *n, gpu, type, kfd_major_number);
        if (!p) return p.error();
        gpu.memory_mb += p->memory_mb;
        gpu.partitions.push_back(std::move(*p));
    }
    if (gpu.partitions.empty()) {
        warnings.push_back(label + ": no partition has a render node; the GPU is not registered");
        return gpu;  // discover_amd leaves it out
    }
    std::sort(gpu.partitions.begin(), gpu.partitions.end(),
              [](const Partition& a, const Partition& b) { return a.index < b.index; });
    gpu.minor = static_cast<int>(gpu.partitions.front().device_files.front().minor);
    return gpu;
}

}  // namespace

Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options,
                                      std::vector<std::string>* warnings) {
    const RootFs& root = options.root;
    const std::string nodes_dir = std::string(kKfdTopology) + "/nodes";
    std::vector<Gpu> gpus;
    if (!root.exists(nodes_dir)) return gpus;  // no amdgpu driver: no AMD GPUs
    auto nodes = read_kfd_nodes(root, nodes_dir);
    if (!nodes) return nodes.error();
    auto groups = group_gpus(*nodes);
    if (!groups) return groups.error();
    if (groups->empty()) return gpus;
    auto kfd = kfd_major(root);
    if (!kfd) return kfd.error();
    std::vector<std::string> found_warnings;
    for (std::size_t i = 0; i < groups->size(); ++i) {
        auto gpu = build_gpu(options, (*groups)[i], static_cast<int>(i), *kfd, *nodes,
                             found_warnings);
        if (!gpu) return gpu.error();
        if (!gpu->partitions.empty()) gpus.push_back(std::move(*gpu));
    }
    if (warnings) warnings->insert(warnings->end(), found_warnings.begin(), found_warnings.end());
    return gpus;
}

Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions& options) {
    return discover_amd(options, nullptr);
}

}  // namespace xpart
