#include "sim/nvidia_install.hpp"

#include <sys/stat.h>

#include "libxpart/root_fs.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

std::string fake_nvml_path(const std::string& root) {
    return root + kFakeNvmlDir + "/libnvidia-ml.so.1";
}

Status install_fake_nvml(const std::string& spec_file, const std::string& library,
                         const std::string& root) {
    RootFs host("/");
    auto lib = host.read(library);
    if (!lib) return Error{"fake NVML library: " + lib.error().message};
    auto spec = host.read(spec_file);
    if (!spec) return spec.error();
    TreeWriter tree(root);
    const std::string dir = kFakeNvmlDir;
    if (auto st = tree.write_file(dir + "/libnvidia-ml.so.1", *lib); !st) return st;
    ::chmod(fake_nvml_path(root).c_str(), 0755);
    return tree.write_file(dir + "/nvml-spec.json", *spec);
}

}  // namespace xpart::sim
