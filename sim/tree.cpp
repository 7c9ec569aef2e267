#include "sim/tree.hpp"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "libxpart/text.hpp"

namespace xpart::sim {

namespace {
Error errno_error(const std::string& what, const std::string& path) {
    return Error{path + ": " + what + ": " + std::strerror(errno)};
}

std::string parent_of(const std::string& path) {
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}
}  // namespace

Status TreeWriter::make_dirs(const std::string& node_path) const {
    std::string host = host_path(node_path);
    for (std::size_t pos = root_.size() + 1; pos <= host.size(); ++pos) {
        if (pos != host.size() && host[pos] != '/') continue;
        std::string prefix = host.substr(0, pos);
        if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
            return errno_error("mkdir", prefix);
    }
    return ok_status();
}

Status TreeWriter::write_file(const std::string& node_path, const std::string& content) const {
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    std::ofstream out(host, std::ios::binary | std::ios::trunc);
    if (!out) return errno_error("open", host);
    out << content;
    if (!out.flush()) return errno_error("write", host);
    return ok_status();
}

Status TreeWriter::make_symlink(const std::string& node_path, const std::string& target) const {
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    ::unlink(host.c_str());
    if (::symlink(target.c_str(), host.c_str()) != 0) return errno_error("symlink", host);
    return ok_status();
}

Status TreeWriter::make_char_device(const std::string& node_path, unsigned major, unsigned minor,
                                    unsigned mode) const {
    if (auto st = make_dirs(parent_of(node_path)); !st) return st;
    std::string host = host_path(node_path);
    ::unlink(host.c_str());
    if (::mknod(host.c_str(), S_IFCHR | mode, makedev(major, minor)) != 0)
        return errno_error("mknod " + std::to_string(major) + ":" + std::to_string(minor), host);
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
    struct stat st {};
    if (::stat((root + "/" + kRootMarker).c_str(), &st) != 0)
        return Error{root + ": not empty and not an xpart-sim root (no " + kRootMarker + ")"};
    if (::nftw(root.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        return errno_error("remove previous tree", root);
    return ok_status();
}
}  // namespace

Status build_tree(const NodeSpec& spec, const std::string& root) {
    TreeWriter tree(root);
    if (auto st = clear_previous_root(root); !st) return st;
    if (auto st = tree.make_dirs(""); !st) return st;
    if (auto st = tree.write_file(std::string("/") + kRootMarker, spec.name + "\n"); !st) return st;
    // NUMA nodes: /sys/devices/system/node/nodeN/cpulist, as the kernel shows them.
    std::string online;
    for (const auto& n : spec.numa) {
        std::string dir = "/sys/devices/system/node/node" + std::to_string(n.node);
        if (auto st = tree.write_file(dir + "/cpulist", format_cpu_list(n.cpus) + "\n"); !st) return st;
        online += (online.empty() ? "" : ",") + std::to_string(n.node);
    }
    if (auto st = tree.write_file("/sys/devices/system/node/online", online + "\n"); !st) return st;
    if (auto st = tree.write_file("/sys/devices/system/cpu/online",
                                  format_cpu_list(spec.cpus) + "\n"); !st)
        return st;
    if (!spec.nvidia.empty())
        if (auto st = write_nvidia_tree(spec, tree); !st) return st;
    if (!spec.amd.empty())
        if (auto st = write_amd_tree(spec, tree); !st) return st;
    return tree.write_proc_devices();
}

}  // namespace xpart::sim
