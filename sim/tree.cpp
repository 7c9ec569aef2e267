#include "sim/tree.hpp"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "libxpart/text.hpp"

namespace xpart::sim {

namespace {
std::string parent_of(const std::string& path) {
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}
}  // namespace

bool TreeWriter::skip(const std::string& node_path) const {
    if (record_) record_->insert(node_path);
    if (dry_run_) return true;
    struct stat st {};
    return keep_.count(node_path) && ::lstat(host_path(node_path).c_str(), &st) == 0;
}

Status TreeWriter::make_dirs(const std::string& node_path) const {
    if (dry_run_) return ok_status();
    // Every component, the root's own included (mkdir -p): `xpart-sim build SPEC new/dir`.
    std::string host = host_path(node_path);
    for (std::size_t pos = 1; pos <= host.size(); ++pos) {
        if (pos != host.size() && host[pos] != '/') continue;
        std::string prefix = host.substr(0, pos);
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            return errno_error(prefix + ": mkdir", errno);
    }
    return ok_status();
}

Status TreeWriter::write_file(const std::string& node_path, const std::string& content) const {
    if (skip(node_path)) return ok_status();
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    std::ofstream out(host, std::ios::binary | std::ios::trunc);
    if (!out) return errno_error(host + ": open", errno);
    out << content;
    if (!out.flush()) return errno_error(host + ": write", errno);
    return ok_status();
}

Status TreeWriter::make_symlink(const std::string& node_path, const std::string& target) const {
    if (skip(node_path)) return ok_status();
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    ::unlink(host.c_str());
    if (::symlink(target.c_str(), host.c_str()) != 0) return errno_error(host + ": symlink", errno);
    return ok_status();
}

Status TreeWriter::make_char_device(const std::string& node_path, unsigned major, unsigned minor,
                                    unsigned mode) const {
    if (skip(node_path)) return ok_status();
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    ::unlink(host.c_str());
    if (::mknod(host.c_str(), S_IFCHR | mode, makedev(major, minor)) != 0)
        return errno_error(host + ": mknod " + std::to_string(major) + ":" + std::to_string(minor), errno);
    ::chmod(host.c_str(), mode);  // mknod honours the umask; the node's mode must be exact
    return ok_status();
}

Status TreeWriter::write_proc_devices() const {
    std::map<unsigned, std::string> chars = {
        {1, "mem"}, {4, "/dev/vc/0"}, {5, "/dev/tty"}, {7, "vcs"}, {10, "misc"}, {13, "input"},
        {29, "fb"}, {128, "ptm"}, {136, "pts"}, {180, "usb"}, {189, "usb_device"},
        {254, "gpiochip"}};
    for (const auto& [major, name] : drivers_) chars[major] = name;
    std::string text = "Character devices:\n";
    for (const auto& [major, name] : chars) {
        std::string num = std::to_string(major);
        text += std::string(num.size() < 3 ? 3 - num.size() : 0, ' ') + num + " " + name + "\n";
    }
    text += "\nBlock devices:\n  7 loop\n  8 sd\n 65 sd\n259 blkext\n";
    return write_file("/proc/devices", text);
}

Status check_sim_root(const std::string& root) {
    struct stat st {};
    if (::stat((root + "/" + kRootMarker).c_str(), &st) != 0)
        return Error{root + ": not an xpart-sim root (no " + kRootMarker + ")"};
    return ok_status();
}

Result<std::string> resolve_in_root(const std::string& root, const std::string& node_path) {
    std::vector<std::string> done, todo;  // todo: the components left, last first
    auto push_front = [&todo](const std::string& path) {
        const auto parts = split(path, '/');
        for (auto it = parts.rbegin(); it != parts.rend(); ++it)
            if (!it->empty() && *it != ".") todo.push_back(*it);
    };
    push_front(node_path);
    auto joined = [&done] {
        std::string out;
        for (const auto& d : done) out += "/" + d;
        return out;
    };
    for (unsigned links = 0; !todo.empty();) {
        const std::string part = todo.back();
        todo.pop_back();
        if (part == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        const std::string host = root + joined() + "/" + part;
        struct stat st {};
        if (::lstat(host.c_str(), &st) != 0) return errno_error(host, errno);
        if (!S_ISLNK(st.st_mode)) {
            done.push_back(part);
            continue;
        }
        if (++links > 40) return Error{host + ": too many levels of symbolic links"};
        char target[4096];
        const ssize_t n = ::readlink(host.c_str(), target, sizeof target - 1);
        if (n < 0) return errno_error(host + ": readlink", errno);
        const std::string text(target, static_cast<std::size_t>(n));
        if (!text.empty() && text[0] == '/') done.clear();
        push_front(text);
    }
    return joined().empty() ? std::string("/") : joined();
}

namespace {
bool dir_is_empty(const std::string& path) {
    DIR* d = ::opendir(path.c_str());
    if (!d) return true;
    bool empty = true;
    while (struct dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    ::closedir(d);
    return empty;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

// A non-empty root is rebuilt only when an earlier build marked it as ours: never wipe a
// directory xpart-sim did not make.
Status clear_previous_root(const std::string& root) {
    if (dir_is_empty(root)) return ok_status();
    if (auto st = check_sim_root(root); !st)
        return Error{root + ": not empty and not an xpart-sim root (no " + kRootMarker + ")"};
    if (::nftw(root.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return errno_error(root + ": remove previous tree", errno);
    return ok_status();
}
}  // namespace

std::string format_cpu_mask(const std::vector<unsigned>& cpus, unsigned nbits) {
    if (nbits == 0) nbits = 1;
    std::vector<std::uint32_t> words((nbits + 31) / 32, 0);
    for (unsigned c : cpus)
        if (c < nbits) words[c / 32] |= std::uint32_t{1} << (c % 32);
    std::string out;
    char buf[16];
    for (std::size_t i = words.size(); i-- > 0;) {
        // The most significant word is only as wide as the bits left in it.
        const unsigned bits = i + 1 == words.size() && nbits % 32 ? nbits % 32 : 32;
        std::snprintf(buf, sizeof buf, "%0*x", static_cast<int>((bits + 3) / 4), words[i]);
        if (!out.empty()) out += ',';
        out += buf;
    }
    return out;
}

unsigned cpu_id_count(const NodeSpec& spec) {
    unsigned n = 0;
    for (unsigned c : spec.cpus) n = std::max(n, c + 1);
    return n;
}

Status write_local_cpus(const NodeSpec& spec, TreeWriter& tree, const std::string& pci_dir,
                        const std::vector<unsigned>& cpus) {
    if (auto st = tree.write_file(pci_dir + "/local_cpulist", format_cpu_list(cpus) + "\n"); !st) return st;
    return tree.write_file(pci_dir + "/local_cpus", format_cpu_mask(cpus, cpu_id_count(spec)) + "\n");
}

namespace {
// The CPU topology a real node's sysfs shows and hwloc's Linux backend needs (without
// cpuN/topology it aborts discovery of a foreign root with "failed to find sysfs cpu
// topology directory"): /sys/devices/system/cpu/{online,possible,present}, per CPU
// topology/{core,package,die}_{id,cpus,cpus_list} and the old thread/core_siblings names, and
// the NUMA nodes' cpumap/cpulist with cpuN <-> nodeN links. The spec names CPUs and NUMA
// nodes only: each CPU is a core of its own (no SMT), each NUMA node one package (socket);
// CPUs of no NUMA node form one more package.
Status write_cpu_tree(const NodeSpec& spec, TreeWriter& tree) {
    const unsigned nbits = cpu_id_count(spec);
    const std::string sys = "/sys/devices/system";
    for (const char* f : {"online", "possible", "present"})
        if (auto st = tree.write_file(sys + "/cpu/" + f, format_cpu_list(spec.cpus) + "\n"); !st) return st;
    struct Package {
        int id;
        int numa;  // -1: none
        std::vector<unsigned> cpus;
    };
    std::vector<Package> packages;
    std::vector<unsigned> placed;
    int next_id = 0;
    for (const auto& n : spec.numa) next_id = std::max(next_id, n.node + 1);
    for (const auto& n : spec.numa) {
        Package p{n.node, n.node, {}};
        for (unsigned c : n.cpus)
            if (std::find(spec.cpus.begin(), spec.cpus.end(), c) != spec.cpus.end() &&
                std::find(placed.begin(), placed.end(), c) == placed.end()) {
                p.cpus.push_back(c);
                placed.push_back(c);
            }
        if (!p.cpus.empty()) packages.push_back(std::move(p));
    }
    Package rest{next_id, -1, {}};
    for (unsigned c : spec.cpus)
        if (std::find(placed.begin(), placed.end(), c) == placed.end()) rest.cpus.push_back(c);
    if (!rest.cpus.empty()) packages.push_back(std::move(rest));

    for (const Package& p : packages) {
        const std::string package_list = format_cpu_list(p.cpus) + "\n";
        const std::string package_mask = format_cpu_mask(p.cpus, nbits) + "\n";
        for (std::size_t core = 0; core < p.cpus.size(); ++core) {
            const unsigned c = p.cpus[core];
            const std::string cpu = sys + "/cpu/cpu" + std::to_string(c);
            const std::string own_list = std::to_string(c) + "\n";
            const std::string own_mask = format_cpu_mask({c}, nbits) + "\n";
            const std::pair<const char*, std::string> files[] = {
                {"physical_package_id", std::to_string(p.id) + "\n"},
                {"die_id", "0\n"},
                {"core_id", std::to_string(core) + "\n"},
                {"core_cpus", own_mask}, {"core_cpus_list", own_list},
                {"thread_siblings", own_mask}, {"thread_siblings_list", own_list},
                {"die_cpus", package_mask}, {"die_cpus_list", package_list},
                {"package_cpus", package_mask}, {"package_cpus_list", package_list},
                {"core_siblings", package_mask}, {"core_siblings_list", package_list}};
            for (const auto& [name, text] : files)
                if (auto st = tree.write_file(cpu + "/topology/" + name, text); !st) return st;
            if (p.numa < 0) continue;
            const std::string node = "node" + std::to_string(p.numa);
            if (auto st = tree.make_symlink(cpu + "/" + node, "../../node/" + node); !st) return st;
            if (auto st = tree.make_symlink(sys + "/node/" + node + "/cpu" + std::to_string(c),
                                            "../../cpu/cpu" + std::to_string(c));
                !st)
                return st;
        }
    }
    std::vector<unsigned> nodes;
    for (const auto& n : spec.numa) {
        const std::string dir = sys + "/node/node" + std::to_string(n.node);
        if (auto st = tree.write_file(dir + "/cpulist", format_cpu_list(n.cpus) + "\n"); !st) return st;
        if (auto st = tree.write_file(dir + "/cpumap", format_cpu_mask(n.cpus, nbits) + "\n"); !st) return st;
        nodes.push_back(static_cast<unsigned>(n.node));
    }
    std::sort(nodes.begin(), nodes.end());
    for (const char* f : {"online", "possible"})
        if (auto st = tree.write_file(sys + "/node/" + f, format_cpu_list(nodes) + "\n"); !st) return st;
    return ok_status();
}
}  // namespace

Status build_tree(const NodeSpec& spec, const std::string& root) {
    TreeWriter tree(root);
    if (auto st = clear_previous_root(root); !st) return st;
    if (auto st = tree.make_dirs(""); !st) return st;
    if (auto st = tree.write_file(std::string("/") + kRootMarker, spec.name + "\n"); !st) return st;
    if (auto st = write_cpu_tree(spec, tree); !st) return st;
    if (auto st = write_pcie_tree(spec, tree); !st) return st;
    if (!spec.nvidia.empty())
        if (auto st = write_nvidia_tree(spec, tree); !st) return st;
    if (!spec.amd.empty())
        if (auto st = write_amd_tree(spec, tree); !st) return st;
    return tree.write_proc_devices();
}

}  // namespace xpart::sim
