#include "sim/amd_relayout.hpp"

#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <set>

#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"
#include "sim/pcie_layout.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr const char* kGenerationId = "/sys/class/kfd/kfd/topology/generation_id";

// Removes a file of the old layout and the directories it leaves empty (a stale KFD node, a
// platform device): a fresh build has no empty directories.
Status remove_stale(const std::string& root, const std::string& node_path) {
    const std::string host = root + node_path;
    if (::unlink(host.c_str()) != 0 && errno != ENOENT) return errno_error(host + ": unlink", errno);
    for (std::string dir = node_path.substr(0, node_path.rfind('/')); !dir.empty();
         dir = dir.substr(0, dir.rfind('/')))
        if (::rmdir((root + dir).c_str()) != 0) break;
    return ok_status();
}

// generation_id + 1, written to a temporary file and renamed: never seen half-written.
Status bump_generation(const std::string& root) {
    auto text = RootFs(root).read(kGenerationId);
    if (!text) return text.error();
    auto generation = parse_u64(trim(*text));
    if (!generation) return Error{root + kGenerationId + ": not a number: '" + trim(*text) + "'"};
    const std::string host = root + kGenerationId, tmp = host + ".new";
    TreeWriter tree(root);
    if (auto st = tree.write_file(std::string(kGenerationId) + ".new",
                                  std::to_string(*generation + 1) + "\n");
        !st)
        return st;
    if (::rename(tmp.c_str(), host.c_str()) != 0) return errno_error(host + ": rename", errno);
    return ok_status();
}

}  // namespace

Status relay_amd_tree(const NodeSpec& from, const NodeSpec& to, const std::string& root) {
    std::set<std::string> old_paths, new_paths, attributes;
    TreeWriter old_layout(root);
    old_layout.record_paths(&old_paths, true);
    if (auto st = write_amd_devices(from, old_layout); !st) return st;

    for (const AmdGpuSpec& g : to.amd.gpus)
        for (const char* file : {"/current_compute_partition", "/current_memory_partition"})
            attributes.insert(pci_device_dir(to, g.pci_bus_id()) + file);
    TreeWriter tree(root);
    tree.record_paths(&new_paths, false);
    tree.keep_existing(attributes);
    if (auto st = write_amd_devices(to, tree); !st) return st;

    for (const std::string& path : old_paths)
        if (!new_paths.count(path))
            if (auto st = remove_stale(root, path); !st) return st;
    return bump_generation(root);
}

}  // namespace xpart::sim
