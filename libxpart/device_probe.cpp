#include "libxpart/device_probe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace xpart {

bool device_openable(const std::string& host_path, bool write) {
    int fd = ::open(host_path.c_str(), (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        ::close(fd);
        return true;
    }
    return errno != EPERM && errno != EACCES && errno != ENOENT;
}

bool device_denied(const std::string& host_path) {
    int fd = ::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) ::close(fd);
    return fd < 0 && errno == EPERM;
}

}  // namespace xpart
