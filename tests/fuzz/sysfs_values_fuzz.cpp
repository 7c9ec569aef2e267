// One-value sysfs files and paths: AMD current_compute_partition and current_memory_partition,
// PCI device paths (link targets), partition mode and PCI path names, decimal numbers.
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/pci_topology.hpp"
#include "libxpart/text.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(sysfs_values) {
    const std::string text = xpart::fuzz::text_of(data, size);
    (void)xpart::parse_amd_compute_partition(text);
    (void)xpart::parse_amd_memory_partition(text);
    (void)xpart::parse_partition_mode(text);
    (void)xpart::parse_pci_path(text);
    (void)xpart::parse_u64(text);
    xpart::PciLocation loc;
    xpart::parse_pci_device_path(text, loc);
}
