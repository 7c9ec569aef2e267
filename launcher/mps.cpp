#include "launcher/mps.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <thread>

#include "launcher/spawn.hpp"
#include "libxpart/text.hpp"

extern char** environ;

namespace xpart::launch {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const char* kPidFile = "nvidia-cuda-mps-control.pid";

std::string read_small(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string basename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A pid counts as the daemon only if it runs and its command line names the control program:
// after a crash and reboot an old pid file may point at an unrelated process.
bool is_daemon(pid_t pid, const std::string& control) {
    if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
    std::string cmdline = read_small("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.empty()) return false;  // a zombie has no command line: it is gone
    return cmdline.find(basename_of(control)) != std::string::npos;
}

pid_t pid_file_pid(const MpsConfig& c, const std::string& instance) {
    auto n = parse_u64(trim(read_small(mps_pipe_dir(c, instance) + "/" + kPidFile)));
    return n && *n > 0 && *n < (1u << 30) ? static_cast<pid_t>(*n) : -1;
}

EnvMap daemon_env(const MpsConfig& c, const MpsInstance& inst) {
    // The caller's environment (PATH, LD_LIBRARY_PATH for the driver) with the instance's own
    // device and directories.
    EnvMap env = env_from_environ(environ);
    env["CUDA_VISIBLE_DEVICES"] = inst.uuid;
    env["CUDA_MPS_PIPE_DIRECTORY"] = mps_pipe_dir(c, inst.name);
    env["CUDA_MPS_LOG_DIRECTORY"] = mps_log_dir(c, inst.name);
    return env;
}

Result<SpawnResult> control_command(const MpsConfig& c, const MpsInstance& inst,
                                    const std::string& command, std::chrono::milliseconds timeout) {
    return run_with_input({c.control}, daemon_env(c, inst), command + "\n", timeout);
}

std::string instance_uuid(const MpsConfig& c, const std::string& name) {
    return trim(read_small(c.job_dir + "/" + name + "/uuid"));
}

std::vector<std::string> instance_names(const std::string& job_dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(job_dir, ec)) {
        std::string n = e.path().filename();
        if (n.rfind("gpu", 0) == 0 && e.is_directory(ec)) names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Runs `step` for every instance at once (each waits on its own helper process) and returns
// the first error in instance order: seven instances cost about what one does.
template <class Step>
Status for_each_parallel(const std::vector<MpsInstance>& instances, Step step) {
    std::vector<std::future<Status>> results;
    for (const auto& inst : instances)
        results.push_back(std::async(std::launch::async, [&step, &inst] { return step(inst); }));
    Status first = ok_status();
    for (auto& r : results) {
        Status s = r.get();
        if (first && !s) first = s;
    }
    return first;
}

}  // namespace

Result<MpsInstance> mps_instance_of(const Node& node, const AllottedPartition& part) {
    const Gpu& gpu = node.gpus[part.gpu];
    const Partition& p = gpu.partitions[part.partition];
    if (gpu.vendor != Vendor::Nvidia)
        return Error{"--mps: partition " + p.uuid + " is an AMD partition; MPS is NVIDIA only"};
    std::string name = "gpu" + std::to_string(gpu.minor >= 0 ? gpu.minor : gpu.index);
    if (p.gi >= 0) name += "-gi" + std::to_string(p.gi);
    return MpsInstance{name, p.gi >= 0 ? p.uuid : gpu.uuid};
}

Result<std::vector<MpsInstance>> mps_instances(const Node& node,
                                               const std::vector<AllottedPartition>& parts) {
    std::vector<MpsInstance> out;
    for (const auto& p : parts) {
        auto inst = mps_instance_of(node, p);
        if (!inst) return inst.error();
        bool seen = false;
        for (const auto& o : out) seen = seen || o.name == inst->name;
        if (!seen) out.push_back(*inst);
    }
    return out;
}

std::string mps_pipe_dir(const MpsConfig& c, const std::string& instance) {
    return c.job_dir + "/" + instance + "/pipe";
}
std::string mps_log_dir(const MpsConfig& c, const std::string& instance) {
    return c.job_dir + "/" + instance + "/log";
}
std::string user_runtime_base(uid_t uid) { return "/tmp/xpart-mps-" + std::to_string(uid); }

Status make_private_dir(const std::string& dir, uid_t uid, gid_t gid) {
    if (mkdir(dir.c_str(), 0700) == 0) {
        if (geteuid() == 0 && chown(dir.c_str(), uid, gid) != 0)
            return Error{dir + ": chown " + std::to_string(uid) + ": " + std::strerror(errno)};
        return ok_status();
    }
    if (errno != EEXIST) return Error{dir + ": mkdir: " + std::strerror(errno)};
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) return Error{dir + ": " + std::strerror(errno)};
    if (!S_ISDIR(st.st_mode)) return Error{dir + ": exists and is not a directory"};
    if (st.st_uid != uid)
        return Error{dir + ": owned by uid " + std::to_string(st.st_uid) + ", expected " +
                     std::to_string(uid)};
    if ((st.st_mode & 077) != 0)
        return Error{dir + ": mode " + std::to_string(st.st_mode & 0777) +
                     " is open to others; expected 0700"};
    return ok_status();
}

pid_t live_daemon_pid(const MpsConfig& c, const std::string& instance) {
    pid_t pid = pid_file_pid(c, instance);
    return is_daemon(pid, c.control) ? pid : -1;
}

Status start_daemons(const MpsConfig& c, const std::vector<MpsInstance>& instances) {
    const auto deadline = Clock::now() + c.timeout;
    std::vector<std::pair<pid_t, const MpsInstance*>> started;
    if (auto s = make_private_dir(c.job_dir, c.uid, c.gid); !s) return s;
    for (const auto& inst : instances) {
        if (live_daemon_pid(c, inst.name) > 0) continue;
        const std::string top = c.job_dir + "/" + inst.name;
        for (const auto& d : {top, mps_pipe_dir(c, inst.name), mps_log_dir(c, inst.name)})
            if (auto s = make_private_dir(d, c.uid, c.gid); !s) return s;
        // A stale pid file or socket (a crashed daemon) would break the new one.
        unlink((mps_pipe_dir(c, inst.name) + "/" + kPidFile).c_str());
        unlink((mps_pipe_dir(c, inst.name) + "/control").c_str());
        std::ofstream(top + "/uuid") << inst.uuid << "\n";
        // All daemons start at once: seven instances should cost about what one does.
        auto pid = spawn_detached({c.control, "-d"}, daemon_env(c, inst));
        if (!pid) return pid.error();
        started.emplace_back(*pid, &inst);
    }
    for (const auto& [pid, inst] : started) {
        auto rc = wait_child(pid, deadline, c.control + " -d for " + inst->uuid);
        if (!rc) return rc.error();
        if (*rc != 0)
            return Error{c.control + " -d for " + inst->uuid + " exited with status " +
                         std::to_string(*rc) + "; see " + mps_log_dir(c, inst->name) +
                         "/control.log"};
    }
    if (auto s = wait_ready(c, instances); !s) return s;
    std::vector<MpsInstance> fresh;
    for (const auto& [pid, inst] : started) fresh.push_back(*inst);
    return for_each_parallel(fresh, [&](const MpsInstance& inst) -> Status {
        auto r = control_command(c, inst, "start_server -uid " + std::to_string(c.uid), c.timeout);
        if (!r) return r.error();
        if (r->exit_status != 0 || !trim(r->output).empty())
            return Error{"MPS " + inst.uuid + ": start_server -uid " + std::to_string(c.uid) +
                         " failed: " + trim(r->output)};
        return ok_status();
    });
}

// One instance: polls until its daemon answers get_server_list, fails early if it died.
Status wait_one_ready(const MpsConfig& c, const MpsInstance& inst, Clock::time_point deadline) {
    for (;;) {
        pid_t pid = pid_file_pid(c, inst.name);
        if (pid > 0 && !is_daemon(pid, c.control))
            return Error{"MPS control daemon for " + inst.uuid + " (pid " + std::to_string(pid) +
                         ") died; see " + mps_log_dir(c, inst.name) + "/control.log"};
        if (pid > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            auto r = control_command(c, inst, "get_server_list",
                                     std::max(left, std::chrono::milliseconds(1)));
            if (r && r->exit_status == 0) return ok_status();
        }
        if (Clock::now() >= deadline)
            return Error{"MPS control daemon for " + inst.uuid + " did not answer within " +
                         std::to_string(c.timeout.count()) + " ms; see " +
                         mps_log_dir(c, inst.name) + "/control.log"};
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

Status wait_ready(const MpsConfig& c, const std::vector<MpsInstance>& instances) {
    const auto deadline = Clock::now() + c.timeout;
    return for_each_parallel(instances, [&](const MpsInstance& inst) {
        return wait_one_ready(c, inst, deadline);
    });
}

std::vector<MpsDaemonState> daemon_states(const MpsConfig& c, bool probe) {
    std::vector<MpsDaemonState> out;
    for (const auto& name : instance_names(c.job_dir)) {
        MpsDaemonState s;
        s.instance = name;
        s.uuid = instance_uuid(c, name);
        s.pid = pid_file_pid(c, name);
        s.alive = is_daemon(s.pid, c.control);
        if (probe && s.alive) {
            auto r = control_command(c, {name, s.uuid}, "get_server_list", c.timeout);
            s.answers = r && r->exit_status == 0;
            if (s.answers) s.servers = r->output;
        }
        out.push_back(std::move(s));
    }
    return out;
}

Status stop_job(const MpsConfig& c) {
    std::string errors;
    auto states = daemon_states(c, false);
    for (const auto& s : states)
        if (s.alive) {
            auto r = control_command(c, {s.instance, s.uuid}, "quit", c.timeout);
            if (!r) errors += (errors.empty() ? "" : "; ") + r.error().message;
        }
    const auto deadline = Clock::now() + c.timeout;
    for (const auto& s : states) {
        if (!s.alive) continue;
        while (is_daemon(s.pid, c.control) && Clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (is_daemon(s.pid, c.control)) {
            kill(s.pid, SIGKILL);
            errors += (errors.empty() ? "" : "; ") + std::string("MPS daemon ") +
                      std::to_string(s.pid) + " for " + s.uuid + " ignored quit; killed";
        }
    }
    std::error_code ec;
    fs::remove_all(c.job_dir, ec);
    if (ec) errors += (errors.empty() ? "" : "; ") + c.job_dir + ": " + ec.message();
    if (!errors.empty()) return Error{errors};
    return ok_status();
}

std::vector<std::string> cleanup_stale(const std::string& base, const std::string& control) {
    std::vector<std::string> removed;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        std::string name = e.path().filename();
        if (name.rfind("job-", 0) != 0 || !e.is_directory(ec) || e.is_symlink(ec)) continue;
        MpsConfig c;
        c.control = control;
        c.job_dir = e.path();
        bool live = false;
        for (const auto& s : daemon_states(c, false)) live = live || s.alive;
        for (const auto& m : fs::directory_iterator(c.job_dir + "/members", ec)) {
            auto pid = parse_u64(std::string(m.path().filename()));
            live = live || (pid && kill(static_cast<pid_t>(*pid), 0) == 0);
        }
        if (live) continue;
        fs::remove_all(c.job_dir, ec);
        if (!ec) removed.push_back(c.job_dir);
    }
    return removed;
}

}  // namespace xpart::launch
