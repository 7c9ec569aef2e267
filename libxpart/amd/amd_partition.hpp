// AMD compute partitions: the mode of a GPU (from the PCI attribute, or inferred from KFD
// topology when the attribute is absent), GRES type names, and the render-node ownership check.
#pragma once

#include <optional>
#include <string>

#include "libxpart/amd/amd_models.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart {

// `current_compute_partition` content ("CPX\n"): SPX|DPX|TPX|QPX|CPX, nothing else.
std::optional<PartitionMode> parse_amd_compute_partition(const std::string& text);
// `current_memory_partition` content: "NPS1".."NPS8" (upper-cased), nothing else.
std::optional<std::string> parse_amd_memory_partition(const std::string& text);

// Partitions a mode makes of a GPU: SPX 1, DPX 2, TPX 3, QPX 4, CPX one per XCC.
unsigned amd_mode_partition_count(PartitionMode mode, const AmdModel& model);

// The mode of a GPU without the PCI attribute, from its model and the XCCs per partition
// (`num_xcc`, 0 when not reported) and the number of partitions KFD shows.
// Unpartitionable models -> Full. One XCC per partition on a multi-XCC GPU -> CPX (on a 4-XCC
// MI308X four partitions of one XCC are CPX too: that is what the driver calls them). Unknown
// models: one node -> Full, else by the node count (2 DPX, 3 TPX, 4 QPX, more CPX).
// Error when num_xcc does not divide the model's XCC count (a topology that cannot be).
Result<PartitionMode> infer_amd_mode(const AmdModel* model, unsigned num_xcc,
                                     std::size_t nodes_present);

// GRES type of an AMD partition: "cpx", "cpx.nps4", "mi300x.cpx.nps4"; Full GPUs are the
// lower-case model ("mi210") whatever the naming.
std::string amd_partition_type(AmdTypeNaming naming, PartitionMode mode,
                               const std::string& memory_mode, const std::string& model);

// Ownership of a render node: the target of /sys/class/drm/renderD<minor>/device must end in
// the GPU's PCI device (partition 0) or in a platform device amdgpu_xcp.N (older kernels) or
// amdgpu_xcp_N (newer) for the other partitions. `link` names the link in the error.
Status check_amd_render_link(const std::string& target, const std::string& pci_bus_id,
                             int partition_index, const std::string& link);

}  // namespace xpart
