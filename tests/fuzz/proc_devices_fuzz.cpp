// /proc/devices (character majors of nvidia-caps, nvidia-uvm, kfd).
#include "libxpart/proc_devices.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(proc_devices) {
    auto m = xpart::CharMajors::parse(xpart::fuzz::text_of(data, size), "/proc/devices");
    if (m) (void)m->require("nvidia-caps");
}
