#include "mps/private_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace xpart::mps {

std::string user_runtime_base(uid_t uid) { return "/tmp/xpart-mps-" + std::to_string(uid); }

Status make_private_dir(const std::string& dir) {
    if (mkdir(dir.c_str(), 0700) == 0) return ok_status();
    if (errno != EEXIST) return Error{dir + ": mkdir: " + std::strerror(errno)};
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) return Error{dir + ": " + std::strerror(errno)};
    if (!S_ISDIR(st.st_mode)) return Error{dir + ": exists and is not a directory"};
    if (st.st_uid != geteuid())
        return Error{dir + ": owned by uid " + std::to_string(st.st_uid) + ", expected " +
                     std::to_string(geteuid())};
    if ((st.st_mode & 077) != 0)
        return Error{dir + ": mode " + mode_text(st.st_mode) + " is open to others; expected 0700"};
    return ok_status();
}

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

}  // namespace xpart::mps
