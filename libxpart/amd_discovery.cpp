// PLACEHOLDER until the AMD discovery lands: finds no GPUs.
#include "libxpart/discovery.hpp"
namespace xpart {
Result<std::vector<Gpu>> discover_amd(const DiscoveryOptions&) { return std::vector<Gpu>{}; }
}  // namespace xpart
