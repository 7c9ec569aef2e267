#include "libxpart/nvidia/nvidia_presence.hpp"

#include <cstdlib>
#include <string>

#include "libxpart/text.hpp"

namespace xpart {

namespace {

constexpr const char* kDriverGpus = "/proc/driver/nvidia/gpus";
constexpr const char* kPciDevices = "/sys/bus/pci/devices";
constexpr const char* kNvidiaVendor = "0x10de";
constexpr unsigned long kClassVga = 0x0300;  // PCI base class and subclass, without prog-if
constexpr unsigned long kClass3d = 0x0302;

bool driver_lists_gpus(const RootFs& root) {
    auto entries = root.list(kDriverGpus);
    return entries && !entries->empty();
}

bool is_nvidia_gpu(const RootFs& root, const std::string& device_dir) {
    auto vendor = root.read(device_dir + "/vendor");
    if (!vendor || to_lower(trim(*vendor)) != kNvidiaVendor) return false;
    auto pci_class = root.read(device_dir + "/class");  // "0x030200"
    if (!pci_class) return true;
    const std::string text = trim(*pci_class);
    char* end = nullptr;
    const unsigned long code = std::strtoul(text.c_str(), &end, 16) >> 8;
    if (text.empty() || *end != '\0') return true;
    return code == kClassVga || code == kClass3d;
}

}  // namespace

bool has_nvidia_gpus(const RootFs& root) {
    if (driver_lists_gpus(root)) return true;
    auto devices = root.list(kPciDevices);
    if (!devices) return false;
    for (const std::string& bdf : *devices)
        if (is_nvidia_gpu(root, std::string(kPciDevices) + "/" + bdf)) return true;
    return false;
}

}  // namespace xpart
