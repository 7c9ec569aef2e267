// CUDA MPS, one control daemon per MIG GPU instance (or per whole GPU), kept in a per-job
// runtime directory:
//   <job dir>/lock                 flock: one process at a time starts or stops daemons
//   <job dir>/managed              present when the Prolog owns the daemons (ranks only join)
//   <job dir>/members/<pid>        one file per rank using the daemons (launch --mps)
//   <job dir>/<instance>/uuid      what the daemon serves (its CUDA_VISIBLE_DEVICES)
//   <job dir>/<instance>/pipe/     CUDA_MPS_PIPE_DIRECTORY (pid file, control socket), 0700
//   <job dir>/<instance>/log/      CUDA_MPS_LOG_DIRECTORY (control.log, server.log), 0700
// Instance names are short ("gpu0-gi3", "gpu2") so socket paths stay under 108 bytes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "launcher/allotment.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::launch {

struct MpsInstance {
    std::string name;  // "gpu<minor>-gi<gi>" (MIG) or "gpu<minor>" (whole GPU)
    std::string uuid;  // MIG-<uuid> of the instance's (first) MIG device, or GPU-<uuid>
};

// The instance a partition belongs to. Error for AMD partitions (MPS is NVIDIA only).
Result<MpsInstance> mps_instance_of(const Node& node, const AllottedPartition& part);
// Distinct instances of these partitions, in first-seen order.
Result<std::vector<MpsInstance>> mps_instances(const Node& node,
                                               const std::vector<AllottedPartition>& parts);

struct MpsConfig {
    std::string control = "nvidia-cuda-mps-control";  // --mps-control / XPART_MPS_CONTROL
    std::string job_dir;
    uid_t uid = 0;  // owner of the directories; start_server -uid
    gid_t gid = 0;
    std::chrono::milliseconds timeout{10000};  // readiness / quit deadline per step
};

std::string mps_pipe_dir(const MpsConfig& c, const std::string& instance);
std::string mps_log_dir(const MpsConfig& c, const std::string& instance);
// Where ranks without a Prolog-made directory keep theirs: /tmp/xpart-mps-<uid>.
std::string user_runtime_base(uid_t uid);

// Creates `dir` (mode 0700, owned by uid:gid) or accepts an existing one only if it is a real
// directory (not a link) owned by uid: a /tmp path must not be pre-planted by someone else.
Status make_private_dir(const std::string& dir, uid_t uid, gid_t gid);

// Starts the daemons of `instances` that are not running yet, all at once, then waits until
// each answers get_server_list and runs `start_server -uid <uid>` on it.
Status start_daemons(const MpsConfig& c, const std::vector<MpsInstance>& instances);
// Waits until each daemon answers get_server_list; fails early when one died.
Status wait_ready(const MpsConfig& c, const std::vector<MpsInstance>& instances);

struct MpsDaemonState {
    std::string instance;
    std::string uuid;
    pid_t pid = -1;        // from the pid file; -1 when there is none
    bool alive = false;    // the pid runs and is an MPS control daemon
    bool answers = false;  // get_server_list succeeded (only probed when alive)
    std::string servers;   // its get_server_list answer, one pid per line
};

// Every instance directory of the job. `probe`: also ask each live daemon.
std::vector<MpsDaemonState> daemon_states(const MpsConfig& c, bool probe);
// The daemon's pid when it runs, else -1.
pid_t live_daemon_pid(const MpsConfig& c, const std::string& instance);

// quit every daemon of the job, wait for each to exit (SIGKILL past the timeout), remove the
// job directory. Errors are collected; everything possible is still stopped and removed.
Status stop_job(const MpsConfig& c);

// Job directories under `base` (job-*) with no live daemon and no live member: left by a
// crashed node or a killed job. Returns the directories removed.
std::vector<std::string> cleanup_stale(const std::string& base, const std::string& control);

}  // namespace xpart::launch
