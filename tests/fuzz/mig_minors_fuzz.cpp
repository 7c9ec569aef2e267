// /proc/driver/nvidia-caps/mig-minors.
#include "libxpart/nvidia/nvidia_procfs.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(mig_minors) {
    auto t = xpart::MigMinorTable::parse(xpart::fuzz::text_of(data, size), "mig-minors");
    if (!t) return;
    (void)t->minor("config");
    (void)t->minor(xpart::mig_capability_name(0, 1, 0));
}
