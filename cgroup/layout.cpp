#include "cgroup/layout.hpp"

#include <optional>
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

bool has_option(const std::string& options, const char* name) {
    for (const auto& o : split(options, ','))
        if (o == name) return true;
    return false;
}

struct CgroupMount {
    std::string root;   // the hierarchy's directory seen at the mount point
    std::string point;  // where it is mounted
};

// mount point + (cgroup path relative to the mount's root), or nothing when the path is
// outside the mount's root (another namespace's view).
std::optional<std::string> own_dir(const CgroupMount& m, const std::string& path) {
    std::string rel = path;
    if (m.root != "/") {
        if (path.compare(0, m.root.size(), m.root) != 0 ||
            (path.size() > m.root.size() && path[m.root.size()] != '/'))
            return std::nullopt;
        rel = path.substr(m.root.size());
    }
    if (rel.empty() || rel == "/") return m.point;
    return m.point + rel;
}

bool under_sys_fs_cgroup(const std::string& point) {
    return point == "/sys/fs/cgroup" || point.rfind("/sys/fs/cgroup/", 0) == 0;
}

// The token /proc/<pid>/cgroup names a v1 hierarchy by: its first controller among the
// mount's super options (the rest are mount options), or its name= for a named hierarchy.
std::string v1_controller(const std::string& superopts) {
    static const char* const kControllers[] = {"cpuset", "cpu",   "cpuacct",    "blkio", "memory",
                                               "devices", "freezer", "net_cls", "perf_event",
                                               "net_prio", "hugetlb", "pids", "rdma", "misc"};
    for (const auto& o : split(superopts, ',')) {
        if (o.rfind("name=", 0) == 0) return o;
        for (const char* c : kControllers)
            if (o == c) return o;
    }
    return "";
}

// One entry per hierarchy (its controller token), whole-tree mounts only; the mount under
// /sys/fs/cgroup wins over another of the same hierarchy.
void add_v1_hierarchy(std::vector<MountedHierarchy>& out, const std::string& root, const std::string& point,
                      const std::string& superopts) {
    const std::string controller = v1_controller(superopts);
    if (controller.empty() || root != "/") return;
    for (auto& h : out)
        if (h.controller == controller) {
            if (!under_sys_fs_cgroup(h.mount) && under_sys_fs_cgroup(point)) h.mount = point;
            return;
        }
    out.push_back({point, controller});
}

// The mount a process's cgroup `path` is reached through when a hierarchy is mounted more than
// once (a chroot, schroot or container runtime bind-mounting /sys in this namespace): the one
// /sys/fs/cgroup leads to, the last mounted there when mounts stack (it hides the others),
// else the first mounted; only mounts whose root holds the path count. Sets mount and own.
Status choose_mount(const std::vector<CgroupMount>& mounts, const std::string& path, const std::string& file,
                    std::string& mount, std::string& own) {
    const CgroupMount *canonical = nullptr, *first = nullptr;
    for (const auto& m : mounts) {
        if (!own_dir(m, path)) continue;
        if (under_sys_fs_cgroup(m.point)) canonical = &m;
        if (!first) first = &m;
    }
    const CgroupMount* chosen = canonical ? canonical : first;
    if (!chosen)
        return Error{file + ": cgroup '" + path + "' is outside the mount root '" + mounts.front().root + "'"};
    mount = chosen->point;
    own = *own_dir(*chosen, path);
    return ok_status();
}

}  // namespace

Result<CgroupLayout> parse_cgroup_layout(const std::string& mountinfo, const std::string& self_cgroup,
                                         const std::string& mountinfo_file,
                                         const std::string& cgroup_file) {
    std::vector<CgroupMount> v1_mounts, v2_mounts;
    std::vector<MountedHierarchy> v1_all;
    unsigned lineno = 0;
    for (const auto& line : split(mountinfo, '\n')) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto w = split_words(line);
        // id parent maj:min root mountpoint options [optional...] - fstype source superoptions
        std::size_t dash = 6;
        while (dash < w.size() && w[dash] != "-") ++dash;
        if (w.size() < 7 || dash + 2 >= w.size())
            return file_error(mountinfo_file, lineno, "malformed mount line '" + line + "'");
        const std::string& fstype = w[dash + 1];
        const std::string superopts = dash + 3 < w.size() ? w[dash + 3] : "";
        if (fstype == "cgroup") add_v1_hierarchy(v1_all, unescape(w[3]), unescape(w[4]), superopts);
        if (fstype == "cgroup" && has_option(superopts, "devices"))
            v1_mounts.push_back({unescape(w[3]), unescape(w[4])});
        else if (fstype == "cgroup2")
            v2_mounts.push_back({unescape(w[3]), unescape(w[4])});
    }
    if (v1_mounts.empty() && v2_mounts.empty())
        return Error{mountinfo_file + ": no cgroup v1 devices controller and no cgroup2 mount: "
                     "device rules cannot be enforced"};
    CgroupLayout layout;
    layout.v1_hierarchies = std::move(v1_all);
    layout.kind = v1_mounts.empty() ? LayoutKind::V2 : v2_mounts.empty() ? LayoutKind::V1 : LayoutKind::Hybrid;
    std::optional<std::string> v1_path, v2_path;
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
        if (!v1_mounts.empty() && has_option(controllers, "devices"))
            v1_path = path;
        else if (!v2_mounts.empty() && id == "0" && controllers.empty())
            v2_path = path;
    }
    if (!v1_mounts.empty() && !v1_path)
        return Error{cgroup_file + ": no 'devices' line although " + mountinfo_file +
                     " mounts the devices controller at " + v1_mounts.front().point};
    if (!v2_mounts.empty() && !v2_path)
        return Error{cgroup_file + ": no '0::' line although " + mountinfo_file +
                     " mounts cgroup2 at " + v2_mounts.front().point};
    if (v1_path)
        if (auto s = choose_mount(v1_mounts, *v1_path, cgroup_file, layout.v1_devices_mount, layout.v1_devices_own); !s)
            return s.error();
    if (v2_path)
        if (auto s = choose_mount(v2_mounts, *v2_path, cgroup_file, layout.v2_mount, layout.v2_own); !s)
            return s.error();
    return layout;
}

std::vector<MountedHierarchy> CgroupLayout::all_hierarchies() const {
    std::vector<MountedHierarchy> out = v1_hierarchies;
    if (has(Hierarchy::V2)) out.push_back(mounted(Hierarchy::V2));
    return out;
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
