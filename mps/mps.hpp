// CUDA MPS, one control daemon per MIG GPU instance (or per whole GPU). The daemons run as the
// job's user, in the foreground mode of nvidia-cuda-mps-control (`-f`) spawned by xpart, so
// their pids are known from the start: NVIDIA's daemon writes no pid file, and a file a user
// can write would prove nothing anyway. Layout under the config's `dir` (the user's):
//   <dir>/<instance>/pipe/   CUDA_MPS_PIPE_DIRECTORY (control, control_lock,
//                            control_privileged sockets, log fifo), 0700
//   <dir>/<instance>/log/    CUDA_MPS_LOG_DIRECTORY (control.log: the daemon's output;
//                            server.log), 0700
// and the daemons started are recorded (instance, uuid, pid, start time, uid) in `records`:
// root's own file when the Prolog started them, the user's when ranks did.
// Instance names are short ("gpu0-gi3", "gpu2") so socket paths stay under 108 bytes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cgroup/device_rule.hpp"
#include "binding/allotment.hpp"
#include "process/credentials.hpp"
#include "libxpart/env_map.hpp"
#include "mps/mps_options.hpp"
#include "process/process_identity.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"

namespace xpart::mps {

struct MpsInstance {
    MpsInstance() = default;
    MpsInstance(std::string n, std::string u) : name(std::move(n)), uuid(std::move(u)) {}
    std::string name;  // "gpu<minor>-gi<gi>" (MIG) or "gpu<minor>" (whole GPU)
    std::string uuid;  // MIG-<uuid> of the instance's (first) MIG device, or GPU-<uuid>
    // What its daemon may open when root houses it: mps_instances sets the allotted partitions
    // of this instance, every other partition of the node denied. An instance made by hand
    // (tests) governs no device.
    cgroup::DeviceRuleSet rules{cgroup::DevicePolicy::DenyManaged, {}, {}};
};

// The instance a partition belongs to (no rules). Error for AMD partitions (MPS is NVIDIA only).
Result<MpsInstance> mps_instance_of(const Node& node, const binding::AllottedPartition& part);
// Distinct instances of these partitions, in first-seen order, each with its rules.
Result<std::vector<MpsInstance>> mps_instances(const Node& node,
                                               const std::vector<binding::AllottedPartition>& parts);

// A daemon xpart started: what it serves and who it is.
struct MpsDaemonRecord {
    std::string instance;
    std::string uuid;
    process::ProcessIdentity process;
};
// One line per daemon: "<instance> <uuid> <pid> <start time> <uid>".
std::string format_records(const std::vector<MpsDaemonRecord>& records);
Result<std::vector<MpsDaemonRecord>> parse_records(const std::string& text, const std::string& file);

// Where root houses the daemons it starts, one place per instance that root makes, joins and
// ends (mps/root/ implements it with cgroups of its own): ending the place is how root stops
// what a daemon forked. The user's side knows only this, never root's cgroups.
class DaemonHousing {
public:
    virtual ~DaemonHousing() = default;
    // The cgroup.procs file a process writes "0" to, to join the place of `instance`.
    virtual std::string procs_file(const std::string& instance) const = 0;
    // Makes the place of `instance` with `rules`; one left by an earlier start is ended first.
    virtual Status make(const std::string& instance, const cgroup::DeviceRuleSet& rules) const = 0;
    // Kills every member and removes the place: the line that says so ("<name>" or "<name>
    // (<n> killed)"). `grace`: how long members may take to leave by themselves first. Error,
    // naming the place and what is left, when a member outlives `wait`.
    virtual Result<std::string> end(const std::string& instance, std::chrono::milliseconds wait,
                                    std::chrono::milliseconds grace) const = 0;
};

// Where records are kept: a file the caller may read (ranks read root's) and write.
struct RecordStore {
    std::function<Result<std::optional<std::string>>()> read;
    std::function<Status(const std::string&)> write;
};
// A plain file (the user's own directory).
RecordStore file_record_store(const std::string& path);

struct MpsConfig {
    std::string control = kDefaultMpsControl;
    std::string dir;           // the user's: <dir>/<instance>/{pipe,log}
    RecordStore records;       // the daemons started
    process::Credentials user;          // daemons, and every command inside `dir`, run as this user
    std::chrono::milliseconds timeout = kDefaultMpsTimeout;  // readiness / quit deadline per step
    EnvMap extra_env;          // added to the daemons' minimal environment (tests only)
    // Root's daemons: each daemon, its servers and root's control commands for it run in its
    // instance's place, and stopping ends that place. Unset for the daemons a user's ranks
    // start: they stay in the rank's own cgroup.
    std::shared_ptr<const DaemonHousing> housing;
    // Added to an out-of-space error in `dir` (which job's directory is full, and its limit).
    std::string space_note;
};

std::string mps_pipe_dir(const MpsConfig& c, const std::string& instance);
std::string mps_log_dir(const MpsConfig& c, const std::string& instance);

// The daemons' whole environment: PATH, the instance's device, its pipe and log directories
// (and `extra_env`); nothing of the caller's, root's least of all.
EnvMap daemon_env(const MpsConfig& c, const MpsInstance& inst);

// What a start noticed that does not fail it (a pre-started server that did not stay up: the
// daemon starts one when a client connects, and without a GPU none can run).
struct MpsStartReport {
    std::vector<std::string> warnings;
};

// Starts the daemons of `instances` that are not running yet, all at once, records them,
// waits until each answers get_server_list, then pre-starts each server for the user
// (start_server -uid). On error, the daemons this call started are stopped again.
Result<MpsStartReport> start_daemons(const MpsConfig& c, const std::vector<MpsInstance>& instances);
// Waits until each recorded daemon of `instances` answers; fails early when one died.
Status wait_ready(const MpsConfig& c, const std::vector<MpsInstance>& instances);

struct MpsDaemonState {
    MpsDaemonRecord record;
    bool alive = false;    // the recorded process still runs (same pid, start time, uid)
    bool answers = false;  // get_server_list succeeded (only probed when alive)
    std::string servers;   // its get_server_list answer, one pid per line
};
// Every recorded daemon. `probe`: also ask each live one.
Result<std::vector<MpsDaemonState>> daemon_states(const MpsConfig& c, bool probe);
// The recorded daemon of `instance` when it still runs.
std::optional<process::ProcessIdentity> live_daemon(const MpsConfig& c, const std::string& instance);

struct MpsStopReport {
    std::vector<std::string> ended;    // root's: each daemon's place ended, DaemonHousing::end's line
    std::vector<std::string> notes;    // quit refused, SIGKILL needed, files left: logged, not fatal
    std::vector<std::string> survivors;  // a recorded daemon still running after SIGKILL
};
// quit every recorded daemon, wait for each to exit (SIGKILL past the timeout, only to the
// recorded process), remove the instances' directories (as the user) and the records.
MpsStopReport stop_daemons(const MpsConfig& c);

}  // namespace xpart::mps
