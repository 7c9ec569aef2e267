#include "tests/gres_plugin/sample_nodes.hpp"

#include <algorithm>
#include <string>

namespace xpart::test {
namespace {

DeviceFile dev(std::string path, unsigned major, unsigned minor, bool shared = false) {
    return DeviceFile{std::move(path), major, minor, shared};
}

std::vector<DeviceFile> nvidia_shared() {
    return {dev("/dev/nvidiactl", 195, 255, true), dev("/dev/nvidia-uvm", 509, 0, true),
            dev("/dev/nvidia-uvm-tools", 509, 1, true)};
}

Partition mig(const std::string& uuid, const std::string& type, int gi, int ci, int gpu_minor) {
    Partition p;
    p.uuid = uuid;
    p.type = type;
    p.gi = gi;
    p.ci = ci;
    p.device_files = nvidia_shared();
    p.device_files.push_back(dev("/dev/nvidia-caps/nvidia-cap2", 508, 2, true));
    p.device_files.push_back(dev("/dev/nvidia" + std::to_string(gpu_minor), 195,
                                 static_cast<unsigned>(gpu_minor)));
    const unsigned gi_minor = 3 + 135 * gpu_minor + 9 * gi;
    p.device_files.push_back(dev("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor), 508, gi_minor));
    p.device_files.push_back(dev("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor + 1 + ci),
                                 508, gi_minor + 1 + ci));
    return p;
}

}  // namespace

Node mig_node() {
    Node n;
    Gpu g0;
    g0.vendor = Vendor::Nvidia;
    g0.model = "NVIDIA A100-SXM4-80GB";
    g0.uuid = "GPU-00000000-0000-0000-0000-000000000000";
    g0.index = 0;
    g0.minor = 0;
    g0.mode = PartitionMode::Mig;
    g0.cpus = {0, 1, 2, 3, 4, 5, 6, 7};
    g0.partitions = {mig("MIG-aaaaaaaa-0000-0000-0000-000000000001", "3g.40gb", 1, 0, 0),
                     mig("MIG-aaaaaaaa-0000-0000-0000-000000000009", "1g.10gb", 9, 0, 0),
                     mig("MIG-aaaaaaaa-0000-0000-0000-000000000010", "1g.10gb", 10, 0, 0)};
    Gpu g1;
    g1.vendor = Vendor::Nvidia;
    g1.model = "NVIDIA A100-SXM4-80GB";
    g1.uuid = "GPU-11111111-1111-1111-1111-111111111111";
    g1.index = 1;
    g1.minor = 1;
    g1.mode = PartitionMode::Full;
    g1.cpus = {8, 9, 10, 11, 12, 13, 14, 15};
    Partition whole;
    whole.uuid = g1.uuid;
    whole.type = "a100-sxm4-80gb";
    whole.device_files = nvidia_shared();
    whole.device_files.push_back(dev("/dev/nvidia1", 195, 1));
    g1.partitions = {whole};
    n.gpus = {g0, g1};
    return n;
}

Node amd_cpx_node(int xcps) {
    Node n;
    Gpu g;
    g.vendor = Vendor::Amd;
    g.model = "MI300X";
    g.uuid = "GPU-4f2e1c5a9b7d3e01";
    g.pci_bus_id = "0000:05:00.0";
    g.index = 0;
    g.minor = 128;
    g.mode = PartitionMode::Cpx;
    g.memory_mode = "NPS4";
    g.cpus = {16, 17, 18, 19};
    for (int i = xcps - 1; i >= 0; --i) {
        Partition p;
        p.uuid = g.uuid;
        p.type = "cpx";
        p.index = i;
        p.kfd_node = 2 + i;
        p.device_files = {dev("/dev/kfd", 511, 0, true),
                          dev("/dev/dri/renderD" + std::to_string(128 + i), 226,
                              static_cast<unsigned>(128 + i))};
        g.partitions.push_back(p);
    }
    n.gpus = {g};
    return n;
}

Node mixed_node() {
    Node n = mig_node();
    Node a = amd_cpx_node();
    n.gpus.push_back(a.gpus[0]);
    return n;
}

}  // namespace xpart::test
