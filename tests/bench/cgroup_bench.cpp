// Time to apply a device rule set of 1, 8 and 64 MIG partitions (baseline included) to a
// cgroup with a process inside, on cgroup v1 and v2. Each iteration replaces the set with a
// disjoint one of the same size (the worst case: every rule changes). v2_over_slurm: the
// cgroup first holds a Slurm-like task program (no flag, 16 denied GRES files), which ours
// replaces and carries (what --xpart-confine does per task on a cgroup/v2 node); v2 is the
// peer. ReclaimStep: what slurmstepd's take-back of a Slurm step's v1 directories costs per
// step (cgroup/slurm_step_reclaim.hpp: one call per task, each taking back the task directory
// made since) for 1, 8 and 64 tasks, on every v1 hierarchy the host mounts; its baseline is
// the step launch itself (tests/bench/spank_step_bench's plain row). AllowedIn: what
// --xpart-confine's question to Slurm's task cgroup costs per task (cgroup/allowed_in.hpp: a
// child vforked, moving itself into the cgroup, opening each file), for 6 and 57 files (a MIG step's
// two partitions; every file of the simulated H100 node). Needs root.
#include <benchmark/benchmark.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "cgroup/allowed_in.hpp"
#include "cgroup/bpf_device_filter.hpp"
#include "cgroup/device_cgroup.hpp"
#include "cgroup/layout.hpp"
#include "cgroup/slurm_step_reclaim.hpp"

namespace {

using namespace xpart;
using namespace xpart::cgroup;

// Partitions [first, first+count) of a MIG node: nvidiaN, GI and CI caps, shared nvidiactl
// and monitor cap, plus the baseline.
DeviceRuleSet mig_rules(unsigned first, unsigned count, const std::vector<DeviceRule>& baseline) {
    DeviceRuleSet set;
    for (const auto& r : baseline) set.add_allow(r);
    const unsigned rw = kAccessRead | kAccessWrite;
    set.add_allow({DeviceType::Char, 195u, 255u, rw});
    set.add_allow({DeviceType::Char, 508u, 2u, rw});
    for (unsigned k = first; k < first + count; ++k) {
        set.add_allow({DeviceType::Char, 195u, k / 7, rw});
        set.add_allow({DeviceType::Char, 508u, 3 + 2 * k, rw});
        set.add_allow({DeviceType::Char, 508u, 4 + 2 * k, rw});
    }
    return set;
}

// Slurm's task level: deny the step's other GRES files, allow the rest, attached with no flag.
bool attach_slurm_like(const std::string& dir) {
    DeviceRuleSet slurm;
    slurm.policy = DevicePolicy::DenyManaged;
    for (unsigned m = 0; m < 16; ++m) slurm.managed.push_back({DeviceType::Char, 508u, 100 + m, kAccessAll});
    const auto insns = generate_device_filter(slurm);
    const int prog = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "slurm_like", "GPL", insns.data(), insns.size(), nullptr);
    const int cg = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool ok = prog >= 0 && cg >= 0 && bpf_prog_attach(prog, cg, BPF_CGROUP_DEVICE, 0) == 0;
    if (prog >= 0) ::close(prog);
    if (cg >= 0) ::close(cg);
    return ok;
}

void BM_Apply(benchmark::State& state, Hierarchy h, bool over_slurm = false) {
    const unsigned partitions = static_cast<unsigned>(state.range(0));
    auto layout = detect_cgroup_layout(RootFs("/"));
    if (!layout || !layout->has(h)) {
        state.SkipWithError("hierarchy not mounted");
        return;
    }
    auto base = baseline_rules(RootFs("/"));
    if (!base) {
        state.SkipWithError(base.error().message.c_str());
        return;
    }
    const std::string name = "xpart_bench_" + std::to_string(::getpid()) + "_" + to_string(h) + "_" +
                             std::to_string(partitions);
    auto cg = DeviceCgroup::create(h, layout->own(h), name);
    if (!cg) {
        state.SkipWithError(cg.error().message.c_str());
        return;
    }
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    const DeviceRuleSet sets[2] = {mig_rules(0, partitions, *base), mig_rules(partitions, partitions, *base)};
    bool ok = cg->move(child).ok() && (!over_slurm || attach_slurm_like(cg->path()));
    unsigned i = 0;
    for (auto _ : state) {
        if (!ok) break;
        Status st = cg->apply(sets[i++ % 2]);
        if (!st) {
            state.SkipWithError(st.error().message.c_str());
            break;
        }
    }
    state.counters["rules"] = static_cast<double>(sets[0].allow.size());
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    for (int attempt = 0; attempt < 100 && !cg->remove().ok(); ++attempt) ::usleep(5000);
}

