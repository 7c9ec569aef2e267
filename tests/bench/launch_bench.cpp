// Launch overhead and MPS start cost, with Google Benchmark (report the medians):
//   Exec/true, Exec/xpart_launch_true: fork+exec+wait of `true` and of `xpart launch -- true`
//     (a rank of 4 on an 8-GPU MIG node, Slurm variables set as srun would, the node from
//     the gres plugin's node cache under XPART_ROOT);
//   LaunchOverhead: both run back to back in every iteration (interleaved, so machine noise
//     hits both), the iteration time is the difference;
//   MpsStart/1, MpsStart/7: start_daemons for 1 and 7 GPU instances with the fake
//     nvidia-cuda-mps-control until each answers (daemons start in parallel);
//   PrologMpsStart/1, /7: what the Prolog does as root (start_job_daemons: the job directory
//     and its tmpfs, one root-made cgroup per daemon with its instance's device rules, the
//     daemons, until each answers), and the Epilog's stop after each iteration (not timed).
// Run: XPART_BUILDDIR=_build _build/tests/bench/launch_bench --benchmark_repetitions=10
//      --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "libxpart/env_map.hpp"
#include "mps/mps.hpp"
#include "mps/root/mps_job.hpp"
#include "libxpart/node_cache.hpp"
#include "tests/fixtures/sample_nodes.hpp"

extern char** environ;

namespace {

using namespace xpart;
using Clock = std::chrono::steady_clock;

std::string builddir() {
    const char* b = std::getenv("XPART_BUILDDIR");
    return b ? b : ".";
}

struct Command {
    std::vector<std::string> argv, envs;
    std::vector<char*> a, e;
    Command(std::vector<std::string> args, const EnvMap& env)
        : argv(std::move(args)), envs(env_to_strings(env)) {
        for (auto& s : argv) a.push_back(s.data());
        a.push_back(nullptr);
        for (auto& s : envs) e.push_back(s.data());
        e.push_back(nullptr);
    }
    // Seconds for fork + exec + exit + wait.
    double run() {
        auto t0 = Clock::now();
        pid_t pid = fork();
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            dup2(devnull, 1);
            execvpe(a[0], a.data(), e.data());
            _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) std::abort();  // a failing launch is no timing
        return std::chrono::duration<double>(Clock::now() - t0).count();
    }
};

// A node root holding only the gres plugin's node cache: what a launcher on a real node reads.
const std::string& node_root() {
    static std::string root = [] {
        std::string r = "/tmp/xpart-launch-bench-root";
        std::filesystem::create_directories(r);
        if (!write_node_cache(RootFs(r), fixtures::dgx_a100(8, 1))) std::abort();
        return r;
    }();
    return root;
}

EnvMap rank_env() {
    EnvMap env = env_from_environ(environ);
    std::string all;
    for (int g = 0; g < 8; ++g) all += (g ? "," : "") + fixtures::mig_uuid(g, 7);
    env["CUDA_VISIBLE_DEVICES"] = all;
    env["SLURM_PROCID"] = "2";
    env["SLURM_NTASKS"] = "4";
    env["SLURM_LOCALID"] = "2";
    env["SLURM_NODEID"] = "0";
    env["SLURM_STEP_TASKS_PER_NODE"] = "4";
    env["XPART_ROOT"] = node_root();
    return env;
}

Command true_cmd() { return Command({"true"}, rank_env()); }
Command launch_cmd() {
    return Command({builddir() + "/xpart", "launch", "--", "true"}, rank_env());
}

void BM_ExecTrue(benchmark::State& state) {
    Command c = true_cmd();
    for (auto _ : state) state.SetIterationTime(c.run());
}
BENCHMARK(BM_ExecTrue)->Name("Exec/true")->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_ExecLaunch(benchmark::State& state) {
    Command c = launch_cmd();
    for (auto _ : state) state.SetIterationTime(c.run());
}
BENCHMARK(BM_ExecLaunch)->Name("Exec/xpart_launch_true")->UseManualTime()->Unit(benchmark::kMillisecond);

// The floor: starting the xpart binary at all (dynamic loading, CLI11), without launching.
void BM_ExecVersion(benchmark::State& state) {
    Command c({builddir() + "/xpart", "--version"}, rank_env());
    for (auto _ : state) state.SetIterationTime(c.run());
}
BENCHMARK(BM_ExecVersion)->Name("Exec/xpart_version")->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_LaunchOverhead(benchmark::State& state) {
    Command plain = true_cmd(), launched = launch_cmd();
    for (auto _ : state) {
        double a = plain.run();
        double b = launched.run();
        state.SetIterationTime(b > a ? b - a : 1e-9);
    }
}
BENCHMARK(BM_LaunchOverhead)->Name("LaunchOverhead")->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_MpsStart(benchmark::State& state) {
    char tmpl[] = "/tmp/xpb-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    // The daemons ranks start for themselves (xpart launch --mps without Prolog daemons):
    // this user's, recorded in the step directory's own file.
    mps::MpsConfig c;
    c.control = builddir() + "/sim/fake_mps/nvidia-cuda-mps-control";
    c.dir = std::string(tmpl) + "/step";
    c.records = mps::file_record_store(c.dir + "/daemons");
    c.user = process::current_credentials();
    if (!std::filesystem::create_directory(c.dir)) std::abort();
    std::vector<mps::MpsInstance> inst;
    for (int i = 0; i < state.range(0); ++i)
        inst.push_back({"gpu0-gi" + std::to_string(7 + i), fixtures::mig_uuid(0, 7 + i)});
    for (auto _ : state) {
        auto t0 = Clock::now();
        auto s = mps::start_daemons(c, inst);
        double t = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!s) state.SkipWithError(s.error().message.c_str());
        state.SetIterationTime(t);
        auto stopped = mps::stop_daemons(c);
        if (!s) break;
        if (!stopped.survivors.empty()) {
            state.SkipWithError(stopped.survivors.front().c_str());
            break;
        }
    }
    std::filesystem::remove_all(tmpl);
}
BENCHMARK(BM_MpsStart)->Name("MpsStart")->Arg(1)->Arg(7)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_PrologMpsStart(benchmark::State& state) {
    if (geteuid() != 0) {
        state.SkipWithError("needs root (cgroups, tmpfs)");
        return;
    }
    char tmpl[] = "/tmp/xpb-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    mps::MpsJobOptions o;
    o.run_dir = std::string(tmpl) + "/run";
    o.control = builddir() + "/sim/fake_mps/nvidia-cuda-mps-control";
    Node node = fixtures::dgx_a100(1, 7);
    std::vector<binding::AllottedPartition> parts;
    for (int i = 0; i < state.range(0); ++i) parts.push_back({0, static_cast<std::size_t>(i), ""});
    auto inst = mps::mps_instances(node, parts);
    if (!inst) std::abort();
    for (auto _ : state) {
        auto t0 = Clock::now();
        auto s = mps::start_job_daemons(o, "7", process::current_credentials(), *inst);
        double t = std::chrono::duration<double>(Clock::now() - t0).count();
        if (!s) state.SkipWithError(s.error().message.c_str());
        state.SetIterationTime(t);
        auto stopped = mps::stop_job_daemons(o, "7");
        if (!s) break;
        if (!stopped.survivors.empty()) {
            state.SkipWithError(stopped.survivors.front().c_str());
            break;
        }
    }
    std::filesystem::remove_all(tmpl);
}
BENCHMARK(BM_PrologMpsStart)->Name("PrologMpsStart")->Arg(1)->Arg(7)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
