// The NVIDIA driver's view of a simulated node: procfs files in the driver's exact format,
// the static MIG capability table, per-instance capability files, and real device nodes.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "libxpart/text.hpp"
#include "sim/nvidia_caps.hpp"
#include "sim/nvidia_model.hpp"
#include "sim/pcie_layout.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr unsigned kCtlMinor = 255;
constexpr unsigned kModesetMinor = 254;
constexpr unsigned kConfigMinor = 1;
constexpr unsigned kMonitorMinor = 2;
constexpr unsigned kModeConfig = 0400;   // DeviceFileMode 256
constexpr unsigned kModeAccess = 0444;   // DeviceFileMode 292 (monitor, gi/ci access)
constexpr unsigned kVendorNvidia = 0x10de;
// Data-center GPUs are PCI "3D controllers" (base class 03, subclass 02), not VGA (0300).
constexpr unsigned kClass3dController = 0x030200;

// Layout of the driver's capability minors (nv-caps.c): per GPU minor 15 GIs x (1 + 8 CIs).
unsigned gi_cap_minor(unsigned gpu, unsigned gi) { return 3 + 135 * gpu + 9 * gi; }
unsigned ci_cap_minor(unsigned gpu, unsigned gi, unsigned ci) { return gi_cap_minor(gpu, gi) + 1 + ci; }

// /proc/driver/nvidia-caps/mig-minors: every possible capability, in the driver's order.
std::string mig_minors_table() {
    std::string text;
    text.reserve(110000);
    text += "config 1\nmonitor 2\n";
    char line[64];
    for (unsigned gpu = 0; gpu < 32; ++gpu)
        for (unsigned gi = 0; gi < 15; ++gi) {
            std::snprintf(line, sizeof line, "gpu%u/gi%u/access %u\n", gpu, gi, gi_cap_minor(gpu, gi));
            text += line;
            for (unsigned ci = 0; ci < 8; ++ci) {
                std::snprintf(line, sizeof line, "gpu%u/gi%u/ci%u/access %u\n", gpu, gi, ci,
                              ci_cap_minor(gpu, gi, ci));
                text += line;
            }
        }
    return text;
}

std::string capability_file(unsigned minor, unsigned mode) {
    return "DeviceFileMinor: " + std::to_string(minor) + "\nDeviceFileMode: " +
           std::to_string(mode) + "\nDeviceFileModify: 1\n";
}

// The per-GPU information file, keys and "Key: \t value" spacing as the driver prints them.
std::string information_file(const NvidiaGpuSpec& g, unsigned irq) {
    return "Model: \t\t " + g.name + "\nIRQ:   \t\t " + std::to_string(irq) +
           "\nGPU UUID: \t " + g.uuid + "\nVideo BIOS: \t 92.00.36.00.01\nBus Type: \t PCIe\n"
           "DMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\nBus Location: \t " + g.pci_bus_id +
           "\nDevice Minor: \t " + std::to_string(g.minor) + "\nGPU Excluded:\t No\n";
}

// A capability node; when allowed, EPERM (no CAP_MKNOD) leaves it out rather than failing.
Status make_cap_node(const TreeWriter& tree, unsigned major, unsigned minor, bool skip_eperm) {
    const std::string node = "/dev/nvidia-caps/nvidia-cap" + std::to_string(minor);
    if (skip_eperm) {
        if (auto st = tree.make_dirs("/dev/nvidia-caps"); !st) return st;
        const std::string host = tree.host_path(node);
        ::unlink(host.c_str());
        if (::mknod(host.c_str(), S_IFCHR | kModeAccess, makedev(major, minor)) == 0) {
            ::chmod(host.c_str(), kModeAccess);  // mknod honours the umask
            return ok_status();
        }
        if (errno == EPERM) return ok_status();
    }
    return tree.make_char_device(node, major, minor, kModeAccess);
}

Status write_gpu(const NodeSpec& spec, const NvidiaGpuSpec& g, unsigned irq, unsigned caps_major,
                 TreeWriter& tree) {
    if (auto st = tree.write_file("/proc/driver/nvidia/gpus/" + g.pci_bus_id + "/information",
                                  information_file(g, irq)); !st)
        return st;
    // What the kernel shows even when the driver is not loaded: vendor, device and class.
    const GpuProductSpec* product = find_gpu_product(g.product);
    const PciIds ids{kVendorNvidia, product ? product->pci_device_id >> 16 : 0u,
                     kClass3dController};
    const std::string pci = pci_device_dir(spec, g.pci_bus_id);
    if (auto st = write_pci_function(spec, tree, pci, ids, g.numa_node); !st) return st;
    if (auto st = tree.make_char_device("/dev/nvidia" + std::to_string(g.minor), kNvidiaMajor,
                                        g.minor, 0666); !st)
        return st;
    // Capability files exist only while MIG is on and only for instances that exist.
    return write_mig_capabilities(g, caps_major, tree);
}

}  // namespace

