#include "cgroup/slurm_job_cgroups.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "cgroup/slurm_step_reclaim.hpp"
#include "libxpart/unique_fd.hpp"

namespace xpart::cgroup {

namespace {

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

// print_sluid's form (src/common/sluid.c): "s", then 13 upper-case Crockford base-32 digits.
bool is_sluid(std::string_view s) {
    constexpr std::string_view kDigits = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    if (s.size() != 14 || s[0] != 's') return false;
    for (char c : s.substr(1))
        if (kDigits.find(c) == std::string_view::npos) return false;
    return true;
}

// Post-order: Slurm's levels below `dir` first, rank leftovers judged on their own, anything
// else left alone (it is not ours to remove, and it keeps `dir` busy, which is reported).
void clean_below(Hierarchy h, const std::string& dir, const SweepHost& host, std::vector<SweepEntry>& out) {
    for_each_child(dir, out, [&](const std::string& name, const std::string& path) {
        if (auto rank = parse_rank_cgroup_name(name)) {
            out.push_back(sweep_rank_leftover(h, path, *rank, host));
        } else if (is_slurm_job_level(name) || made_by_user(path)) {
            clean_below(h, path, host, out);
            out.push_back(remove_if_empty(h, path, host));
        } else {
            out.push_back({path, SweepEntry::Outcome::Kept, "neither Slurm's nor an xpart rank cgroup"});
        }
    });
}

}  // namespace

Status check_query(const SlurmJobQuery& q) {
    if (!all_digits(q.job_id) || q.job_id.size() > 10)
        return Error{"--job '" + q.job_id + "': expected a decimal Slurm job id"};
    if (q.node.find('/') != std::string::npos || q.node == "." || q.node == "..")
        return Error{"--node '" + q.node + "': expected a Slurm NodeName"};
    if (!q.sluid.empty() && !is_sluid(q.sluid))
        return Error{"--sluid '" + q.sluid + "': expected a Slurm SLUID (s and 13 base-32 digits, as in SLURM_JOB_SLUID)"};
    return ok_status();
}

SlurmNodeCgroups slurm_node_cgroups(Hierarchy h, const std::string& mount, const std::string& node) {
    if (h == Hierarchy::V1) return {mount + "/" + (node.empty() ? "slurm" : "slurm_" + node), mount};
    const std::string scope =
        mount + "/system.slice/" + (node.empty() ? "slurmstepd.scope" : node + "_slurmstepd.scope");
    return {scope, scope};
}

bool is_slurm_job_level(std::string_view name) {
    return name.rfind("step_", 0) == 0 || name.rfind("task_", 0) == 0 || name == "slurm" || name == "user";
}

Result<std::vector<SweepEntry>> sweep_slurm_job(Hierarchy h, const std::string& mount, const SlurmJobQuery& q,
                                                const SweepHost& host) {
    if (auto s = check_query(q); !s) return s.error();
    const SlurmNodeCgroups where = slurm_node_cgroups(h, mount, q.node);
    std::vector<SweepEntry> out;
    if (!is_cgroup_dir(where.base)) return out;  // no job of this node ever ran on this hierarchy

    UniqueFd lock(::open(where.lock_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!lock.valid()) return Error{"cannot open " + where.lock_dir + " to lock it: " + std::strerror(errno)};
    if (::flock(lock.get(), LOCK_EX) != 0)
        return Error{"cannot lock " + where.lock_dir + ": " + std::strerror(errno)};

    auto jobs = slurm_job_dirs({mount, h == Hierarchy::V1 ? "devices" : ""}, q);
    if (!jobs) return jobs.error();
    for (const auto& job_dir : *jobs) {
        clean_below(h, job_dir, host, out);
        out.push_back(remove_if_empty(h, job_dir, host));
        // v1: the uid cgroup above it is removed too once empty, as slurmstepd itself tries
        // (another job of that user keeps it busy).
        if (h == Hierarchy::V1 && out.back().outcome == SweepEntry::Outcome::Removed) {
            SweepEntry e = remove_if_empty(h, job_dir.substr(0, job_dir.rfind('/')), host);
            if (e.outcome != SweepEntry::Outcome::Kept) out.push_back(std::move(e));
        }
    }
    return out;
}

Result<std::vector<std::string>> slurm_job_dirs(const MountedHierarchy& where, const SlurmJobQuery& q) {
    if (auto s = check_query(q); !s) return s.error();
    std::vector<std::string> out;
    const bool v2 = where.controller.empty();
    const std::string base = slurm_node_cgroups(v2 ? Hierarchy::V2 : Hierarchy::V1, where.mount, q.node).base;
    const std::string job = "job_" + q.job_id;
    if (v2) {
        // Named by the SLUID on 26.05 (by job id with CgroupJobIdPaths=yes, and before 26.05).
        for (const std::string& name : {job, q.sluid})
            if (!name.empty() && is_cgroup_dir(base + "/" + name)) out.push_back(base + "/" + name);
        return out;
    }
    if (!is_cgroup_dir(base)) return out;  // no job of this node ever ran on this hierarchy
    // v1: the job hangs below its owner's uid_<uid>.
    auto users = child_dirs(base);
    if (!users) return users.error();
    for (const auto& user : *users)
        if (user.rfind("uid_", 0) == 0 && all_digits(user.substr(4)) && is_cgroup_dir(base + "/" + user + "/" + job))
            out.push_back(base + "/" + user + "/" + job);
    return out;
}

SlurmJobEnd end_slurm_job(const std::vector<MountedHierarchy>& where, const SlurmJobQuery& q,
                          std::chrono::milliseconds wait) {
    SlurmJobEnd out;
    if (auto s = check_query(q); !s) {
        out.failed.push_back(s.error().message);
        return out;
    }
    for (const auto& h : where) {
        auto dirs = slurm_job_dirs(h, q);
        if (!dirs) {
            out.failed.push_back(dirs.error().message);
            continue;
        }
        for (const auto& dir : *dirs) {
            auto killed = kill_subtree(h, dir, wait);
            if (!killed) {
                out.failed.push_back(killed.error().message);
                continue;
            }
            out.killed += killed->signalled;
            out.survivors.insert(out.survivors.end(), killed->survivors.begin(), killed->survivors.end());
            // devices and v2: sweep_slurm_job, which knows our rank cgroups and v1 state files.
            if (!killed->survivors.empty() || h.controller.empty() || h.controller == "devices") continue;
            if (auto s = remove_cgroup_tree(dir); !s) out.failed.push_back(s.error().message);
        }
    }
    return out;
}

}  // namespace xpart::cgroup
