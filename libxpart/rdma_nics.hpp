// RDMA NICs (InfiniBand HCAs, RoCE NICs) and, for each GPU, which of them to use for
// GPUDirect RDMA: read from /sys/class/infiniband through the root prefix and placed in the
// PCIe tree (pci_topology.hpp).
#pragma once

#include <string>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/pci_topology.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// Every RDMA device of the node in PCI order (numa_node left -1: attach_rdma_nics reads it
// with the device's PCI location). A node without /sys/class/infiniband has none; a device
// whose files cannot be read is left out with one line in `warnings`.
std::vector<RdmaNic> discover_rdma_nics(const RootFs& root, std::vector<std::string>& warnings);

// Gpu::nics for every GPU: usable NICs (an ACTIVE port) by path class; at equal class the
// NIC fewer GPUs already have first (GPUs taken in PCI order), then PCI order. `gpus` and
// `nics` are parallel to node.gpus and node.nics. A GPU whose nearest NIC is across sockets
// gives one line in node.warnings (kNoNearNic), as does a NIC with no ACTIVE port.
void assign_nic_routes(Node& node, const std::vector<PciLocation>& gpus,
                       const std::vector<PciLocation>& nics);
extern const char* const kNoNearNic;

// Both of the above through the root prefix: node.nics and every Gpu::nics.
void attach_rdma_nics(const RootFs& root, Node& node);

}  // namespace xpart
