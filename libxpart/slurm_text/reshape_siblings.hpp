// The reshape flow's Slurm configuration for one host (etc/slurm.conf.reshape): one NodeName
// per geometry the host may take, each with that geometry's Gres; the one it has now is up,
// the others powered down (State=CLOUD). slurmctld loads a powered-down sibling's GPU records
// from gres.conf long before its slurmd registers, and keeps only records with a file: each
// partition it will have is named there by files of its GPU that the partition will use, which
// the records slurmd discovers replace at registration. Pure: the caller finds the geometries (NVML, sysfs).
#pragma once

#include <string>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

struct HostGeometry {
    std::string name;                // the site's Geometry= name, or "" (then named by its types)
    std::vector<std::string> types;  // one GPU's partitions' GRES types ({3g.40gb, 3g.40gb}, {cpx x8})
    bool current = false;            // the geometry the host has now
};

struct SiblingOptions {
    std::string host;          // NodeHostname, and the NodeNames' prefix
    unsigned port = 6818;      // the current geometry's slurmd port; the others count up from it
    std::string node_options;  // appended to every NodeName line ("CPUs=64 RealMemory=500000")
};

// "gpu1-a100-7x1g" for a named geometry; else by its types, largest first as written, without
// dots and with '_' for '+': "gpu1-2x3g40gb", "gpu1-3g40gb_2g20gb_2x1g10gb", "mi1-cpx".
std::string sibling_node_name(const std::string& host, const HostGeometry& geometry);

// The files to name a sibling's partitions of this GPU by (host paths): NVIDIA its /dev/nvidiaN
// and /dev/nvidiactl (every MIG device uses both), AMD /dev/kfd and the GPU's render node (the
// first partition's; the gres plugin's check takes it for any partition of its type).
std::vector<std::string> sibling_files(const Gpu& gpu, const RootFs& root);

// slurm.conf NodeName lines, the current geometry first; each GPU (`gpus` of them) takes the
// geometry's types: "NodeName=gpu1-2x3g40gb NodeHostname=gpu1 Port=6819 Gres=gpu:3g.40gb:2
// Features=xpart_host_gpu1 State=CLOUD".
std::string render_sibling_nodes(const std::vector<HostGeometry>& geometries, std::size_t gpus,
                                 const SiblingOptions& options);

// gres.conf lines: for every sibling, one per partition of each GPU, named by that GPU's
// `files` (sibling_files; one entry per GPU).
std::string render_sibling_gres(const std::vector<HostGeometry>& geometries,
                                const std::vector<std::vector<std::string>>& files,
                                const SiblingOptions& options);

}  // namespace xpart
