// Rank variables (OMPI_*, PMIX_*, PMI_*, MPI_LOCAL*, SLURM_*) as KEY=value lines, and
// SLURM_TASKS_PER_NODE with SLURM_NODEID.
#include <string>

#include "binding/rank_env.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(rank_env) {
    const auto env = xpart::fuzz::env_of(xpart::fuzz::text_of(data, size));
    (void)xpart::binding::detect_rank(env);
    if (auto it = env.find("SLURM_TASKS_PER_NODE"); it != env.end()) {
        const auto id = env.find("SLURM_NODEID");
        const int node = id == env.end() || id->second.empty() ? 0 : id->second[0] - '0';
        (void)xpart::binding::slurm_tasks_on_node(it->second, node);
    }
}
