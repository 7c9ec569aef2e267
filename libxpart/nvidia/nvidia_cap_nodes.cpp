#include "libxpart/nvidia/nvidia_cap_nodes.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <cstring>

#include "libxpart/nvidia/nvidia_procfs.hpp"
#include "libxpart/proc_devices.hpp"

namespace xpart {

namespace {

constexpr unsigned kModeMask = 0777;

Status make_node(const RootFs& root, const std::string& node_path, unsigned major, unsigned minor,
                 unsigned mode) {
    const std::string host = root.host_path(node_path);
    struct stat st {};
    if (::lstat(host.c_str(), &st) == 0) {
        if (S_ISCHR(st.st_mode) && ::major(st.st_rdev) == major && ::minor(st.st_rdev) == minor)
            return ok_status();
        return Error{host + ": exists but is not the character device " + std::to_string(major) +
                     ":" + std::to_string(minor) + " (left as it is)"};
    }
    const std::string dir = host.substr(0, host.rfind('/'));
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        return Error{dir + ": mkdir: " + std::strerror(errno)};
    if (::mknod(host.c_str(), S_IFCHR | mode, ::makedev(major, minor)) != 0)
        return Error{host + ": mknod " + std::to_string(major) + ":" + std::to_string(minor) + ": " +
                     std::strerror(errno)};
    if (::chmod(host.c_str(), mode) != 0)  // mknod honours the umask; the mode must be the driver's
        return Error{host + ": chmod: " + std::strerror(errno)};
    return ok_status();
}

}  // namespace

Result<unsigned> make_missing_cap_nodes(const RootFs& root, const Gpu& gpu) {
    if (gpu.minor < 0) return 0u;
    auto majors = CharMajors::load(root);
    if (!majors) return majors.error();
    auto caps = majors->require("nvidia-caps");
    if (!caps) return caps.error();
    unsigned made = 0;
    for (const Partition& p : gpu.partitions) {
        if (p.gi < 0) continue;
        std::vector<int> levels = {-1};  // the GPU instance's access, then the compute instance's
        if (p.ci >= 0) levels.push_back(p.ci);
        for (int ci : levels) {
            const std::string cap = mig_capability_path(static_cast<unsigned>(gpu.minor),
                                                        static_cast<unsigned>(p.gi), ci);
            auto minor = read_capability_minor(root, cap);
            if (!minor) return minor.error();
            auto mode = read_capability_mode(root, cap);
            if (!mode) return mode.error();
            const std::string node = "/dev/nvidia-caps/nvidia-cap" + std::to_string(*minor);
            const bool existed = root.exists(node);
            if (auto st = make_node(root, node, *caps, *minor, *mode & kModeMask); !st) return st.error();
            if (!existed) ++made;
        }
    }
    return made;
}

}  // namespace xpart
