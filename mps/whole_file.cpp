#include "mps/whole_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "libxpart/unique_fd.hpp"

namespace xpart::mps {

Result<std::optional<std::string>> read_whole_file(int dir_fd, const std::string& name,
                                                   const std::string& shown) {
    UniqueFd fd(openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) {
        if (errno == ENOENT) return std::optional<std::string>();
        return Error{shown + ": " + std::strerror(errno)};
    }
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    if (n < 0) return Error{shown + ": read: " + std::strerror(errno)};
    return std::optional<std::string>(std::move(out));
}

Status write_whole_file(int dir_fd, const std::string& name, const std::string& content,
                        mode_t mode, const std::string& shown) {
    const std::string tmp = name + ".new";
    unlinkat(dir_fd, tmp.c_str(), 0);
    UniqueFd fd(openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd.valid()) return Error{shown + ": " + std::strerror(errno)};
    if (fchmod(fd.get(), mode) != 0 ||
        write(fd.get(), content.data(), content.size()) != static_cast<ssize_t>(content.size()))
        return Error{shown + ": write: " + std::strerror(errno)};
    fd.reset();
    if (renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0)
        return Error{shown + ": rename: " + std::strerror(errno)};
    return ok_status();
}

}  // namespace xpart::mps