BENCHMARK_CAPTURE(BM_Apply, v1, Hierarchy::V1)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_Apply, v2, Hierarchy::V2)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_Apply, v2_over_slurm, Hierarchy::V2, true)
    ->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)
    ->ReportAggregatesOnly(true);

void BM_AllowedIn(benchmark::State& state, Hierarchy h) {
    auto layout = detect_cgroup_layout(RootFs("/"));
    if (!layout || !layout->has(h)) {
        state.SkipWithError("hierarchy not mounted");
        return;
    }
    auto cg = DeviceCgroup::create(h, layout->own(h), "xpart_bench_probe_" + std::to_string(::getpid()) + "_" + to_string(h));
    if (!cg) {
        state.SkipWithError(cg.error().message.c_str());
        return;
    }
    // Character devices every host has, one denied by the rules: the answers must differ.
    const char* files[] = {"/dev/null", "/dev/zero", "/dev/full"};
    std::vector<std::string> paths;
    for (long i = 0; i < state.range(0); ++i) paths.push_back(files[i % 3]);
    DeviceRuleSet rules;
    for (unsigned minor : {3u, 5u}) rules.add_allow({DeviceType::Char, 1u, minor, kAccessRead | kAccessWrite});
    Status ok = cg->apply(rules);
    for (auto _ : state) {
        if (!ok) break;
        auto answers = allowed_in(*cg, paths);
        if (!answers || (*answers)[2] || !(*answers)[0]) {
            state.SkipWithError(answers ? "wrong answers" : answers.error().message.c_str());
            break;
        }
    }
    if (!ok) state.SkipWithError(ok.error().message.c_str());
    for (int attempt = 0; attempt < 100 && !cg->remove().ok(); ++attempt) ::usleep(5000);
}

BENCHMARK_CAPTURE(BM_AllowedIn, v1, Hierarchy::V1)
    ->Arg(6)->Arg(57)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)->ReportAggregatesOnly(true);
BENCHMARK_CAPTURE(BM_AllowedIn, v2, Hierarchy::V2)
    ->Arg(6)->Arg(57)->Unit(benchmark::kMicrosecond)->UseRealTime()->Repetitions(9)->ReportAggregatesOnly(true);

// A step of `tasks` tasks laid out as Slurm's cgroup/v1 does (step and task directories the
// user's) on every v1 hierarchy, the reclaimer run once per task as slurmstepd does.
void BM_ReclaimStep(benchmark::State& state) {
    const unsigned tasks = static_cast<unsigned>(state.range(0));
    auto layout = detect_cgroup_layout(RootFs("/"));
    if (!layout || layout->v1_hierarchies.empty()) {
        state.SkipWithError("no cgroup v1 hierarchy mounted");
        return;
    }
    const std::string top = "/xpart_bench_" + std::to_string(::getpid()), step = top + "/job_1/step_0";
    auto rm = [&](const MountedHierarchy& h) {
        for (unsigned t = 0; t < tasks; ++t) ::rmdir((h.mount + step + "/task_" + std::to_string(t)).c_str());
        for (const std::string& d : {step, top + "/job_1", top}) ::rmdir((h.mount + d).c_str());
    };
    for (auto _ : state) {
        state.PauseTiming();
        for (const auto& h : layout->v1_hierarchies) {
            for (const std::string& d : {top, top + "/job_1"}) ::mkdir((h.mount + d).c_str(), 0755);
            ::mkdir((h.mount + step).c_str(), 0755);
            if (::chown((h.mount + step).c_str(), 4242, 4242) != 0) state.SkipWithError("chown");
        }
        SlurmStepReclaimer reclaimer(layout->v1_hierarchies, step);
        state.ResumeTiming();
        for (unsigned t = 0; t < tasks; ++t) {
            state.PauseTiming();  // Slurm makes the task's directories before its post_fork
            for (const auto& h : layout->v1_hierarchies) {
                const std::string task = h.mount + step + "/task_" + std::to_string(t);
                ::mkdir(task.c_str(), 0755);
                if (::chown(task.c_str(), 4242, 4242) != 0) state.SkipWithError("chown");
            }
            state.ResumeTiming();
            auto r = reclaimer.run(std::chrono::milliseconds(1000));
            if (!r || r->taken == 0) state.SkipWithError("nothing taken back");
        }
        state.PauseTiming();
        for (const auto& h : layout->v1_hierarchies) rm(h);
        state.ResumeTiming();
    }
    state.counters["hierarchies"] = static_cast<double>(layout->v1_hierarchies.size());
}

BENCHMARK(BM_ReclaimStep)->Arg(1)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime()
    ->Repetitions(9)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
