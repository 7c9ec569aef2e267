#include "mps/root/mps_cgroups.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>

#include "cgroup/cgroup_kill.hpp"
#include "cgroup/device_cgroup.hpp"
#include "cgroup/rank_leftover.hpp"
#include "mps/root/job_dir.hpp"
#include "mps/mps_options.hpp"

namespace xpart::mps {
namespace {

std::string group_name(const std::string& run_dir) {
    if (run_dir == kDefaultRunDir) return "xpart";
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: short, stable, no library
    for (unsigned char c : run_dir) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return std::string("xpart-") + hex;
}

// A level root made: a real directory (no link), root's. mkdir when missing.
Status root_level(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        return Error{"cannot create cgroup " + dir + ": " + std::strerror(errno)};
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0) return Error{"cgroup " + dir + ": " + std::strerror(errno)};
    if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
        return Error{"cgroup " + dir + ": owned by uid " + std::to_string(st.st_uid) +
                     (S_ISDIR(st.st_mode) ? "" : " and not a directory") + "; expected root's directory"};
    return ok_status();
}

bool exists(const std::string& dir) {
    struct stat st;
    return ::lstat(dir.c_str(), &st) == 0;
}

}  // namespace

std::string describe_ended(const std::string& name, std::size_t killed) {
    return killed == 0 ? name : name + " (" + std::to_string(killed) + " killed)";
}

std::string mps_cgroup_name(const std::string& scope, const std::string& instance) {
    return scope + "." + instance;
}

Result<MpsCgroups> MpsCgroups::for_job(const std::string& run_dir, const std::string& job_id) {
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return Error{"MPS daemons' cgroups: " + layout.error().message};
    return for_job(run_dir, job_id, layout->preferred());
}

Result<MpsCgroups> MpsCgroups::for_job(const std::string& run_dir, const std::string& job_id,
                                       cgroup::Hierarchy hierarchy) {
    if (auto s = check_job_id(job_id); !s) return s.error();
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return Error{"MPS daemons' cgroups: " + layout.error().message};
    if (!layout->has(hierarchy))
        return Error{"MPS daemons' cgroups: no " + std::string(cgroup::to_string(hierarchy)) + " hierarchy mounted"};
    MpsCgroups c;
    c.hierarchy_ = hierarchy;
    c.mount_ = layout->mount(c.hierarchy_);
    c.group_dir_ = c.mount_ + "/" + group_name(run_dir);
    c.job_dir_ = c.group_dir_ + "/job_" + job_id;
    return c;
}

std::string MpsCgroups::procs_file(const std::string& name) const {
    return job_dir_ + "/" + name + "/cgroup.procs";
}

Status MpsCgroups::make(const std::string& name, const cgroup::DeviceRuleSet& rules) const {
    if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
        return Error{"bad MPS cgroup name '" + name + "'"};
    // Another job's Epilog removes the group level once it is empty: made again, a few tries.
    Status levels = ok_status();
    for (int attempt = 0; attempt < 3; ++attempt)
        if ((levels = root_level(group_dir_)) && (levels = root_level(job_dir_))) break;
    if (!levels) return levels;
    if (exists(job_dir_ + "/" + name))
        if (auto gone = end(name, std::chrono::seconds(5)); !gone) return gone.error();
    auto cg = cgroup::DeviceCgroup::create(hierarchy_, job_dir_, name);
    if (!cg) return cg.error();
    if (auto s = cg->apply(rules); !s) {
        (void)cg->remove();
        return s;
    }
    return ok_status();
}

Result<std::size_t> MpsCgroups::end(const std::string& name, std::chrono::milliseconds wait,
                                    std::chrono::milliseconds grace) const {
    const std::string dir = job_dir_ + "/" + name;
    if (!exists(dir)) return std::size_t{0};
    const auto until = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < until && !cgroup::is_empty(dir))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto killed = cgroup::kill_members(hierarchy_, mount_, dir, wait);
    if (!killed) return killed.error();
    if (killed->left > 0)
        return Error{"cgroup " + dir + ": " + std::to_string(killed->left) +
                     " process(es) outlived SIGKILL"};
    auto cg = cgroup::DeviceCgroup::open(hierarchy_, dir);
    if (!cg) return cg.error();
    if (auto s = cg->remove(); !s) return s.error();
    return killed->signalled;
}

MpsCgroups::Ended MpsCgroups::end_all(const std::string& prefix, std::chrono::milliseconds wait) const {
    Ended out;
    if (!exists(job_dir_)) return out;
    auto names = cgroup::child_dirs(job_dir_);
    if (!names) {
        out.failed.push_back(names.error().message);
        return out;
    }
    for (const auto& n : *names) {
        if (n.rfind(prefix, 0) != 0) continue;
        auto r = end(n, wait);
        if (r)
            out.ended.push_back(describe_ended(n, *r));
        else
            out.failed.push_back(r.error().message);
    }
    if (prefix.empty() && out.failed.empty()) {
        if (::rmdir(job_dir_.c_str()) != 0 && errno != ENOENT)
            out.failed.push_back("cannot remove cgroup " + job_dir_ + ": " + std::strerror(errno));
        (void)::rmdir(group_dir_.c_str());  // the node's other jobs may still use it
    }
    return out;
}

std::string MpsCgroupHousing::procs_file(const std::string& instance) const {
    return cgroups_.procs_file(mps_cgroup_name(scope_, instance));
}

Status MpsCgroupHousing::make(const std::string& instance, const cgroup::DeviceRuleSet& rules) const {
    return cgroups_.make(mps_cgroup_name(scope_, instance), rules);
}

Result<std::string> MpsCgroupHousing::end(const std::string& instance, std::chrono::milliseconds wait,
                                          std::chrono::milliseconds grace) const {
    const std::string name = mps_cgroup_name(scope_, instance);
    auto killed = cgroups_.end(name, wait, grace);
    if (!killed) return killed.error();
    return describe_ended(name, *killed);
}

}  // namespace xpart::mps
