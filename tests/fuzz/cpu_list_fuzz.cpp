// Kernel CPU lists (sysfs local_cpulist, cpuset files, gres.conf Cores=).
#include "libxpart/text.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(cpu_list) {
    auto cpus = xpart::parse_cpu_list(xpart::fuzz::text_of(data, size));
    if (!cpus) return;
    // parse(format(cpus)) == cpus: the list is sorted and unique.
    auto again = xpart::parse_cpu_list(xpart::format_cpu_list(*cpus));
    XPART_FUZZ_CHECK(again && *again == *cpus);
}
