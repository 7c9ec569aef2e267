// What the reshape flow asks slurmctld and tells it, behind one interface: the requests'
// logic (requests.hpp) is tested against a recorded cluster, and runs on a real one through
// Slurm's own commands (scontrol, squeue), as the hooks that call it run as SlurmUser.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "libxpart/env_map.hpp"
#include "libxpart/result.hpp"
#include "reshape_request/slurm_nodes.hpp"

namespace xpart::reshape_request {

class SlurmClient {
public:
    virtual ~SlurmClient() = default;
    // `scontrol show node -o NODELIST`; every node of the cluster when `nodelist` is "". One RPC.
    virtual Result<std::vector<SlurmNode>> nodes(const std::string& nodelist) = 0;
    // The ids of the jobs allocated `node` that are still CONFIGURING (waiting for it). One RPC.
    virtual Result<std::vector<std::string>> configuring_jobs(const std::string& node) = 0;
    // A job's JobState (CONFIGURING, PENDING, ...; "" when slurmctld no longer knows it). One RPC.
    virtual Result<std::string> job_state(const std::string& job) = 0;
    // A node list's names ("gpu[1-2]" -> gpu1 gpu2); no RPC.
    virtual Result<std::vector<std::string>> hostnames(const std::string& nodelist) = 0;
    // `scontrol ARGS...`: Error with scontrol's own line when it refuses.
    virtual Status scontrol(const std::vector<std::string>& args) = 0;
};

// Runs Slurm's commands from PATH with `env` (SLURM_CONF, when the caller has one).
std::unique_ptr<SlurmClient> command_client(EnvMap env);

}  // namespace xpart::reshape_request
