#include "cgroup/layout.hpp"

#include <vector>

#include "libxpart/text.hpp"

namespace xpart::cgroup {

const char* to_string(Hierarchy h) { return h == Hierarchy::V1 ? "v1" : "v2"; }
const char* to_string(LayoutKind k) {
    return k == LayoutKind::V1 ? "v1" : k == LayoutKind::V2 ? "v2" : "hybrid";
}

namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
            s[i + 3] >= '0' && s[i + 3] <= '7') {
            out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
            i += 3;
        } else {
            out += s[i];
        }
    }
    return out;
}

std::vector<std::string> words(const std::string& line) {
    std::vector<std::string> out;
    for (auto& w : split(line, ' '))
        if (!w.empty()) out.push_back(w);
    return out;
}

bool has_option(const std::string& options, const char* name) {
    for (const auto& o : split(options, ','))
        if (o == name) return true;
    return false;
}

// mount point + (cgroup path relative to the mount's root). A path outside the mount's root
// (another namespace's view) cannot be reached from here.
Result<std::string> own_dir(const std::string& mount, const std::string& mount_root,
                            const std::string& path, const std::string& file) {
    std::string rel = path;
    if (mount_root != "/") {
        if (path.compare(0, mount_root.size(), mount_root) != 0 ||
            (path.size() > mount_root.size() && path[mount_root.size()] != '/'))
            return Error{file + ": cgroup '" + path + "' is outside the mount root '" + mount_root + "'"};
        rel = path.substr(mount_root.size());
    }
    if (rel.empty() || rel == "/") return mount;
    return mount + rel;
}

}  // namespace

Result<CgroupLayout> parse_cgroup_layout(const std::string& mountinfo, const std::string& self_cgroup,
                                         const std::string& mountinfo_file,
                                         const std::string& cgroup_file) {
    std::string v1_mount, v1_root, v2_mount, v2_root;
    unsigned lineno = 0;
    for (const auto& line : split(mountinfo, '\n')) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto w = words(line);
        // id parent maj:min root mountpoint options [optional...] - fstype source superoptions
        std::size_t dash = 6;
        while (dash < w.size() && w[dash] != "-") ++dash;
        if (w.size() < 7 || dash + 2 >= w.size())
            return file_error(mountinfo_file, lineno, "malformed mount line '" + line + "'");
        const std::string& fstype = w[dash + 1];
        const std::string superopts = dash + 3 < w.size() ? w[dash + 3] : "";
        if (fstype == "cgroup" && has_option(superopts, "devices")) {
            v1_root = unescape(w[3]);
            v1_mount = unescape(w[4]);
        } else if (fstype == "cgroup2") {
            v2_root = unescape(w[3]);
            v2_mount = unescape(w[4]);
        }
    }
    if (v1_mount.empty() && v2_mount.empty())
        return Error{mountinfo_file + ": no cgroup v1 devices controller and no cgroup2 mount: "
                     "device rules cannot be enforced"};
    CgroupLayout layout;
    layout.kind = v1_mount.empty() ? LayoutKind::V2 : v2_mount.empty() ? LayoutKind::V1 : LayoutKind::Hybrid;
    layout.v1_devices_mount = v1_mount;
    layout.v2_mount = v2_mount;
    lineno = 0;
    for (const auto& line : split(self_cgroup, '\n')) {
        ++lineno;
        if (trim(line).empty()) continue;
        // hierarchy-id:controller-list:path (the path may itself contain ':')
        auto c1 = line.find(':');
        auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string::npos)
            return file_error(cgroup_file, lineno, "malformed line '" + line + "'");
        const std::string id = line.substr(0, c1);
        const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string path = line.substr(c2 + 1);
        if (!v1_mount.empty() && has_option(controllers, "devices")) {
            auto dir = own_dir(v1_mount, v1_root, path, cgroup_file);
            if (!dir) return dir.error();
            layout.v1_devices_own = *dir;
        } else if (!v2_mount.empty() && id == "0" && controllers.empty()) {
            auto dir = own_dir(v2_mount, v2_root, path, cgroup_file);
            if (!dir) return dir.error();
            layout.v2_own = *dir;
        }
    }
    if (!v1_mount.empty() && layout.v1_devices_own.empty())
        return Error{cgroup_file + ": no 'devices' line although " + mountinfo_file +
                     " mounts the devices controller at " + v1_mount};
    if (!v2_mount.empty() && layout.v2_own.empty())
        return Error{cgroup_file + ": no '0::' line although " + mountinfo_file +
                     " mounts cgroup2 at " + v2_mount};
    return layout;
}

Result<CgroupLayout> detect_cgroup_layout(const RootFs& root) {
    auto mountinfo = root.read("/proc/self/mountinfo");
    if (!mountinfo) return mountinfo.error();
    auto self = root.read("/proc/self/cgroup");
    if (!self) return self.error();
    return parse_cgroup_layout(*mountinfo, *self, root.host_path("/proc/self/mountinfo"),
                               root.host_path("/proc/self/cgroup"));
}

}  // namespace xpart::cgroup
