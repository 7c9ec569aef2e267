// A job's MPS daemons as root runs them from the Prolog and Epilog, in the job directory root
// keeps (job_dir.hpp): root records the daemons it started in its own file there, the daemons
// run as the job's user with their pipe and log directories in the user's leaf:
//   <job dir>/mps              root's records: "<instance> <uuid> <pid> <start time> <uid>"
//   <job dir>/mps.failed       root's: why the start failed (ranks fail with this line)
//   <job dir>/ended            root's: the Epilog began; a later cleanup may finish it
//   <job dir>/user/mps/<inst>/ the daemons' pipe and log directories
//   <job dir>/user/step_<s>/   daemons ranks started themselves (xpart launch --mps)
//   <job dir>/mps.step_<s>     root's: daemons slurmstepd started for a step (--xpart-mps),
//   <job dir>/user/mps_step_<s>/<inst>/   with their pipe and log directories here
// Every daemon root starts runs in a cgroup root made for it (mps_cgroups.hpp), confined to
// its GPU instance's partitions; stopping root's daemons is ending those cgroups, which needs
// nothing from the job directory, so nothing a user does there keeps the Epilog from it. The
// ranks' own daemons, recorded in the user's place, are stopped by a child that became the
// user (and live in the ranks' cgroups, which Slurm ends with the step). Root never reads a
// place outside the run directory (no /tmp): a user can make root act on nothing but what
// root made.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "mps/root/job_dir.hpp"
#include "mps/mps.hpp"
#include "mps/mps_options.hpp"
#include "mps/private_dir.hpp"

namespace xpart::mps {

constexpr const char* kMpsRecords = "mps";
constexpr const char* kMpsFailed = "mps.failed";

// The config of the daemons root starts for the job (records in root's file).
MpsConfig managed_mps_config(const JobDir& job, const MpsJobOptions& o);

// Prolog: the job directory with the user's leaf, nothing else.
Result<JobDir> prepare_job(const MpsJobOptions& o, const std::string& job_id, const process::Credentials& user);
// Prolog: prepare_job, then the daemons of `instances` under the job's lock. A failure is
// recorded in mps.failed (the job's ranks then fail with it) and nothing started stays up.
Result<MpsStartReport> start_job_daemons(const MpsJobOptions& o, const std::string& job_id,
                                         const process::Credentials& user,
                                         const std::vector<MpsInstance>& instances);

struct MpsJobStopReport {
    bool had_job_dir = false;
    std::vector<std::string> ended;      // root's daemon cgroups ended: describe_ended()
    std::vector<std::string> notes;      // logged; the user may have caused them
    std::vector<std::string> survivors;  // what root could not end (a cgroup with a process left)
};
// Epilog: ends every daemon cgroup root made for the job (whatever state the job directory is
// in), then under the job's lock marks it ended, stops (as the user) the ranks' own daemons,
// and removes the job directory.
MpsJobStopReport stop_job_daemons(const MpsJobOptions& o, const std::string& job_id);
// One line: "ended <cgroups>; could not end: <what>" (the Epilog's log line).
std::string describe_stop(const MpsJobStopReport& r);

// --xpart-mps, slurmstepd before the step's tasks fork: the Prolog's daemons when it started
// them (an error when its start failed), else the step's own, started as the user and
// recorded in root's mps.step_<s>. `managed` tells which.
Result<MpsConfig> start_step_daemons(const MpsJobOptions& o, const std::string& job_id,
                                     const std::string& step_id, const process::Credentials& user,
                                     const std::vector<MpsInstance>& instances, bool& managed,
                                     MpsStartReport& report);
// slurmstepd at the step's end (also when its tasks were killed): stops the step's own
// daemons; the job directory stays for the Epilog.
MpsJobStopReport stop_step_daemons(const MpsJobOptions& o, const std::string& job_id,
                                   const std::string& step_id);

// Prolog/Epilog: finishes the job directories whose Epilog began but did not end (marked
// `ended`, lock free). A directory of a job that may still run is never touched.
std::vector<std::string> cleanup_ended_jobs(const MpsJobOptions& o);

}  // namespace xpart::mps
