// A task's GPU binding request as Slurm 22.05 reads it (gres.c, _parse_tres_bind): the "gpu:"
// directive of SLURMD_TRES_BIND, values read exactly as Slurm reads them, bugs included:
// per_task takes the leading digits of its value, so the typed "per_task:2g.10gb:1" that srun
// passes for --gpus-per-task=2g.10gb:1 means 2 GPUs per task and "per_task:cpx:1" means none.
#pragma once

#include <cstdint>
#include <string>

namespace xpart {

struct GpuBind {
    enum class Kind { None, Closest, Map, Mask, PerTask };
    Kind kind = Kind::None;
    std::uint32_t tasks_per_gpu = 0;  // Closest: N of single:N (--ntasks-per-gpu); 0 = closest
    std::uint32_t gpus_per_task = 0;  // PerTask: never 0 (per_task:0 is no binding)
    std::string list;                 // Map/Mask: "1,0", "0x1,0x2*2"

    bool operator==(const GpuBind& o) const {
        return kind == o.kind && tasks_per_gpu == o.tasks_per_gpu &&
               gpus_per_task == o.gpus_per_task && list == o.list;
    }
};

// SLURMD_TRES_BIND ("gpu:per_task:1", "gpu:verbose,map_gpu:1,0", "gpu:single:2", ...).
GpuBind parse_tres_bind(const std::string& tres_bind);

// True when the "gpu:" directive is "none" (--gpu-bind=none): no task binding, on every series.
bool tres_bind_is_none(const std::string& tres_bind);

// --accel-bind=g: Slurm binds to the closest GPUs and ignores SLURMD_TRES_BIND's directive.
inline GpuBind accel_bind_closest() { return GpuBind{GpuBind::Kind::Closest, 0, 0, {}}; }

}  // namespace xpart
