// KFD topology `properties` files (nodes, mem_banks, io_links).
#include "libxpart/amd/amd_kfd.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(kfd_properties) {
    auto p = xpart::KfdProperties::parse(xpart::fuzz::text_of(data, size), "properties");
    if (p) (void)p->get_or("simd_count", 0);
}
