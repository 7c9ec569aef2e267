// Writes the root tree of a simulated node: the exact procfs/sysfs files a real node shows and
// real device nodes (mknod, real majors). Discovery then reads it through its root prefix.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "sim/spec.hpp"

namespace xpart::sim {

class TreeWriter {
public:
    explicit TreeWriter(std::string root) : root_(std::move(root)) {}
    const std::string& root() const { return root_; }
    std::string host_path(const std::string& node_path) const { return root_ + node_path; }

    // Creates parent directories as needed. Errors name the host path.
    Status write_file(const std::string& node_path, const std::string& content) const;
    Status make_dirs(const std::string& node_path) const;
    Status make_symlink(const std::string& node_path, const std::string& target) const;
    // A character device node (needs CAP_MKNOD); mode is the permission bits.
    Status make_char_device(const std::string& node_path, unsigned major, unsigned minor,
                            unsigned mode = 0666) const;
    // Registers a driver for /proc/devices ("Character devices:" section).
    void add_char_driver(unsigned major, const std::string& name) { drivers_[major] = name; }
    // Writes /proc/devices from the registered drivers plus the usual base ones.
    Status write_proc_devices() const;

    // For re-laying part of a tree in place (sim/amd_relayout.hpp): records the node path of
    // every file, link and device node (not directory) written into `paths`; with `dry_run`
    // nothing touches the disk, which lists the paths a layout has.
    void record_paths(std::set<std::string>* paths, bool dry_run) { record_ = paths; dry_run_ = dry_run; }
    // Files in `paths` are written only where absent (recorded all the same).
    void keep_existing(std::set<std::string> paths) { keep_ = std::move(paths); }

private:
    // Records the path; true when it must not be written (dry run, or kept and present).
    bool skip(const std::string& node_path) const;

    std::string root_;
    std::map<unsigned, std::string> drivers_;
    std::set<std::string>* record_ = nullptr;
    bool dry_run_ = false;
    std::set<std::string> keep_;
};

// Marks a root built by xpart-sim; only such a root may be rebuilt in place.
constexpr const char* kRootMarker = ".xpart-sim-root";
// Error "ROOT: not an xpart-sim root (no .xpart-sim-root)" unless the marker is there.
Status check_sim_root(const std::string& root);
// The node path `node_path` leads to once every link in it is followed inside `root`
// (absolute targets start again at `root`, ".." stops there): never a path outside it.
Result<std::string> resolve_in_root(const std::string& root, const std::string& node_path);

// A CPU set as the kernel prints a cpumask (cpumap, local_cpus, package_cpus): 32-bit hex
// words, most significant first, separated by commas, `nbits` (nr_cpu_ids) wide.
std::string format_cpu_mask(const std::vector<unsigned>& cpus, unsigned nbits);
// The node's nr_cpu_ids: its highest CPU + 1.
unsigned cpu_id_count(const NodeSpec& spec);
// A PCI device's CPUs near it: local_cpulist and local_cpus (the mask hwloc reads).
Status write_local_cpus(const NodeSpec& spec, TreeWriter& tree, const std::string& pci_dir,
                        const std::vector<unsigned>& cpus);

// What a PCI function's vendor, device and class files say (class 0: no class file).
struct PciIds {
    unsigned vendor = 0, device = 0, pci_class = 0;
};
// A PCI device's own files at its sysfs directory `dir` (pcie_layout.hpp's pci_device_dir):
// vendor, device, class, numa_node, local_cpulist/local_cpus (its NUMA node's CPUs, all for
// -1), and the relative link /sys/bus/pci/devices/<bus id> to it.
Status write_pci_function(const NodeSpec& spec, TreeWriter& tree, const std::string& dir,
                          const PciIds& ids, int numa_node);

// Builds the whole tree under `root` (created if missing; must be empty, absent, or an earlier
// xpart-sim root, which is removed first).
Status build_tree(const NodeSpec& spec, const std::string& root);

// Parts called by build_tree: the bridges above switched devices and the NICs (with their
// RDMA devices), then the vendors' GPUs.
Status write_pcie_tree(const NodeSpec& spec, TreeWriter& tree);
Status write_nics(const NodeSpec& spec, TreeWriter& tree);
Status write_nvidia_tree(const NodeSpec& spec, TreeWriter& tree);
Status write_amd_tree(const NodeSpec& spec, TreeWriter& tree);
// The part of write_amd_tree that depends on the GPUs' partition modes: KFD topology nodes
// (CPU and GPU) with their io_links, DRM render/card nodes, amdgpu_xcp platform devices,
// /dev/dri nodes and the PCI devices with their partition attributes. Not generation_id.
Status write_amd_devices(const NodeSpec& spec, TreeWriter& tree);

}  // namespace xpart::sim
