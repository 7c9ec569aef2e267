// The visibility model: the one place that decides what the vendor variables say for the
// partitions a process is given (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
// HIP_VISIBLE_DEVICES, GPU_DEVICE_ORDINAL) and the XPART_* partition variables beside them.
// The gres plugin (libxpart/gres/gres_env.cpp), `xpart launch` and the SPANK plugin
// (binding/rank_plan.cpp narrow_env) only apply what it returns, so the front ends cannot
// drift apart.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/env_map.hpp"
#include "libxpart/node.hpp"

namespace xpart {

// How ROCR_VISIBLE_DEVICES names an AMD partition (xpart.conf AmdIndexMode=).
enum class AmdIndexMode {
    Index,  // position as the ROCm runtime counts it (default: the only form that is
            // unambiguous before ROCm 7, where all XCPs of one GPU share one UUID)
    Uuid,   // the partition's UUID (ROCm 7 and later give each XCP its own)
};

// One variable to set (value) or to unset (nullopt).
struct EnvChange {
    std::string name;
    std::optional<std::string> value;

    bool operator==(const EnvChange& o) const { return name == o.name && value == o.value; }
};

// The value given to vendor lists when the allocation cannot be bound safely: CUDA and ROCm
// both stop at an invalid token, so the process sees no GPU rather than a wrong one.
inline constexpr const char* kBindNothing = "-1";

// ROCm's device numbering: it counts the AMD GPU agents it can open, in KFD node order, 0..n-1
// (render nodes it cannot open, e.g. denied by a device cgroup, are skipped). `kfd_order` is
// each agent's place in KFD order (its KFD node id or its rank among them); the result gives
// each agent's ROCm number, nullopt for those not `openable` (same size as kfd_order).
std::vector<std::optional<std::size_t>> rocm_numbers(const std::vector<int>& kfd_order,
                                                     const std::vector<bool>& openable);

// One device of a Slurm-style list (a job's, step's or task's GPUs), as the lists name it.
struct ListedDevice {
    Vendor vendor = Vendor::Nvidia;
    std::string unique_id;     // NVIDIA UUID (MIG- or GPU-); "" = named by its index
    std::string amd_uuid;      // AMD partition UUID, for AmdIndexMode::Uuid
    std::size_t slurm_index;   // stock's local index: record index, or position when confined
    std::size_t rocm_number;   // AMD: rocm_numbers()' number for it
};

// The lists as stock Slurm and ROCm expect them: CUDA_VISIBLE_DEVICES the NVIDIA UUIDs (or
// indices), ROCR_VISIBLE_DEVICES the AMD ROCm numbers (or UUIDs), GPU_DEVICE_ORDINAL every
// device's UUID or stock index. An empty list is unset. Order: CUDA, ROCR, ordinal.
std::vector<EnvChange> list_visibility(const std::vector<ListedDevice>& devices,
                                       AmdIndexMode amd_mode);
// The same variables when the allocation cannot be bound: every one binds nothing.
std::vector<EnvChange> bind_nothing_visibility();

// A task that Slurm's own per-task binding (--gpu-bind, --gpus-per-task) left none of the
// step's partitions: every list binds nothing, and no XPART_PARTITION or SLURM_STEP_GPUS
// names one it cannot open.
std::vector<EnvChange> withheld_visibility();

// What a bound task or rank is told of its place beside rank_visibility's variables: XPART_CPUS
// the CPUs near its partition; in a Slurm step SLURM_STEP_GPUS its own gres record index and
// XPART_STEP_GPUS the whole step's on the node. What is not known is left as it is.
struct TaskPlacement {
    std::vector<unsigned> cpus;
    std::optional<std::string> step_gpu;   // the task's record index
    std::optional<std::string> step_gpus;  // the step's SLURM_STEP_GPUS
};
std::vector<EnvChange> placement_visibility(const TaskPlacement& placement);

// One rank (or task) given one partition. NVIDIA: CUDA_VISIBLE_DEVICES its UUID, the AMD lists
// unset (on a mixed node Slurm's name devices it was not given). AMD: ROCR_VISIBLE_DEVICES
// `rocr_token` ("0" when `confined`: a per-rank cgroup leaves ROCm one agent), CUDA and HIP
// lists unset (they index the filtered set). GPU_DEVICE_ORDINAL names the same device as the
// vendor list; XPART_PARTITION the UUID ("/<index>" added for an XCP).
std::vector<EnvChange> rank_visibility(const Gpu& gpu, const Partition& part,
                                       const std::string& rocr_token, bool confined);

// A Prolog/Epilog's view of a job's partitions on the node.
struct PrologDevice {
    Vendor vendor = Vendor::Nvidia;
    std::string unique_id, partition_uuid, type, gpu_uuid;
    int gpu_minor = -1, gi = -1, ci = -1, kfd_node = -1;
};
// CUDA_VISIBLE_DEVICES (NVIDIA UUIDs), XPART_PARTITION_UUIDS, XPART_PARTITION_TYPES,
// XPART_GPU_UUIDS (each once), XPART_MIG_INSTANCES ("<gpu minor>:<gi>:<ci>") and
// XPART_AMD_KFD_NODES; empty lists unset.
std::vector<EnvChange> prolog_visibility(const std::vector<PrologDevice>& devices);

// A rank's RDMA NIC for GPUDirect RDMA: the first of its GPU's Gpu::nics (discovery ranked
// them), as NCCL_IB_HCA "=mlx5_0:1" (NCCL and RCCL; '=': this device, not mlx5_0*) and
// UCX_NET_DEVICES "mlx5_0:1" (UCX: Open MPI's pml/ucx, MPICH's ch4:ucx), each unless `env`
// already sets it and `override_user` is false; XPART_NIC "mlx5_0:1" always. A GPU without a
// usable NIC: no change.
std::vector<EnvChange> nic_visibility(const Gpu& gpu, bool override_user, const EnvMap& env);

// An MPS control daemon serves one NVIDIA instance: CUDA_VISIBLE_DEVICES its UUID.
std::vector<EnvChange> mps_daemon_visibility(const std::string& instance_uuid);

// Applies changes to an environment: set, or erase for nullopt.
void apply_changes(EnvMap& env, const std::vector<EnvChange>& changes);
// "a,b,c"; nullopt (unset) for none.
std::optional<std::string> join_list(const std::vector<std::string>& items);

}  // namespace xpart
