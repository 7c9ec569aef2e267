// KFD's process registry in a simulated root: the kernel lists each process holding /dev/kfd
// as /sys/class/kfd/kfd/proc/<pid>/ with `pasid` and, per KFD node it uses, `vram_<gpu_id>`
// and `sdma_<gpu_id>`. A process holds a GPU when it has vram_<gpu_id> of one of its nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::sim {

constexpr const char* kKfdProcDir = "/sys/class/kfd/kfd/proc";

// gpu_id of every KFD node of the GPU at PCI bus id `bdf` ("0000:05:00.0"), read from the
// root's topology (location_id and domain). Error when it has none.
Result<std::vector<unsigned>> kfd_gpu_ids(const std::string& root, const std::string& bdf);

// Creates proc/<pid>/ with pasid, vram_<id> and sdma_<id> for each of `gpu_ids`.
Status register_kfd_process(const std::string& root, int pid, const std::vector<unsigned>& gpu_ids);
// Removes proc/<pid>/ (and proc/ when that leaves it empty, as a fresh build has none).
void unregister_kfd_process(const std::string& root, int pid);

// Removes the registries of processes that no longer exist (kill(pid, 0): ESRCH), as the
// kernel does when a process exits; returns their pids.
std::vector<int> reap_exited_kfd_processes(const std::string& root);
// A registered process holding one of `gpu_ids`, if any.
std::optional<int> kfd_holder(const std::string& root, const std::vector<unsigned>& gpu_ids);

}  // namespace xpart::sim
