// /proc/driver/nvidia/gpus/<bdf>/information and a MIG capability file (`DeviceFileMinor:`),
// read through a RootFs as discovery reads them.
#include "libxpart/nvidia/nvidia_procfs.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(nvidia_information) {
    const std::string text = xpart::fuzz::text_of(data, size);
    const std::string info = "/proc/driver/nvidia/gpus/0000:07:00.0/information";
    const std::string cap = "/proc/driver/nvidia/capabilities/gpu0/mig/gi1/access";
    xpart::fuzz::temp_root_with(info, text);
    const xpart::RootFs root(xpart::fuzz::temp_root_with(cap, text));
    (void)xpart::read_nvidia_device_minor(root, "0000:07:00.0");
    (void)xpart::read_capability_minor(root, cap);
}
