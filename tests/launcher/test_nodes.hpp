// Hand-built nodes for the launcher tests (the shapes discovery produces).
#pragma once

#include <cstdio>
#include <string>

#include "libxpart/node.hpp"

namespace xpart::launch::testing {

// DGX A100 bus ids, 4 GPUs per socket (matches topologies/dgx-a100.xml).
inline const char* const kDgxBusIds[8] = {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0",
                                          "0000:4e:00.0", "0000:87:00.0", "0000:90:00.0",
                                          "0000:b7:00.0", "0000:bd:00.0"};

inline std::string mig_uuid(int gpu, int gi) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "MIG-%08x-0000-5000-8000-%012x", 0xa100 + gpu, gi);
    return buf;
}

inline std::string gpu_uuid(int gpu) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "GPU-%08x-1111-2222-3333-%012x", 0xa100 + gpu, gpu);
    return buf;
}

// 8 A100s; GPUs below `mig_gpus` are in MIG mode with `per_gpu` 1g.5gb instances (gi 7..),
// the others are whole GPUs. Discovery's locality deliberately disagrees with the XML
// (NUMA node 9) so tests can tell which one the plan used.
inline Node dgx_a100(int mig_gpus = 8, int per_gpu = 1) {
    Node node;
    for (int g = 0; g < 8; ++g) {
        Gpu gpu;
        gpu.vendor = Vendor::Nvidia;
        gpu.model = "NVIDIA A100-SXM4-40GB";
        gpu.uuid = gpu_uuid(g);
        gpu.pci_bus_id = kDgxBusIds[g];
        gpu.index = g;
        gpu.minor = g;
        gpu.numa_node = 9;
        gpu.mode = g < mig_gpus ? PartitionMode::Mig : PartitionMode::Full;
        if (g < mig_gpus) {
            for (int p = 0; p < per_gpu; ++p) {
                Partition part;
                part.uuid = mig_uuid(g, 7 + p);
                part.type = "1g.5gb";
                part.gi = 7 + p;
                part.ci = 0;
                part.index = p;
                gpu.partitions.push_back(part);
            }
        } else {
            Partition whole;
            whole.uuid = gpu.uuid;
            whole.type = "a100-sxm4-40gb";
            whole.index = 0;
            gpu.partitions.push_back(whole);
        }
        node.gpus.push_back(gpu);
    }
    return node;
}

// One MI300X in CPX mode: 8 XCPs sharing one UUID (pre-ROCm 7), KFD nodes 2..9, render
// minors 128..135.
inline Node mi300x_cpx() {
    Node node;
    Gpu gpu;
    gpu.vendor = Vendor::Amd;
    gpu.model = "MI300X";
    gpu.uuid = "GPU-4c2a0b5e1f7d3c90";
    gpu.pci_bus_id = "0000:0c:00.0";
    gpu.index = 0;
    gpu.minor = 128;
    gpu.mode = PartitionMode::Cpx;
    gpu.numa_node = 0;
    for (int x = 0; x < 8; ++x) {
        Partition p;
        p.uuid = gpu.uuid;
        p.type = "cpx";
        p.index = x;
        p.kfd_node = 2 + x;
        p.device_files.push_back({"/dev/kfd", 235, 0, true});
        p.device_files.push_back({"/dev/dri/renderD" + std::to_string(128 + x), 226,
                                  static_cast<unsigned>(128 + x), false});
        gpu.partitions.push_back(p);
    }
    node.gpus.push_back(gpu);
    return node;
}

}  // namespace xpart::launch::testing