Status write_mig_capabilities(const NvidiaGpuSpec& g, unsigned caps_major, const TreeWriter& tree,
                              bool skip_unpermitted_nodes) {
    for (const GpuInstanceSpec& gi : g.instances) {
        const std::string dir = "/proc/driver/nvidia/capabilities/gpu" + std::to_string(g.minor) +
                                "/mig/gi" + std::to_string(gi.gi);
        const unsigned gi_minor = gi_cap_minor(g.minor, gi.gi);
        if (auto st = tree.write_file(dir + "/access", capability_file(gi_minor, kModeAccess)); !st)
            return st;
        if (auto st = make_cap_node(tree, caps_major, gi_minor, skip_unpermitted_nodes); !st)
            return st;
        for (const ComputeInstanceSpec& ci : gi.compute_instances) {
            const unsigned ci_minor = ci_cap_minor(g.minor, gi.gi, ci.ci);
            if (auto st = tree.write_file(dir + "/ci" + std::to_string(ci.ci) + "/access",
                                          capability_file(ci_minor, kModeAccess)); !st)
                return st;
            if (auto st = make_cap_node(tree, caps_major, ci_minor, skip_unpermitted_nodes); !st)
                return st;
        }
    }
    return ok_status();
}

Status remove_mig_capabilities(const NvidiaGpuSpec& g, const TreeWriter& tree) {
    const std::string mig =
        tree.host_path("/proc/driver/nvidia/capabilities/gpu" + std::to_string(g.minor) + "/mig");
    for (unsigned gi = 0; gi < 15; ++gi) {
        const std::string dir = mig + "/gi" + std::to_string(gi);
        for (unsigned ci = 0; ci < 8; ++ci) {
            const std::string cdir = dir + "/ci" + std::to_string(ci);
            ::unlink((cdir + "/access").c_str());
            ::rmdir(cdir.c_str());
        }
        ::unlink((dir + "/access").c_str());
        ::rmdir(dir.c_str());
    }
    // The GPU's whole capability minor range (15 GIs x 9), whether a node exists or not.
    for (unsigned m = gi_cap_minor(g.minor, 0); m < gi_cap_minor(g.minor, 15); ++m) {
        const std::string node = tree.host_path("/dev/nvidia-caps/nvidia-cap" + std::to_string(m));
        if (::unlink(node.c_str()) != 0 && errno != ENOENT)
            return errno_error(node + ": unlink", errno);
    }
    return ok_status();
}

Status write_nvidia_tree(const NodeSpec& spec, TreeWriter& tree) {
    const NvidiaSpec& nv = spec.nvidia;
    const unsigned uvm = spec.majors.at("nvidia-uvm");
    const unsigned caps = spec.majors.at("nvidia-caps");
    tree.add_char_driver(kNvidiaMajor, nv.frontend ? "nvidia-frontend" : "nvidia");
    tree.add_char_driver(uvm, "nvidia-uvm");
    tree.add_char_driver(caps, "nvidia-caps");
    if (auto st = tree.write_file("/proc/driver/nvidia/version",
                                  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " +
                                      nv.driver_version +
                                      "  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version "
                                      "12.2.0 (Debian 12.2.0-14) \n"); !st)
        return st;
    if (auto st = tree.write_file("/proc/driver/nvidia-caps/mig-minors", mig_minors_table()); !st)
        return st;
    if (auto st = tree.write_file("/proc/driver/nvidia/capabilities/mig/config",
                                  capability_file(kConfigMinor, kModeConfig)); !st)
        return st;
    if (auto st = tree.write_file("/proc/driver/nvidia/capabilities/mig/monitor",
                                  capability_file(kMonitorMinor, kModeAccess)); !st)
        return st;
    struct Node {
        const char* path;
        unsigned major, minor, mode;
    };
    const Node shared[] = {
        {"/dev/nvidiactl", kNvidiaMajor, kCtlMinor, 0666},
        {"/dev/nvidia-modeset", kNvidiaMajor, kModesetMinor, 0666},
        {"/dev/nvidia-uvm", uvm, 0, 0666},
        {"/dev/nvidia-uvm-tools", uvm, 1, 0666},
        {"/dev/nvidia-caps/nvidia-cap1", caps, kConfigMinor, kModeConfig},
        {"/dev/nvidia-caps/nvidia-cap2", caps, kMonitorMinor, kModeAccess},
    };
    for (const Node& n : shared)
        if (auto st = tree.make_char_device(n.path, n.major, n.minor, n.mode); !st) return st;
    unsigned irq = 142;
    for (const NvidiaGpuSpec& g : nv.gpus)
        if (auto st = write_gpu(spec, g, irq++, caps, tree); !st) return st;
    return ok_status();
}

}  // namespace xpart::sim
