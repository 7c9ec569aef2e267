// The gres/gpu plugin's view of a node: one GRES record per partition, in the order Slurm
// indexes them (record i = bit i of every allocation bitmap Slurm hands the plugin).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// A small sysfs attribute whose text says which partition the node holds now: compared at
// step launch with one read() (libxpart/gres/gres_check.cpp), as a stat() cannot see a partition
// re-made in place (an AMD compute-mode switch re-creates every XCP of the GPU under the
// same KFD node ids and render nodes).
enum class ContentKind {
    ComputeMode,  // the parent GPU's current_compute_partition ("SPX", "CPX")
    KfdGpuId,     // the XCP's KFD node gpu_id (the kernel hashes the XCP's identity into it)
};

struct ExpectedContent {
    ContentKind kind = ContentKind::ComputeMode;
    std::string path;  // host path
    std::string text;  // as slurmd read it, trailing whitespace removed

    bool operator==(const ExpectedContent& o) const {
        return kind == o.kind && path == o.path && text == o.text;
    }
};

struct GresRecord {
    Vendor vendor = Vendor::Nvidia;
    std::string type;                 // GRES type: "1g.10gb", "cpx", "a100-sxm4-40gb"
    std::vector<DeviceFile> files;    // every file the partition needs, shared ones included;
                                      // paths are host paths (root prefix applied): what
                                      // slurmd stat()s and the device cgroup names
    std::vector<unsigned> cpus;       // CPUs local to the parent GPU (machine numbering)
    std::string unique_id;            // Slurm UniqueId: MIG UUID, whole-GPU UUID; "" for AMD
                                      // XCPs (their UUID is the parent's, so it is ambiguous)
    std::string partition_uuid;       // Partition::uuid (AMD: shared by the XCPs of one GPU)
    std::string gpu_uuid;             // parent GPU
    int gpu_minor = -1;               // NVIDIA: N of /dev/nvidiaN
    int gi = -1, ci = -1;             // MIG instance ids
    int kfd_node = -1;                // AMD: KFD topology node
    int amd_rank = -1;                // AMD: position among the node's AMD partitions in KFD
                                      // order, which is the order ROCm counts them in
    std::vector<std::string> presence_paths;  // host paths that exist only while the partition
                                              // exists (MIG capability files; a KFD node
                                              // whose gpu_id slurmd could not read)
    std::vector<ExpectedContent> expected_contents;  // AMD: compute mode, KFD gpu_id

    bool operator==(const GresRecord& o) const;
};

// The one decision of which partition each gres record is: record i (Slurm's GPU index i, bit i
// of its bitmaps) is the i-th place. Node order (NVIDIA by NVML index, then AMD); GPUs with a
// pending MIG mode change give none (never bind them).
std::vector<PartitionPlace> gres_record_order(const Node& node);
// What slurmd registered (Node::gres_records, from the node cache), else gres_record_order.
std::vector<PartitionPlace> registered_record_order(const Node& node);

// Records in gres_record_order. Every file is named by its host path under `root`.
std::vector<GresRecord> gres_records(const Node& node, const RootFs& root);

// The CPUs Slurm holds for a record (its cpus_bitmap, machine numbering), given the node's
// configured CPU count: the record's CPUs below it; all of them when none is left (Slurm
// rejects a node where only some records name CPUs). Empty when the count is 0: then Slurm
// holds no bitmap and counts the record close to every CPU.
std::vector<unsigned> slurm_record_cpus(const GresRecord& record, unsigned node_cpus);

// Slurm's File=/MultipleFiles= value: the record's paths joined by ','.
std::string files_value(const GresRecord& record);

// Transport from slurmd to slurmstepd (send_stepd/recv_stepd) and from the discovery module
// to the plugin: compact tab-separated lines (libxpart/gres_record_transport.cpp), parsed
// in one pass. Errors name the line.
std::string serialize_records(const std::vector<GresRecord>& records);
Result<std::vector<GresRecord>> parse_records(std::string_view text);

}  // namespace xpart
