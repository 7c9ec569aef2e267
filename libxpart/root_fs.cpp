#include "libxpart/root_fs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xpart {

RootFs::RootFs(std::string root) : root_(std::move(root)) {
    if (root_.empty()) root_ = "/";
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

RootFs RootFs::from_env() {
    const char* r = std::getenv("XPART_ROOT");
    return RootFs(r && *r ? r : "/");
}

std::string RootFs::host_path(std::string_view node_path) const {
    if (is_real_root()) return std::string(node_path);
    std::string out = root_;
    if (node_path.empty() || node_path.front() != '/') out += '/';
    out += node_path;
    return out;
}

Result<std::string> RootFs::read(std::string_view node_path) const {
    const std::string path = host_path(node_path);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error(path, errno);
    std::string out;
    char buf[8192];
    // Under /sys a read() that returns less than asked is the end of the file, so an attribute
    // takes one read() instead of a second one returning 0 (issue #12): sysfs makes an
    // attribute in one show() call and returns it whole, and a regular file (a simulated or
    // recorded root) returns short only at its end. procfs seq_files of many records return at
    // most a page per read() (/proc/devices, /proc/self/mountinfo), so /proc reads on to 0.
    const bool short_read_ends = node_path.rfind("/sys/", 0) == 0;
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int err = errno;
            ::close(fd);
            return errno_error(path, err);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (short_read_ends && static_cast<std::size_t>(n) < sizeof buf) break;
    }
    ::close(fd);
    return out;
}

bool RootFs::exists(std::string_view node_path) const {
    struct stat st;
    return ::stat(host_path(node_path).c_str(), &st) == 0;
}

Result<std::vector<std::string>> RootFs::list(std::string_view node_dir) const {
    const std::string path = host_path(node_dir);
    DIR* d = ::opendir(path.c_str());
    if (!d) return errno_error(path, errno);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
        if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
        names.emplace_back(e->d_name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

Result<std::string> RootFs::read_link(std::string_view node_path) const {
    const std::string path = host_path(node_path);
    char buf[4096];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
    if (n < 0) return errno_error(path, errno);
    return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace xpart
