// A hand-built node for tests of the node's consumers: GPU 0 an A100 in MIG mode (two MIG
// devices), GPU 1 a whole A100, GPU 2 an MI300X in CPX mode (two XCPs shown).
#pragma once

#include <string>

#include "libxpart/node.hpp"

namespace xpart::test_nodes {

inline DeviceFile dev(const std::string& path, unsigned major, unsigned minor, bool shared = false) {
    return DeviceFile{path, major, minor, shared};
}

inline Partition mig(const std::string& type, int gi, int ci, int index, unsigned cap_gi, unsigned cap_ci,
              const std::string& uuid) {
    Partition p;
    p.uuid = uuid;
    p.type = type;
    p.gi = gi;
    p.ci = ci;
    p.index = index;
    p.device_files = {dev("/dev/nvidia0", 195, 0),
                      dev("/dev/nvidia-caps/nvidia-cap" + std::to_string(cap_gi), 508, cap_gi),
                      dev("/dev/nvidia-caps/nvidia-cap" + std::to_string(cap_ci), 508, cap_ci),
                      dev("/dev/nvidiactl", 195, 255, true),
                      dev("/dev/nvidia-caps/nvidia-cap2", 508, 2, true)};
    return p;
}

inline Node hand_built_node() {
    Node node;
    Gpu a100;
    a100.model = "NVIDIA A100-SXM4-40GB";
    a100.uuid = "GPU-aaaa";
    a100.pci_bus_id = "0000:07:00.0";
    a100.index = 0;
    a100.minor = 0;
    a100.mode = PartitionMode::Mig;
    a100.cpus = {0, 1, 2, 3};
    a100.partitions = {mig("3g.20gb", 1, 0, 0, 12, 13, "MIG-1111"),
                       mig("1g.5gb", 7, 0, 1, 66, 67, "MIG-2222")};
    node.gpus.push_back(a100);

    Gpu whole;
    whole.model = "NVIDIA A100-SXM4-40GB";
    whole.uuid = "GPU-bbbb";
    whole.pci_bus_id = "0000:0f:00.0";
    whole.index = 1;
    whole.minor = 1;
    whole.cpus = {4, 5, 6, 7};
    Partition full;
    full.uuid = "GPU-bbbb";
    full.type = "a100-sxm4-40gb";
    full.device_files = {dev("/dev/nvidia1", 195, 1), dev("/dev/nvidiactl", 195, 255, true)};
    whole.partitions = {full};
    node.gpus.push_back(whole);

    Gpu mi300;
    mi300.vendor = Vendor::Amd;
    mi300.model = "MI300X";
    mi300.uuid = "GPU-cccc";
    mi300.pci_bus_id = "0000:11:00.0";
    mi300.mode = PartitionMode::Cpx;
    mi300.cpus = {8, 9, 10, 11};
    for (int i = 0; i < 2; ++i) {
        Partition x;
        x.uuid = "GPU-cccc";
        x.type = "cpx";
        x.index = i;
        x.device_files = {dev("/dev/dri/renderD" + std::to_string(128 + i), 226,
                              static_cast<unsigned>(128 + i)),
                          dev("/dev/kfd", 235, 0, true)};
        mi300.partitions.push_back(x);
    }
    node.gpus.push_back(mi300);
    return node;
}

}  // namespace xpart::test_nodes
