// The per-job directory root keeps on a node. The rule wherever root acts (Prolog, Epilog):
//   <run dir>/                 root's, 0755, not writable by others (/run/xpart: emptied at boot)
//   <run dir>/job_<id>/        root's, 0755
//   <run dir>/job_<id>/lock    root's, 0600: flock held while root starts, stops or removes
//   <run dir>/job_<id>/<file>  root's, 0644: what root recorded (the MPS daemons it started)
//   <run dir>/job_<id>/user/   the job user's, 0700: the only thing handed to the user; when
//                              root makes it, a tmpfs of its own (job_dir_mib, 4096 inodes,
//                              nosuid, nodev, noexec), so a user fills nothing but its own job's
// Root creates each level relative to the one above (mkdirat, openat with O_NOFOLLOW) and
// checks it with fstat, so no level can be a link or someone else's. Root never works inside
// user/: what must happen there (creating the MPS pipe and log directories, emptying it at the
// end) is done by a child that has become the job's user (run_as), so nothing a user plants
// there can redirect root; and nothing the user does to user/ (a chmod, filling it) keeps root
// from ending the job (the tmpfs is unmounted, lazily, by its mount point in root's directory).
// A user cannot squat the place either: only root writes <run dir>.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/unique_fd.hpp"
#include "process/credentials.hpp"
#include "libxpart/result.hpp"
#include "mps/private_dir.hpp"

namespace xpart::mps {

// Holds a job's flock until destroyed.
class JobLock {
public:
    explicit JobLock(UniqueFd fd) : fd_(std::move(fd)) {}

private:
    UniqueFd fd_;
};

class JobDir {
public:
    // Root's side (Prolog): creates the run dir, the job directory and the user's leaf, or
    // accepts existing ones only when each is what root would have made.
    static Result<JobDir> create(const std::string& run_dir, const std::string& job_id,
                                 const process::Credentials& user, unsigned user_dir_mib = 64);
    // An existing job directory (Epilog, cleanup, and ranks reading root's records); nullopt
    // when the job has none. The same checks as create.
    static Result<std::optional<JobDir>> open(const std::string& run_dir, const std::string& job_id);

    const std::string& path() const { return path_; }
    const std::string& job_id() const { return job_id_; }
    std::string user_dir() const { return path_ + "/user"; }
    // The owner of user/: every action inside it runs as this user.
    const process::Credentials& user() const { return user_; }
    bool has_user_dir() const;
    // For an out-of-space error in user/: "job <id>'s directory <user/> (<n> MiB) is full".
    std::string space_note() const;

    // flock on root's lock file; `wait` false: nullopt when another holds it.
    Result<std::optional<JobLock>> lock(bool wait) const;
    // Root's own files in the job directory: names without '/', written whole (temp + rename).
    Result<std::optional<std::string>> read_file(const std::string& name) const;
    Status write_file(const std::string& name, const std::string& content) const;
    bool has_file(const std::string& name) const;
    // Root's files in the job directory (user/ not among them), sorted.
    std::vector<std::string> file_names() const;
    // Empties user/ as its owner, then removes user/, root's files and the job directory.
    Status remove() const;

private:
    JobDir() = default;
    static Result<JobDir> open_checked(const std::string& run_dir, const std::string& job_id,
                                       bool create, const process::Credentials* user, unsigned mib);
    std::string run_dir_, job_id_, path_;
    unsigned user_dir_mib_ = 0;  // 0: not known (opened, not made)
    process::Credentials user_;
    std::shared_ptr<UniqueFd> run_fd_, dir_fd_;
};

// Job ids: Slurm's are decimal; anything that could escape the directory is refused.
Status check_job_id(const std::string& job_id);
// The job ids of <run dir>/job_* entries that are directories (not links).
std::vector<std::string> job_ids_in(const std::string& run_dir);

}  // namespace xpart::mps
