#include "launcher/mps_session.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "libxpart/text.hpp"

namespace xpart::launch {
namespace {

namespace fs = std::filesystem;

// Holds the job's flock. The lock file may be unlinked by the last rank out while another
// waits on it; a holder whose inode is no longer the path's retries on the new file.
class JobLock {
public:
    static Result<JobLock> acquire(const MpsConfig& c) {
        const std::string path = c.job_dir + "/lock";
        for (int attempt = 0; attempt < 100; ++attempt) {
            if (auto s = make_private_dir(c.job_dir, c.uid, c.gid); !s) return s.error();
            int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd < 0) return Error{path + ": " + std::strerror(errno)};
            if (flock(fd, LOCK_EX) != 0) {
                int err = errno;
                close(fd);
                return Error{path + ": flock: " + std::strerror(err)};
            }
            struct stat held, now;
            if (fstat(fd, &held) == 0 && stat(path.c_str(), &now) == 0 &&
                held.st_ino == now.st_ino && held.st_dev == now.st_dev)
                return JobLock(fd);
            close(fd);
        }
        return Error{path + ": lock file keeps being replaced"};
    }
    JobLock(JobLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    JobLock& operator=(JobLock&&) = delete;
    ~JobLock() {
        if (fd_ >= 0) close(fd_);  // closing drops the flock
    }

private:
    explicit JobLock(int fd) : fd_(fd) {}
    int fd_;
};

}  // namespace

std::vector<pid_t> prune_members(const std::string& job_dir) {
    std::vector<pid_t> live;
    std::error_code ec;
    for (const auto& m : fs::directory_iterator(job_dir + "/members", ec)) {
        auto pid = parse_u64(std::string(m.path().filename()));
        if (pid && *pid < (1u << 30) &&
            (kill(static_cast<pid_t>(*pid), 0) == 0 || errno == EPERM))
            live.push_back(static_cast<pid_t>(*pid));
        else
            fs::remove(m.path(), ec);
    }
    return live;
}

Result<MpsSession> MpsSession::join(const MpsConfig& config,
                                    const std::vector<MpsInstance>& instances) {
    MpsSession s;
    s.config_ = config;
    s.pid_ = getpid();
    // A Prolog-made directory belongs to root's `xpart mps start`: ranks only use it.
    s.managed_ = fs::exists(config.job_dir + "/managed");
    if (!s.managed_) {
        auto lock = JobLock::acquire(config);
        if (!lock) return lock.error();
        {
            prune_members(config.job_dir);
            // Starts only what is not running: the first rank starts all, a later one
            // restarts nothing unless a daemon is missing.
            if (auto st = start_daemons(config, instances); !st) {
                // Nothing half-started stays behind when no other rank uses the daemons.
                if (prune_members(config.job_dir).empty()) (void)stop_job(config);
                return st.error();
            }
            if (auto st = make_private_dir(config.job_dir + "/members", config.uid, config.gid); !st)
                return st.error();
            std::ofstream(config.job_dir + "/members/" + std::to_string(s.pid_));
        }
    }
    s.joined_ = true;
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
    auto lock = JobLock::acquire(config_);
    if (!lock) return lock.error();
    std::error_code ec;
    fs::remove(config_.job_dir + "/members/" + std::to_string(pid_), ec);
    if (!prune_members(config_.job_dir).empty()) return ok_status();
    return stop_job(config_);
}

}  // namespace xpart::launch
