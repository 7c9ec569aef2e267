#include "sim/kfd_registry.hpp"

#include <ftw.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "libxpart/amd/amd_kfd.hpp"
#include "libxpart/text.hpp"
#include "sim/spec_pcie.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

std::string proc_dir(int pid) { return std::string(kKfdProcDir) + "/" + std::to_string(pid); }

void remove_tree(const std::string& host) {
    ::nftw(host.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); },
           16, FTW_DEPTH | FTW_PHYS);
}

// Registered pids (numeric entries of proc/).
std::vector<int> registered_pids(const std::string& root) {
    std::vector<int> pids;
    auto names = RootFs(root).list(kKfdProcDir);
    if (!names) return pids;
    for (const std::string& name : *names)
        if (auto pid = parse_u64(name); pid && *pid > 0 && *pid < (1u << 31))
            pids.push_back(static_cast<int>(*pid));
    return pids;
}

}  // namespace

Result<std::vector<unsigned>> kfd_gpu_ids(const std::string& root, const std::string& bdf) {
    auto address = parse_pci_address(bdf);
    if (!address) return Error{"'" + bdf + "' is not a PCI bus id (dddd:bb:dd.f)"};
    const RootFs fs(root);
    const std::string nodes_dir = std::string(kKfdTopology) + "/nodes";
    auto nodes = read_kfd_nodes(fs, nodes_dir);
    if (!nodes) return nodes.error();
    std::vector<unsigned> ids;
    for (const KfdNode& n : *nodes) {
        if (!n.is_gpu() || n.props.get_or("domain", 0) != address->domain ||
            ((n.props.get_or("location_id", 0) >> 8) & 0xff) != address->bus)
            continue;
        const std::string file = nodes_dir + "/" + std::to_string(n.id) + "/gpu_id";
        auto text = fs.read(file);
        if (!text) return text.error();
        auto id = parse_u64(trim(*text));
        if (!id) return Error{root + file + ": not a gpu_id: '" + trim(*text) + "'"};
        ids.push_back(static_cast<unsigned>(*id));
    }
    if (ids.empty()) return Error{root + nodes_dir + ": no KFD node of the GPU " + bdf};
    return ids;
}

Status register_kfd_process(const std::string& root, int pid, const std::vector<unsigned>& gpu_ids) {
    const TreeWriter tree(root);
    const std::string dir = proc_dir(pid);
    // The kernel's PASIDs are small, process-unique numbers; any such will do here.
    if (auto st = tree.write_file(dir + "/pasid", std::to_string(32768 + pid % 32768) + "\n"); !st)
        return st;
    for (unsigned id : gpu_ids)
        for (const char* kind : {"/vram_", "/sdma_"})
            if (auto st = tree.write_file(dir + kind + std::to_string(id), "0\n"); !st) return st;
    return ok_status();
}

void unregister_kfd_process(const std::string& root, int pid) {
    remove_tree(root + proc_dir(pid));
    ::rmdir((root + kKfdProcDir).c_str());  // fails while others are registered: fine
}

std::vector<int> reap_exited_kfd_processes(const std::string& root) {
    std::vector<int> gone;
    for (int pid : registered_pids(root))
        if (::kill(pid, 0) != 0 && errno == ESRCH) {
            unregister_kfd_process(root, pid);
            gone.push_back(pid);
        }
    return gone;
}

std::optional<int> kfd_holder(const std::string& root, const std::vector<unsigned>& gpu_ids) {
    const RootFs fs(root);
    for (int pid : registered_pids(root))
        for (unsigned id : gpu_ids)
            if (fs.exists(proc_dir(pid) + "/vram_" + std::to_string(id))) return pid;
    return std::nullopt;
}

}  // namespace xpart::sim
