#include "mps/root/job_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <memory>

#include "mps/whole_file.hpp"

namespace xpart::mps {
namespace {

constexpr const char* kUserLeaf = "user";
constexpr const char* kLock = "lock";

std::string errno_text(int err = errno) { return std::strerror(err); }

// Opens `name` below `parent` as a directory, never through a link, and checks that its
// owner is `owner` and nobody else can write to it (`private_to_owner`: mode 0700 exactly).
Result<UniqueFd> open_dir_checked(int parent, const std::string& name, const std::string& shown,
                                  uid_t owner, bool private_to_owner) {
    UniqueFd fd(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return Error{shown + ": " + (errno == ELOOP || errno == ENOTDIR ? "not a directory (a link?)"
                                                                        : errno_text())};
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Error{shown + ": fstat: " + errno_text()};
    if (st.st_uid != owner)
        return Error{shown + ": owned by uid " + std::to_string(st.st_uid) + ", expected " +
                     std::to_string(owner)};
    if (private_to_owner ? (st.st_mode & 077) != 0 : (st.st_mode & 022) != 0)
        return Error{shown + ": mode " + mode_text(st.st_mode) +
                     (private_to_owner ? " is open to others; expected 0700"
                                       : " is writable by others; expected 0755")};
    return fd;
}

// mkdirat that accepts an existing entry (checked by the open that follows).
Status make_dir_at(int parent, const std::string& name, mode_t mode, const std::string& shown) {
    if (mkdirat(parent, name.c_str(), mode) != 0 && errno != EEXIST)
        return Error{shown + ": mkdir: " + errno_text()};
    return ok_status();
}

// The fd's directory as a path the kernel resolves to that very directory, whatever happens
// to the names above it meanwhile.
std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// Root's leaf for the user: a tmpfs of its own on the directory root just made, so what the
// user writes is bounded per job and never fills the run directory's filesystem.
Status mount_user_tmpfs(int leaf_fd, const process::Credentials& user, unsigned mib, const std::string& shown) {
    const std::string options = "size=" + std::to_string(mib) + "m,nr_inodes=4096,mode=0700,uid=" +
                                std::to_string(user.uid) + ",gid=" + std::to_string(user.gid);
    if (mount("xpart-job", fd_path(leaf_fd).c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              options.c_str()) != 0)
        return Error{shown + ": mount tmpfs (" + options + "): " + errno_text()};
    return ok_status();
}

}  // namespace

Status check_job_id(const std::string& job_id) {
    if (job_id.empty() || job_id.size() > 64) return Error{"job id '" + job_id + "' is not valid"};
    for (char c : job_id)
        if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
            c != '_' && c != '-' && c != '+')
            return Error{"job id '" + job_id + "' is not valid (letters, digits, _ - + only)"};
    return ok_status();
}

Result<JobDir> JobDir::open_checked(const std::string& run_dir, const std::string& job_id,
                                    bool create, const process::Credentials* user, unsigned mib) {
    if (auto s = check_job_id(job_id); !s) return s.error();
    // The run dir and the job directories are root's on a node. A user (a rank reading root's
    // records) trusts only root's; root, or a test run as a user, its own.
    if (create) {
        if (mkdir(run_dir.c_str(), 0755) != 0 && errno != EEXIST)
            return Error{run_dir + ": mkdir: " + errno_text()};
    }
    struct stat run_st;
    const uid_t owner = lstat(run_dir.c_str(), &run_st) == 0 && run_st.st_uid == 0 ? 0 : geteuid();
    auto run_fd = open_dir_checked(AT_FDCWD, run_dir, run_dir, owner, false);
    if (!run_fd) return run_fd.error();
    JobDir d;
    d.run_dir_ = run_dir;
    d.job_id_ = job_id;
    d.path_ = run_dir + "/job_" + job_id;
    d.user_dir_mib_ = create ? mib : 0;
    const std::string name = "job_" + job_id;
    if (create)
        if (auto s = make_dir_at(run_fd->get(), name, 0755, d.path_); !s) return s.error();
    auto dir_fd = open_dir_checked(run_fd->get(), name, d.path_, owner, false);
    if (!dir_fd) return dir_fd.error();

    const std::string leaf = d.user_dir();
    if (create) {
        if (mkdirat(dir_fd->get(), kUserLeaf, 0700) == 0) {
            // Made just now by root in root's directory: hand it over through the descriptor.
            UniqueFd fd(openat(dir_fd->get(), kUserLeaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            Status given = fd.valid() ? ok_status() : Error{leaf + ": " + errno_text()};
            if (given && geteuid() == 0) {
                given = mount_user_tmpfs(fd.get(), *user, mib, leaf);
            } else if (given) {
                if (fchown(fd.get(), user->uid, user->gid) != 0)
                    given = Error{leaf + ": chown to uid " + std::to_string(user->uid) + ": " + errno_text()};
                else if (fchmod(fd.get(), 0700) != 0)
                    given = Error{leaf + ": chmod: " + errno_text()};
            }
            if (!given) {
                (void)unlinkat(dir_fd->get(), kUserLeaf, AT_REMOVEDIR);  // nothing half-made stays
                return given.error();
            }
        } else if (errno != EEXIST) {
            return Error{leaf + ": mkdir: " + errno_text()};
        }
    }
    struct stat st;
    if (fstatat(dir_fd->get(), kUserLeaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT || create) return Error{leaf + ": " + errno_text()};
        d.user_ = {owner, getegid()};  // removed by an interrupted Epilog: nothing of the user's
    } else if (create) {
        // A step of the job adds to what the Prolog made: still the user's, closed to others.
        auto leaf_fd = open_dir_checked(dir_fd->get(), kUserLeaf, leaf, user->uid, true);
        if (!leaf_fd) return leaf_fd.error();
        d.user_ = *user;
    } else {
        // Only its owner matters to root, which never enters it: whatever mode the user gave
        // it, the Epilog goes on.
        if (!S_ISDIR(st.st_mode)) return Error{leaf + ": not a directory"};
        d.user_ = {st.st_uid, st.st_gid};
    }
    d.run_fd_ = std::make_shared<UniqueFd>(std::move(*run_fd));
    d.dir_fd_ = std::make_shared<UniqueFd>(std::move(*dir_fd));
    return d;
}

Result<JobDir> JobDir::create(const std::string& run_dir, const std::string& job_id,
                              const process::Credentials& user, unsigned user_dir_mib) {
    if (user_dir_mib == 0 || user_dir_mib > 65536)
        return Error{"job directory size " + std::to_string(user_dir_mib) + " MiB: expected 1 to 65536"};
    return open_checked(run_dir, job_id, true, &user, user_dir_mib);
}

Result<std::optional<JobDir>> JobDir::open(const std::string& run_dir, const std::string& job_id) {
    if (auto s = check_job_id(job_id); !s) return s.error();
    struct stat st;
    const std::string path = run_dir + "/job_" + job_id;
    if (lstat(path.c_str(), &st) != 0 && errno == ENOENT) return std::optional<JobDir>();
    auto d = open_checked(run_dir, job_id, false, nullptr, 0);
    if (!d) return d.error();
    return std::optional<JobDir>(std::move(*d));
}

Result<std::optional<JobLock>> JobDir::lock(bool wait) const {
    UniqueFd fd(openat(dir_fd_->get(), kLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return Error{path_ + "/" + kLock + ": " + errno_text()};
    if (flock(fd.get(), LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
        if (!wait && errno == EWOULDBLOCK) return std::optional<JobLock>();
        return Error{path_ + "/" + kLock + ": flock: " + errno_text()};
    }
    return std::optional<JobLock>(JobLock(std::move(fd)));
}

Result<std::optional<std::string>> JobDir::read_file(const std::string& name) const {
    return read_whole_file(dir_fd_->get(), name, path_ + "/" + name);
}

bool JobDir::has_user_dir() const { return has_file(kUserLeaf); }

std::string JobDir::space_note() const {
    unsigned mib = user_dir_mib_;
    struct statvfs fs;
    if (mib == 0 && statvfs(user_dir().c_str(), &fs) == 0)
        mib = static_cast<unsigned>(fs.f_blocks * fs.f_frsize / (1024 * 1024));
    return "job " + job_id_ + "'s directory " + user_dir() +
           (mib ? " (" + std::to_string(mib) + " MiB)" : std::string()) + " is full";
}

bool JobDir::has_file(const std::string& name) const {
    struct stat st;
    return fstatat(dir_fd_->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

std::vector<std::string> JobDir::file_names() const {
    std::vector<std::string> names;
    std::unique_ptr<DIR, int (*)(DIR*)> entries(fdopendir(dup(dir_fd_->get())), closedir);
    if (!entries) return names;
    rewinddir(entries.get());  // the dup shares its offset with every earlier listing
    while (dirent* e = readdir(entries.get()))
        if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..") && std::strcmp(e->d_name, kUserLeaf))
            names.emplace_back(e->d_name);
    std::sort(names.begin(), names.end());
    return names;
}

Status JobDir::write_file(const std::string& name, const std::string& content) const {
    return write_whole_file(dir_fd_->get(), name, content, 0644, path_ + "/" + name);
}

Status JobDir::remove() const {
    std::string errors;
    auto note = [&errors](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
    struct stat st, dir_st;
    if (fstatat(dir_fd_->get(), kUserLeaf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        const std::string leaf = user_dir();
        if (fstat(dir_fd_->get(), &dir_st) == 0 && st.st_dev != dir_st.st_dev) {
            // Root's tmpfs: unmounted by its mount point in root's directory, whatever the user
            // left in it; lazily, as a process of the user's may still hold it open.
            const std::string at = fd_path(dir_fd_->get()) + "/" + kUserLeaf;
            if (umount2(at.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0)
                return Error{leaf + ": umount: " + errno_text()};
        } else {
            // Emptied by its owner: whatever links it holds can only reach what that user may. A
            // user process still writing there can refill it between the emptying and the rmdir:
            // a few tries, then the directory stays for the next cleanup.
            for (int attempt = 0; attempt < 3; ++attempt) {
                auto rc = run_as(user_, [&leaf] {
                    std::error_code ec;
                    std::filesystem::permissions(leaf, std::filesystem::perms::owner_all,
                                                 std::filesystem::perm_options::add, ec);
                    for (const auto& e : std::filesystem::directory_iterator(leaf, ec))
                        std::filesystem::remove_all(e.path(), ec);
                    return ec ? 1 : 0;
                });
                if (!rc) {
                    note(rc.error().message);
                    break;
                }
                if (unlinkat(dir_fd_->get(), kUserLeaf, AT_REMOVEDIR) == 0) break;
            }
        }
        // Root's files (the `ended` mark among them) stay with it, for that cleanup.
        if (fstatat(dir_fd_->get(), kUserLeaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            unlinkat(dir_fd_->get(), kUserLeaf, AT_REMOVEDIR) != 0)
            return Error{leaf + ": rmdir: " + errno_text()};
    }
    for (const auto& n : file_names())
        if (unlinkat(dir_fd_->get(), n.c_str(), 0) != 0) note(path_ + "/" + n + ": " + errno_text());
    if (errors.empty() && unlinkat(run_fd_->get(), ("job_" + job_id_).c_str(), AT_REMOVEDIR) != 0)
        note(path_ + ": rmdir: " + errno_text());
    if (!errors.empty()) return Error{errors};
    return ok_status();
}

std::vector<std::string> job_ids_in(const std::string& run_dir) {
    std::vector<std::string> ids;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(run_dir, ec)) {
        std::string n = e.path().filename();
        if (n.rfind("job_", 0) == 0 && !e.is_symlink(ec) && e.is_directory(ec)) ids.push_back(n.substr(4));
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace xpart::mps
