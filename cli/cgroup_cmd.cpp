// `xpart cgroup apply|show|clear`: device rules on one cgroup, for admins and tests.
// `xpart cgroup sweep`: leftover rank cgroups (and, with --job, that job's Slurm cgroups they
// kept busy) removed, for the Epilog (etc/epilog.d/xpart-cgroup.sh).
// Cgroups are the live system's; --root only changes where discovery reads the node from.
#include <sys/stat.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>

#include "cgroup/device_cgroup.hpp"
#include "cgroup/device_rule.hpp"
#include "cgroup/layout.hpp"
#include "cgroup/rank_leftover.hpp"
#include "cgroup/slurm_job_cgroups.hpp"
#include "cli/command.hpp"
#include "cli/exit_status.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/text.hpp"

namespace xpart::cli {

namespace {

using cgroup::DeviceCgroup;
using cgroup::Hierarchy;

struct CgroupOptions {
    std::string path;
    std::string hierarchy = "auto";
    bool create = false;
    std::vector<std::string> allow;
    std::vector<std::string> deny;
    std::vector<std::string> partitions;
    bool baseline = false;
    std::string policy;
    std::string pid;
    bool remove = false;
    std::string job;
    std::string node;
    std::string sluid;
    std::string gpus;
    bool dry_run = false;
};

bool under(const std::string& path, const std::string& mount) {
    return !mount.empty() && path.compare(0, mount.size(), mount) == 0 &&
           (path.size() == mount.size() || path[mount.size()] == '/');
}

// The hierarchy and absolute directory --cgroup names: an absolute path below a mount picks
// its hierarchy; a relative one is taken below the chosen (or preferred) hierarchy's mount.
Result<std::pair<Hierarchy, std::string>> resolve(const CgroupOptions& o) {
    if (o.hierarchy != "auto" && o.hierarchy != "v1" && o.hierarchy != "v2")
        return Error{"--hierarchy '" + o.hierarchy + "': expected v1, v2 or auto"};
    if (o.path.empty() || o.path.find("/../") != std::string::npos || o.path == ".." ||
        o.path.rfind("../", 0) == 0)
        return Error{"--cgroup '" + o.path + "': expected a cgroup directory"};
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return layout.error();
    std::optional<Hierarchy> wanted;
    if (o.hierarchy == "v1") wanted = Hierarchy::V1;
    if (o.hierarchy == "v2") wanted = Hierarchy::V2;
    if (wanted && !layout->has(*wanted))
        return Error{"--hierarchy '" + o.hierarchy + "': this node mounts no " +
                     (*wanted == Hierarchy::V1 ? "cgroup v1 devices controller" : "cgroup2 tree")};
    std::string dir = o.path;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (dir.front() == '/') {
        for (Hierarchy h : {Hierarchy::V1, Hierarchy::V2})
            if (under(dir, layout->mount(h))) {
                if (wanted && *wanted != h)
                    return Error{"--cgroup '" + o.path + "' is in the " + to_string(h) +
                                 " hierarchy, not --hierarchy " + o.hierarchy};
                return std::make_pair(h, dir);
            }
        return Error{"--cgroup '" + o.path + "': not below " +
                     (layout->has(Hierarchy::V1) ? layout->v1_devices_mount + " or " : std::string()) +
                     (layout->has(Hierarchy::V2) ? layout->v2_mount : std::string("a cgroup mount"))};
    }
    const Hierarchy h = wanted ? *wanted : layout->preferred();
    return std::make_pair(h, layout->mount(h) + "/" + dir);
}

Result<DeviceCgroup> open_or_create(const CgroupOptions& o) {
    auto where = resolve(o);
    if (!where) return where.error();
    const auto& [h, dir] = *where;
    struct stat st {};
    if (o.create && ::stat(dir.c_str(), &st) != 0) {
        const auto slash = dir.rfind('/');
        return DeviceCgroup::create(h, dir.substr(0, slash), dir.substr(slash + 1));
    }
    return DeviceCgroup::open(h, dir);
}

Result<cgroup::DeviceRuleSet> build_rules(const CgroupOptions& o, const GlobalOptions& global) {
    cgroup::DeviceRuleSet set;
    if (!o.policy.empty() && o.policy != "deny-all" && o.policy != "deny-managed")
        return Error{"--policy '" + o.policy + "': expected deny-all or deny-managed"};
    set.policy = o.policy == "deny-managed" || (o.policy.empty() && !o.deny.empty())
                     ? cgroup::DevicePolicy::DenyManaged
                     : cgroup::DevicePolicy::DenyAll;
    if (set.policy == cgroup::DevicePolicy::DenyAll && !o.deny.empty())
        return Error{"--deny needs --policy deny-managed (deny-all denies everything not allowed)"};
    const RootFs root = global.root.empty() ? RootFs::from_env() : RootFs(global.root);
    if (o.baseline) {
        auto base = cgroup::baseline_rules(root);
        if (!base) return Error{"--baseline: " + base.error().message};
        for (const auto& r : *base) set.add_allow(r);
    }
    for (const auto& text : o.allow) {
        auto r = cgroup::parse_device_rule(text);
        if (!r) return Error{"--allow: " + r.error().message};
        set.add_allow(*r);
    }
    for (const auto& text : o.deny) {
        auto r = cgroup::parse_device_rule(text);
        if (!r) return Error{"--deny: " + r.error().message};
        set.add_managed(*r);
    }
    const bool managed_from_node = set.policy == cgroup::DevicePolicy::DenyManaged && o.deny.empty();
    if (!o.partitions.empty() || managed_from_node) {
        DiscoveryOptions d;
        d.root = root;
        d.mig_monitor_capability = global.mig_monitor_capability;
        auto node = discover(d);
        if (!node) return Error{"discovery (--root '" + root.root() + "'): " + node.error().message};
        std::vector<std::string> selectors;
        for (const auto& list : o.partitions)
            for (const auto& s : split(list, ','))
                if (!trim(s).empty()) selectors.push_back(trim(s));
        auto chosen = cgroup::select_partitions(*node, selectors);
        if (!chosen) return Error{"--partitions: " + chosen.error().message};
        for (const auto& r : cgroup::partition_rules(*chosen)) set.add_allow(r);
        if (managed_from_node) set.managed = cgroup::node_managed_rules(*node);
    }
    return set;
}

int run_apply(const CgroupOptions& o, const GlobalOptions& global) {
    if (o.allow.empty() && o.partitions.empty() && !o.baseline)
        return fail("cgroup", "apply: give --allow, --partitions or --baseline (an empty set would deny every device)");
    std::optional<pid_t> pid;
    if (!o.pid.empty()) {
        auto v = parse_u64(o.pid);
        if (!v || *v == 0 || *v > 0x3fffffff) return fail("cgroup", "--pid '" + o.pid + "': expected a process id");
        pid = static_cast<pid_t>(*v);
    }
    auto set = build_rules(o, global);
    if (!set) return fail("cgroup", set.error().message);
    auto cg = open_or_create(o);
    if (!cg) return fail("cgroup", cg.error().message);
    // Rules first, then the process: it never runs in the cgroup without them.
    if (auto st = cg->apply(*set); !st) return fail("cgroup", st.error().message);
    if (pid)
        if (auto st = cg->move(*pid); !st) return fail("cgroup", st.error().message);
    std::cout << "applied " << set->allow.size() << " allow rule(s)"
              << (set->policy == cgroup::DevicePolicy::DenyManaged
                      ? ", " + std::to_string(set->managed.size()) + " managed"
                      : std::string())
              << " to " << cg->path() << " (" << to_string(cg->hierarchy()) << ")\n";
    return 0;
}

Result<DeviceCgroup> open_existing(const CgroupOptions& o) {
    auto where = resolve(o);
    if (!where) return where.error();
    return DeviceCgroup::open(where->first, where->second);
}

int run_show(const CgroupOptions& o) {
    auto cg = open_existing(o);
    if (!cg) return fail("cgroup", cg.error().message);
    auto rules = cg->current_rules();
    if (!rules) return fail("cgroup", rules.error().message);
    std::cout << "cgroup " << cg->path() << " (" << to_string(cg->hierarchy()) << ")\n";
    if (!rules->has_value())
        std::cout << "no xpart device rules (every device allowed by this cgroup)\n";
    else
        std::cout << cgroup::format_rule_set((*rules)->normalized());
    return 0;
}

int run_clear(const CgroupOptions& o) {
    auto cg = open_existing(o);
    if (!cg) return fail("cgroup", cg.error().message);
    if (o.remove) {
        if (auto st = cg->remove(); !st) return fail("cgroup", st.error().message);
        std::cout << "removed " << cg->path() << "\n";
        return 0;
    }
    if (auto st = cg->clear(); !st) return fail("cgroup", st.error().message);
    std::cout << "cleared " << cg->path() << "\n";
    return 0;
}

// Deep enough for any systemd or Slurm tree; a bound, since the walk follows no links anyway.
constexpr unsigned kSweepDepth = 32;
// How long the job's processes have to die after SIGKILL (one in uninterruptible sleep, a
// driver call, may take a while) before the Epilog calls the node unsafe.
constexpr std::chrono::seconds kJobEndWait{10};
// Every process left in the job's cgroups ended first (nothing of job N may open a partition
// once job N+1 has it); one line says what was killed. Status: 0, 1 (something could not be
// walked) or kExitJobSurvives.
int end_job_processes(const CgroupOptions& o, const cgroup::CgroupLayout& layout) {
    std::vector<cgroup::MountedHierarchy> where;
    for (const auto& h : layout.all_hierarchies())
        if (o.hierarchy == "auto" || (o.hierarchy == "v2") == h.controller.empty()) where.push_back(h);
    const cgroup::SlurmJobQuery q{o.job, o.node, o.sluid};
    const auto end = cgroup::end_slurm_job(where, q, kJobEndWait);
    if (end.killed > 0)
        std::cout << "job " << o.job << ": killed " << end.killed
                  << " process(es) left in its cgroups" << (end.survivors.empty() ? "" : " (some survive)") << "\n";
    int rc = 0;
    for (const auto& f : end.failed) rc = fail("cgroup", "sweep: job " + o.job + ": " + f);
    for (const auto& s : end.survivors)
        rc = fail("cgroup",
                  "sweep: job " + o.job + ": pid " + std::to_string(s.pid) + " outlived SIGKILL in " + s.cgroup +
                      ", keeping the job's device rules" + (o.gpus.empty() ? "" : " (GPUs " + o.gpus + ")") +
                      ": the node is not safe for the next job",
                  kExitJobSurvives);
    return rc;
}

int run_sweep(const CgroupOptions& o) {
    if (!o.job.empty() && !o.path.empty()) return fail("cgroup", "sweep: give --job or --cgroup, not both");
    if (!o.sluid.empty() && o.job.empty()) return fail("cgroup", "sweep: --sluid '" + o.sluid + "' needs --job");
    if (o.hierarchy != "auto" && o.hierarchy != "v1" && o.hierarchy != "v2")
        return fail("cgroup", "--hierarchy '" + o.hierarchy + "': expected v1, v2 or auto");
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    if (!layout) return fail("cgroup", layout.error().message);
    cgroup::SweepHost host;
    host.dry_run = o.dry_run;
    std::vector<cgroup::SweepEntry> entries;
    int ended_rc = 0;
    if (!o.path.empty()) {
        auto where = resolve(o);
        if (!where) return fail("cgroup", where.error().message);
        entries = cgroup::sweep_rank_leftovers(where->first, where->second, kSweepDepth, host);
    } else {
        if (!o.job.empty() && !o.dry_run) {
            if (auto s = cgroup::check_query({o.job, o.node, o.sluid}); !s) return fail("cgroup", s.error().message);
            ended_rc = end_job_processes(o, *layout);
        }
        for (Hierarchy h : {Hierarchy::V1, Hierarchy::V2}) {
            if (!layout->has(h) || (o.hierarchy != "auto" && o.hierarchy != to_string(h))) continue;
            if (o.job.empty()) {
                auto found = cgroup::sweep_rank_leftovers(h, layout->mount(h), kSweepDepth, host);
                entries.insert(entries.end(), found.begin(), found.end());
                continue;
            }
            auto found = cgroup::sweep_slurm_job(h, layout->mount(h), {o.job, o.node, o.sluid}, host);
            if (!found) return fail("cgroup", found.error().message);
            entries.insert(entries.end(), found->begin(), found->end());
        }
    }
    int rc = 0;
    for (const auto& e : entries) {
        const bool failed = e.outcome == cgroup::SweepEntry::Outcome::Failed;
        (failed ? std::cerr : std::cout) << format_entry(e) << "\n";
        if (failed) rc = 1;
    }
    return ended_rc != 0 ? ended_rc : rc;
}

}  // namespace

void add_cgroup_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto* cmd = app.add_subcommand("cgroup", "device rules of a cgroup (v1 devices controller or v2 BPF)");
    cmd->require_subcommand(1);
    auto opts = std::make_shared<CgroupOptions>();
    auto common = [&](CLI::App* sub) {
        sub->add_option("--cgroup", opts->path,
                        "cgroup directory: absolute, or relative to the hierarchy's mount")
            ->required();
        sub->add_option("--hierarchy", opts->hierarchy, "v1, v2 or auto (v1 devices where mounted)");
    };
    auto* apply = cmd->add_subcommand("apply", "replace the device rules of a cgroup");
    common(apply);
    apply->add_flag("--create", opts->create, "create the cgroup if it does not exist");
    apply->add_option("--allow", opts->allow, "allowed rule, e.g. 'c 195:* rw' (repeatable)");
    apply->add_option("--partitions", opts->partitions,
                      "partitions from discovery: MIG-<uuid>, GPU-<uuid> or GPU-<uuid>:<index>, comma-separated");
    apply->add_flag("--baseline", opts->baseline, "allow null, zero, full, random, urandom, tty, ptmx, pts, "
                                                  "nvidiactl and nvidia-uvm");
    apply->add_option("--policy", opts->policy,
                      "deny-all (default) or deny-managed (deny only --deny rules, or every partition file)");
    apply->add_option("--deny", opts->deny, "managed rule to deny unless allowed (deny-managed)");
    apply->add_option("--pid", opts->pid, "process to move into the cgroup after the rules are in force");
    apply->callback([&run, &global, opts] { run = [&global, opts] { return run_apply(*opts, global); }; });
    auto* show = cmd->add_subcommand("show", "print the device rules in force for a cgroup");
    common(show);
    show->callback([&run, opts] { run = [opts] { return run_show(*opts); }; });
    auto* clear = cmd->add_subcommand("clear", "drop our device rules of a cgroup");
    common(clear);
    clear->add_flag("--remove", opts->remove, "remove the cgroup itself (it must be empty)");
    clear->callback([&run, opts] { run = [opts] { return run_clear(*opts); }; });
    auto* sweep = cmd->add_subcommand(
        "sweep", "remove rank cgroups left by killed launchers (empty, launcher gone); with --job, "
                 "first kill every process left in that job's Slurm cgroups on every hierarchy, then "
                 "remove its Slurm cgroups (for the Epilog)");
    sweep->add_option("--job", opts->job,
                      "Slurm job id: sweep that job's cgroups on this node, bottom-up, each only "
                      "when empty");
    sweep->add_option("--node", opts->node, "the slurmd's NodeName (for --job; its cgroups are slurm_<node>)")
        ->envname("SLURMD_NODENAME");
    sweep->add_option("--sluid", opts->sluid,
                      "the job's SLUID, SLURM_JOB_SLUID (for --job; Slurm 26.05 names a job's v2 "
                      "cgroup by it)");
    sweep->add_option("--gpus", opts->gpus,
                      "the job's GPUs as the Epilog's environment names them (CUDA_VISIBLE_DEVICES), "
                      "for the line about a process that outlives SIGKILL (for --job)");
    sweep->add_option("--cgroup", opts->path,
                      "sweep only below this cgroup (default: every mounted hierarchy)");
    sweep->add_option("--hierarchy", opts->hierarchy, "v1, v2 or auto (default: both)");
    sweep->add_flag("--dry-run", opts->dry_run, "print what would be removed, remove nothing");
    sweep->callback([&run, opts] { run = [opts] { return run_sweep(*opts); }; });
}

}  // namespace xpart::cli
