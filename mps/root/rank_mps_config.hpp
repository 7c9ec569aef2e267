// Which MPS daemons a rank uses (xpart launch --mps): root's, when the Prolog started them
// (root's records in the job directory, read, never written), else the step's own. Root's side
// of mps/, since it reads root's job directory; the rank's share of the daemons is
// mps/mps_session.hpp.
#pragma once

#include <string>

#include "mps/mps.hpp"
#include "mps/mps_options.hpp"

namespace xpart::mps {

// The config a rank uses: root's daemons when the Prolog started them, else the step's own.
// `job_id` (SLURM_JOB_ID; empty outside Slurm) and `step_key` ("<job>.<step>", or the MPI
// launcher's job) pick the directory.
Result<MpsConfig> rank_mps_config(const MpsJobOptions& o, const std::string& job_id,
                                  const std::string& step_key, bool& managed);

}  // namespace xpart::mps
