// Who am I among the job's tasks: rank, size, local rank and local size, from whichever
// launcher set the environment (Open MPI, PMIx, MPICH/Hydra, Slurm).
#pragma once

#include <string>

#include "libxpart/env_map.hpp"
#include "libxpart/result.hpp"

namespace xpart::binding {

struct RankInfo {
    int rank = 0;
    int size = 1;
    int local_rank = 0;
    int local_size = 1;
    // Which launcher the rank came from: "ompi", "pmix", "mpich", "slurm" or "none" (a lone
    // process: rank 0 of 1).
    std::string source = "none";
};

// MPI launchers win over Slurm: `mpirun` inside an sbatch script inherits the batch step's
// SLURM_PROCID=0, while OMPI_/PMI_ variables describe the real task. A source that gives the
// global rank but no local rank (PMIx under srun) takes the local rank from Slurm.
// Error: one line naming the variable and its value.
Result<RankInfo> detect_rank(const EnvMap& env);

// Tasks on node `node_index` from Slurm's compressed count list "4(x2),3".
Result<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node_index);

}  // namespace xpart::binding
