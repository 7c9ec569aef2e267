// The NVIDIA driver's procfs files discovery cross-checks NVML against: the per-GPU
// information file, the static table of MIG capability minors, the per-instance capability
// files. Every error names the file (host path), the line and the value.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// `Device Minor` of /proc/driver/nvidia/gpus/<bdf>/information (bdf lower-case, sysfs form).
Result<unsigned> read_nvidia_device_minor(const RootFs& root, const std::string& bdf);

// /proc/driver/nvidia-caps/mig-minors: "<name> <minor>" for every possible capability
// ("config 1", "monitor 2", "gpu0/gi0/access 3", "gpu0/gi0/ci0/access 4", ...).
class MigMinorTable {
public:
    static constexpr const char* kPath = "/proc/driver/nvidia-caps/mig-minors";
    static Result<MigMinorTable> load(const RootFs& root);
    static Result<MigMinorTable> parse(std::string text, const std::string& file);

    const std::string& file() const { return file_; }
    // Error naming the table and the entry when absent.
    Result<unsigned> minor(const std::string& name) const;

private:
    std::string file_;
    std::shared_ptr<const std::string> text_;  // owns the characters the keys point into
    std::unordered_map<std::string_view, unsigned> minors_;
};

// The node path of an instance's capability file ("/proc/driver/nvidia/capabilities/gpu0/mig/
// gi1/access"; ci >= 0 adds "ci<ci>/").
std::string mig_capability_path(unsigned gpu_minor, unsigned gi, int ci);
// Its table name ("gpu0/gi1/access", "gpu0/gi1/ci2/access").
std::string mig_capability_name(unsigned gpu_minor, unsigned gi, int ci);
// `DeviceFileMinor:` of a capability file.
Result<unsigned> read_capability_minor(const RootFs& root, const std::string& node_path);
// `DeviceFileMode:` of a capability file (decimal, as the driver writes it: 292 is 0444).
Result<unsigned> read_capability_mode(const RootFs& root, const std::string& node_path);

// The cap minor of a MIG instance: table entry and capability file must agree, and both must
// follow the driver's documented layout (3 + 135*G + 9*GI [+ 1 + CI]), else an Error naming
// the files and the values.
Result<unsigned> mig_capability_minor(const RootFs& root, const MigMinorTable& table,
                                      unsigned gpu_minor, unsigned gi, int ci);

}  // namespace xpart
