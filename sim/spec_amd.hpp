// AMD part of the simulator spec: Instinct GPUs with their compute/memory partition modes.
//   "amd": {"gpus": [{"model": "MI300X", "unique_id": 16404946649897475633,
//     "pci_bus_id": "0000:05:00.0", "numa_node": 0, "compute_partition": "CPX",
//     "memory_partition": "NPS4", "partitions_present": 7, "pci_attributes": true,
//     "xcp_naming": "dot", "hive_id": 15188982192727901047,
//     "switch": "sw0"}]}    // optional: the PCIe switch above it (spec_pcie.hpp)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libxpart/node.hpp"

namespace xpart::sim {

// How the platform devices of XCPs 1..N are named: amdgpu_xcp.N (older kernels) or
// amdgpu_xcp_N (newer).
enum class XcpNaming { Dot, Underscore };

struct AmdGpuSpec {
    std::string model;                      // "MI300X" (a name of libxpart/amd/amd_models.hpp)
    std::uint64_t unique_id = 0;
    unsigned domain = 0;
    unsigned bus = 0;                        // from pci_bus_id "dddd:bb:00.0"
    int numa_node = 0;
    PartitionMode compute_partition = PartitionMode::Full;  // Full for unpartitionable models
    std::string memory_partition;           // "NPS1".. ("" for unpartitionable models)
    unsigned partitions_present = 0;        // KFD nodes shown (fewer than the mode makes: a
                                            // GPU that lost some, as in a real capture)
    bool pci_attributes = true;             // write current/available_*_partition
    XcpNaming xcp_naming = XcpNaming::Dot;
    std::uint64_t hive_id = 0;              // XGMI hive (0: none)
    std::string switch_name;                // "" : below a host bridge of its own

    std::string pci_bus_id() const;         // "0000:05:00.0"
};

struct AmdSpec {
    std::vector<AmdGpuSpec> gpus;           // sorted by (domain, bus) after parsing
    bool empty() const { return gpus.empty(); }
};

// "SPX, DPX, QPX, CPX" (an AmdModel's mode list) contains "DPX"?
bool amd_mode_listed(const char* list, const std::string& item);
// A compute mode as the driver's sysfs attributes spell it: "CPX".
std::string amd_mode_name(PartitionMode mode);

}  // namespace xpart::sim
