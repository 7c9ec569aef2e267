// Test helper: every entry of a tree (file content, link target, device numbers, mode bits) as
// one line of text per node path, and the difference of two such snapshots in words.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace xpart::testing {

using TreeSnapshot = std::map<std::string, std::string>;  // node path -> what is there

namespace detail {
inline void snapshot_into(const std::string& root, const std::string& node_dir, TreeSnapshot& out) {
    DIR* d = ::opendir((root + node_dir).c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
        const std::string path = node_dir + "/" + e->d_name, host = root + path;
        struct stat st {};
        if (::lstat(host.c_str(), &st) != 0) continue;
        std::ostringstream what;
        what << std::oct << (st.st_mode & 07777) << std::dec << " ";
        if (S_ISDIR(st.st_mode)) {
            what << "dir";
            snapshot_into(root, path, out);
        } else if (S_ISLNK(st.st_mode)) {
            char buf[4096];
            const ssize_t n = ::readlink(host.c_str(), buf, sizeof buf);
            what << "link -> " << std::string(buf, n < 0 ? 0 : static_cast<std::size_t>(n));
        } else if (S_ISCHR(st.st_mode)) {
            what << "char " << major(st.st_rdev) << ":" << minor(st.st_rdev);
        } else {
            std::ifstream in(host);
            what << "file " << in.rdbuf();
        }
        out[path] = what.str();
    }
    ::closedir(d);
}
}  // namespace detail

// The tree under `root` without the node paths in `ignore`.
inline TreeSnapshot snapshot_tree(const std::string& root, const std::set<std::string>& ignore = {}) {
    TreeSnapshot out;
    detail::snapshot_into(root, "", out);
    for (const auto& path : ignore) out.erase(path);
    return out;
}

// "" when equal, else one line per differing path (the first 20).
inline std::string tree_diff(const TreeSnapshot& got, const TreeSnapshot& want) {
    std::string out;
    unsigned shown = 0;
    auto note = [&](const std::string& line) {
        if (shown++ < 20) out += line + "\n";
    };
    for (const auto& [path, what] : got) {
        auto w = want.find(path);
        if (w == want.end()) note("extra " + path + ": " + what.substr(0, 60));
        else if (w->second != what) note("differs " + path + ": " + what.substr(0, 60) + " | want " + w->second.substr(0, 60));
    }
    for (const auto& [path, what] : want)
        if (!got.count(path)) note("missing " + path + ": " + what.substr(0, 60));
    if (shown > 20) out += "... " + std::to_string(shown - 20) + " more\n";
    return out;
}

}  // namespace xpart::testing
