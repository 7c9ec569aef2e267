// PLACEHOLDER until the NVIDIA discovery lands: finds no GPUs.
#include "libxpart/discovery.hpp"
namespace xpart {
Result<std::vector<Gpu>> discover_nvidia(const DiscoveryOptions&) { return std::vector<Gpu>{}; }
}  // namespace xpart
