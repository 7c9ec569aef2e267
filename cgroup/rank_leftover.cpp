#include "cgroup/rank_leftover.hpp"

#include "cgroup/device_cgroup.hpp"
#include "libxpart/proc_stat.hpp"
#include "libxpart/text.hpp"

namespace xpart::cgroup {

namespace {

constexpr std::string_view kRankPrefix = "xpart_rank";
// What `comm` holds for the launcher: the executable's name (the kernel keeps 15 bytes).
constexpr std::string_view kLauncherComm = "xpart";

std::optional<unsigned long long> decimal(std::string_view s) {
    if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
    unsigned long long v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    return v;
}

Status default_remove(Hierarchy h, const std::string& dir) {
    auto cg = DeviceCgroup::open(h, dir);
    if (!cg) return cg.error();
    return cg->remove();
}

}  // namespace

std::string rank_cgroup_name(unsigned rank, pid_t launcher) {
    return std::string(kRankPrefix) + std::to_string(rank) + "_" + std::to_string(launcher);
}

std::optional<RankCgroupName> parse_rank_cgroup_name(std::string_view name) {
    if (name.substr(0, kRankPrefix.size()) != kRankPrefix) return std::nullopt;
    name.remove_prefix(kRankPrefix.size());
    const auto us = name.find('_');
    if (us == std::string_view::npos) return std::nullopt;
    auto rank = decimal(name.substr(0, us));
    auto pid = decimal(name.substr(us + 1));
    if (!rank || !pid || *rank > 0xffffffffULL || *pid == 0 || *pid > 0x3fffffffULL) return std::nullopt;
    return RankCgroupName{static_cast<unsigned>(*rank), static_cast<pid_t>(*pid)};
}

namespace {
LauncherState launcher_state_of(const ProcStat& stat) {
    if (stat.gone()) return LauncherState::Gone;
    return stat.comm == kLauncherComm ? LauncherState::Xpart : LauncherState::NotXpart;
}
}  // namespace

std::optional<LauncherState> launcher_state_from_stat(std::string_view stat) {
    auto parsed = parse_proc_stat(stat);
    if (!parsed) return std::nullopt;
    return launcher_state_of(*parsed);
}

LauncherState launcher_state(const RootFs& proc, pid_t pid) {
    auto stat = read_proc_stat(proc, pid);
    // No stat (no such process) is Gone; unreadable text cannot be the launcher's either:
    // treating it as alive would keep the cgroup forever, and it is empty (checked before
    // the launcher matters).
    if (!stat) return LauncherState::Gone;
    return launcher_state_of(*stat);
}

Result<CgroupOccupancy> read_occupancy(const std::string& dir) {
    CgroupOccupancy o;
    auto procs = RootFs("/").read(dir + "/cgroup.procs");
    if (!procs) return procs.error();
    for (const auto& line : split(*procs, '\n'))
        if (!trim(line).empty()) ++o.processes;
    auto children = child_dirs(dir);
    if (!children) return children.error();
    o.children = children->size();
    return o;
}

const char* to_string(LeftoverVerdict v) {
    switch (v) {
    case LeftoverVerdict::Remove: return "remove";
    case LeftoverVerdict::KeepBusy: return "busy";
    case LeftoverVerdict::KeepLauncherRuns: return "launcher runs";
    }
    return "?";
}

LeftoverVerdict judge_rank_leftover(const CgroupOccupancy& occupancy, LauncherState launcher) {
    if (occupancy.processes > 0 || occupancy.children > 0) return LeftoverVerdict::KeepBusy;
    if (launcher == LauncherState::Xpart) return LeftoverVerdict::KeepLauncherRuns;
    return LeftoverVerdict::Remove;
}

const char* to_string(SweepEntry::Outcome o) {
    switch (o) {
    case SweepEntry::Outcome::Removed: return "removed";
    case SweepEntry::Outcome::WouldRemove: return "would remove";
    case SweepEntry::Outcome::Kept: return "kept";
    case SweepEntry::Outcome::Failed: return "failed";
    }
    return "?";
}

std::string format_entry(const SweepEntry& e) {
    return std::string(to_string(e.outcome)) + " " + e.path + (e.why.empty() ? "" : ": " + e.why);
}

namespace {

std::string busy_why(const CgroupOccupancy& o) {
    if (o.processes > 0) return "busy (" + std::to_string(o.processes) + " process(es))";
    return "busy (" + std::to_string(o.children) + " child cgroup(s))";
}

SweepEntry do_remove(Hierarchy h, const std::string& dir, const SweepHost& host) {
    if (host.dry_run) return {dir, SweepEntry::Outcome::WouldRemove, ""};
    Status s = host.remove ? host.remove(h, dir) : default_remove(h, dir);
    if (!s) return {dir, SweepEntry::Outcome::Failed, s.error().message};
    return {dir, SweepEntry::Outcome::Removed, ""};
}

void walk(Hierarchy h, const std::string& dir, unsigned depth, const SweepHost& host,
          std::vector<SweepEntry>& out) {
    for_each_child(dir, out, [&](const std::string& name, const std::string& path) {
        if (auto rank = parse_rank_cgroup_name(name))
            out.push_back(sweep_rank_leftover(h, path, *rank, host));
        else if (depth > 1)
            walk(h, path, depth - 1, host, out);
    });
}

}  // namespace

void for_each_child(const std::string& dir, std::vector<SweepEntry>& out,
                    const std::function<void(const std::string& name, const std::string& path)>& visit) {
    auto children = child_dirs(dir);
    if (!children) {
        out.push_back({dir, SweepEntry::Outcome::Failed, children.error().message});
        return;
    }
    for (const auto& name : *children) visit(name, dir + "/" + name);
}

SweepEntry remove_if_empty(Hierarchy h, const std::string& dir, const SweepHost& host) {
    auto occupancy = read_occupancy(dir);
    if (!occupancy) return {dir, SweepEntry::Outcome::Failed, occupancy.error().message};
    if (occupancy->processes > 0 || occupancy->children > 0)
        return {dir, SweepEntry::Outcome::Kept, busy_why(*occupancy)};
    return do_remove(h, dir, host);
}

SweepEntry sweep_rank_leftover(Hierarchy h, const std::string& dir, const RankCgroupName& name,
                               const SweepHost& host) {
    auto occupancy = read_occupancy(dir);
    if (!occupancy) return {dir, SweepEntry::Outcome::Failed, occupancy.error().message};
    const LauncherState launcher = launcher_state(host.proc, name.launcher);
    switch (judge_rank_leftover(*occupancy, launcher)) {
    case LeftoverVerdict::KeepBusy: return {dir, SweepEntry::Outcome::Kept, busy_why(*occupancy)};
    case LeftoverVerdict::KeepLauncherRuns:
        return {dir, SweepEntry::Outcome::Kept,
                "its launcher (xpart, pid " + std::to_string(name.launcher) + ") still runs"};
    case LeftoverVerdict::Remove: break;
    }
    return do_remove(h, dir, host);
}

std::vector<SweepEntry> sweep_rank_leftovers(Hierarchy h, const std::string& dir, unsigned depth,
                                             const SweepHost& host) {
    std::vector<SweepEntry> out;
    if (depth > 0) walk(h, dir, depth, host, out);
    return out;
}

}  // namespace xpart::cgroup
