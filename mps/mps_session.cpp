#include "mps/mps_session.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "process/process_identity.hpp"
#include "libxpart/text.hpp"
#include "mps/private_dir.hpp"

namespace xpart::mps {
namespace {

namespace fs = std::filesystem;

// Holds the step directory's flock. The last rank out removes the directory while another
// may be between making it and opening the lock, or waiting on the lock: the first retries
// (ENOENT), a holder whose inode is no longer the path's retries on the new one.
class StepLock {
public:
    static Result<StepLock> acquire(const std::string& dir) {
        const std::string path = dir + "/lock";
        for (int attempt = 0; attempt < 100; ++attempt) {
            if (auto s = make_private_dir(dir); !s) return s.error();
            int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            // The last rank out removed the directory between our mkdir and open: again.
            if (fd < 0 && errno == ENOENT) continue;
            if (fd < 0) return Error{path + ": " + std::strerror(errno)};
            if (flock(fd, LOCK_EX) != 0) {
                int err = errno;
                close(fd);
                return Error{path + ": flock: " + std::strerror(err)};
            }
            struct stat held, now;
            if (fstat(fd, &held) == 0 && stat(path.c_str(), &now) == 0 &&
                held.st_ino == now.st_ino && held.st_dev == now.st_dev)
                return StepLock(fd);
            close(fd);
        }
        return Error{path + ": lock file keeps being replaced"};
    }
    StepLock(StepLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    StepLock& operator=(StepLock&&) = delete;
    ~StepLock() {
        if (fd_ >= 0) close(fd_);  // closing drops the flock
    }

private:
    explicit StepLock(int fd) : fd_(fd) {}
    int fd_;
};


}  // namespace

std::vector<pid_t> prune_members(const std::string& step_dir) {
    std::vector<pid_t> live;
    std::error_code ec;
    for (const auto& m : fs::directory_iterator(step_dir + "/members", ec)) {
        auto pid = parse_u64(std::string(m.path().filename()));
        // A member is a rank of this user: a zombie, or another user's process under a reused
        // pid, is not one (kill(pid, 0) counted both as alive).
        std::optional<process::ProcessIdentity> id;
        if (pid && *pid < (1u << 30)) id = process::identify(static_cast<pid_t>(*pid));
        if (id && id->uid == getuid())
            live.push_back(static_cast<pid_t>(*pid));
        else
            fs::remove(m.path(), ec);
    }
    return live;
}

Result<MpsSession> MpsSession::join(const MpsConfig& config, bool managed,
                                    const std::vector<MpsInstance>& instances) {
    auto s = join_step(config, managed, instances);
    // ENOSPC from anywhere below the job's directory: say which job's directory is full.
    if (!s && !config.space_note.empty() &&
        s.error().message.find(std::strerror(ENOSPC)) != std::string::npos)
        return Error{s.error().message + " (" + config.space_note + ")"};
    return s;
}

Result<MpsSession> MpsSession::join_step(const MpsConfig& config, bool managed,
                                         const std::vector<MpsInstance>& instances) {
    MpsSession s;
    s.config_ = config;
    s.pid_ = getpid();
    s.managed_ = managed;
    if (!managed) {
        auto lock = StepLock::acquire(config.dir);
        if (!lock) return lock.error();
        prune_members(config.dir);
        // Starts only what is not running: the first rank starts all, a later one restarts
        // nothing unless a daemon is missing.
        auto started = start_daemons(config, instances);
        if (!started) {
            // Nothing half-started stays behind when no other rank uses the daemons.
            if (prune_members(config.dir).empty()) (void)stop_daemons(config);
            return started.error();
        }
        s.warnings_ = started->warnings;
        if (auto st = make_private_dir(config.dir + "/members"); !st) return st.error();
        const std::string member = config.dir + "/members/" + std::to_string(s.pid_);
        int fd = open(member.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            Error e{member + ": " + std::strerror(errno)};
            if (prune_members(config.dir).empty()) (void)stop_daemons(config);
            return e;
        }
        close(fd);
    }
    s.joined_ = true;
    // The Prolog returned only once its daemons answered: that they still run is enough (and
    // ranks need not know which control program root used).
    if (managed) {
        for (const auto& inst : instances)
            if (!live_daemon(config, inst.name))
                return Error{"the Prolog's MPS control daemon for " + inst.uuid + " is not running"};
        return s;
    }
    if (auto st = wait_ready(config, instances); !st) {
        (void)s.leave();
        return st.error();
    }
    return s;
}

Status MpsSession::leave() {
    if (!joined_ || managed_) {
        joined_ = false;
        return ok_status();
    }
    joined_ = false;
    auto lock = StepLock::acquire(config_.dir);
    if (!lock) return lock.error();
    std::error_code ec;
    fs::remove(config_.dir + "/members/" + std::to_string(pid_), ec);
    if (!prune_members(config_.dir).empty()) return ok_status();
    auto r = stop_daemons(config_);
    std::string errors;
    for (const auto& n : r.survivors) errors += (errors.empty() ? "" : "; ") + n;
    fs::remove_all(config_.dir, ec);
    if (!errors.empty()) return Error{errors};
    return ok_status();
}

Result<EnvMap> mps_rank_env(const Node& node, const MpsConfig& config,
                            const std::vector<binding::AllottedPartition>& used, const binding::AllottedPartition& mine) {
    auto instance = mps_instance_of(node, mine);
    if (!instance) return instance.error();
    int sharers = 0;
    for (const auto& u : used) {
        auto other = mps_instance_of(node, u);
        sharers += other && other->name == instance->name;
    }
    // Daemons run for the instances the ranks were planned on: none serves another one.
    if (sharers == 0) return Error{"no MPS daemon of this step serves " + instance->name};
    EnvMap env{{"CUDA_MPS_PIPE_DIRECTORY", mps_pipe_dir(config, instance->name)},
               {"CUDA_MPS_LOG_DIRECTORY", mps_log_dir(config, instance->name)}};
    if (sharers > 1) env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(100 / sharers);
    return env;
}

}  // namespace xpart::mps
