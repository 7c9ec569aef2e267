#include "cgroup/cgroup_dirs.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace xpart::cgroup {

Result<std::vector<std::string>> child_dirs(const std::string& dir) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) return Error{"cannot list cgroup " + dir + ": " + std::strerror(errno)};
    std::vector<std::string> out;
    while (const dirent* e = ::readdir(d.get())) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        bool is_dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st {};
            is_dir = ::lstat((dir + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        }
        if (is_dir) out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool is_cgroup_dir(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace xpart::cgroup
