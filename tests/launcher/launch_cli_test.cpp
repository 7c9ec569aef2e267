// `xpart launch` and `xpart mps` end to end: the real binary, ranks described by the Slurm
// variables the tests set (as srun would), the fake MPS daemon for --mps.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cgroup/layout.hpp"
#include "libxpart/env_map.hpp"
#include "mps/mps.hpp"
#include "mps/root/mps_job.hpp"
#include "process/process_identity.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/node_json.hpp"
#include "tests/fixtures/sample_nodes.hpp"

extern char** environ;

namespace xpart::launcher {
namespace {

namespace fs = std::filesystem;
using fixtures::mig_uuid;

std::string builddir() {
    const char* b = std::getenv("XPART_BUILDDIR");
    return b ? b : ".";
}
std::string srcdir() {
    const char* s = std::getenv("XPART_SRCDIR");
    return s ? s : "..";
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Proc {
    pid_t pid = -1;
    std::string out, err;  // files
};

// Starts `xpart args...` with this process's environment plus `extra`, in the cgroup whose
// cgroup.procs file is `enter` when one is given.
// `in_child` runs in the child just before exec.
Proc start_xpart(const std::vector<std::string>& args, const EnvMap& extra, const std::string& dir,
                 const std::string& tag, const std::string& enter = "",
                 const std::function<void()>& in_child = {}) {
    EnvMap env = env_from_environ(environ);
    for (const char* v : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "SLURM_STEP_GPUS",
                          "SLURM_JOB_GPUS", "SLURM_JOB_ID", "SLURM_JOB_UID", "SLURM_JOB_GID",
                          "XPART_RUN_DIR", "XPART_MPS_CONTROL"})
        env.erase(v);
    for (const auto& [k, v] : extra) env[k] = v;
    Proc p;
    p.out = dir + "/" + tag + ".out";
    p.err = dir + "/" + tag + ".err";
    std::vector<std::string> argv{builddir() + "/xpart"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> envs = env_to_strings(env);
    p.pid = fork();
    if (p.pid == 0) {
        int o = open(p.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(p.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(o, 1);
        dup2(e, 2);
        if (!enter.empty() && !(std::ofstream(enter) << getpid()).flush()) _exit(125);
        if (in_child) in_child();
        std::vector<char*> a, en;
        for (auto& s : argv) a.push_back(s.data());
        a.push_back(nullptr);
        for (auto& s : envs) en.push_back(s.data());
        en.push_back(nullptr);
        execve(a[0], a.data(), en.data());
        _exit(126);
    }
    return p;
}

int finish(const Proc& p) {
    int st = 0;
    waitpid(p.pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

EnvMap slurm_rank(int rank, int size, int local, int node, const std::string& per_node) {
    return {{"SLURM_PROCID", std::to_string(rank)}, {"SLURM_NTASKS", std::to_string(size)},
            {"SLURM_LOCALID", std::to_string(local)}, {"SLURM_NODEID", std::to_string(node)},
            {"SLURM_STEP_TASKS_PER_NODE", per_node}, {"SLURM_JOB_ID", "4242"},
            {"SLURM_STEP_ID", "0"}};
}

// The NUL-separated fields of a /proc file (cmdline, environ).
std::vector<std::string> proc_fields(const std::string& path) {
    std::vector<std::string> out;
    std::string text = slurp(path), field;
    std::istringstream in(text);
    while (std::getline(in, field, '\0')) out.push_back(field);
    return out;
}

std::string exe_of(const std::string& pid) {
    std::error_code ec;
    auto target = fs::read_symlink("/proc/" + pid + "/exe", ec);
    return ec ? std::string() : target.string();
}

// Live MPS control daemons, counted as PROCESSES (not files): every running, non-zombie
// process whose program is `control` started as `control -f` (a client has no argument, and
// the fake's servers are forks whose parent is a daemon), and whose pipe directory lies under
// `under`. Nothing a test leaves in files can make this count wrong.
int live_daemons(const std::string& control, const std::string& under) {
    std::error_code ec;
    const std::string exe = fs::canonical(control, ec).string();
    int n = 0;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
        const std::string pid = e.path().filename();
        if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (exe_of(pid) != exe) continue;
        auto argv = proc_fields("/proc/" + pid + "/cmdline");
        if (argv.size() != 2 || argv[1] != "-f") continue;
        std::string stat = slurp("/proc/" + pid + "/stat");
        auto paren = stat.rfind(')');
        if (paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z') continue;
        std::istringstream rest(stat.substr(paren + 4));
        std::string ppid;
        rest >> ppid;
        if (exe_of(ppid) == exe) continue;  // a server the daemon forked
        std::string pipe;
        for (const auto& v : proc_fields("/proc/" + pid + "/environ"))
            if (v.rfind("CUDA_MPS_PIPE_DIRECTORY=", 0) == 0) pipe = v.substr(24);
        if (pipe.rfind(under + "/", 0) == 0) ++n;
    }
    return n;
}

// The daemons a records file ("<instance> <uuid> <pid> <start> <uid>" lines) names that are
// still those very processes.
std::vector<mps::MpsDaemonRecord> live_recorded(const std::string& file) {
    std::vector<mps::MpsDaemonRecord> live;
    if (!fs::exists(file)) return live;
    auto records = mps::parse_records(slurp(file), file);
    EXPECT_TRUE(records) << records.error().message;
    if (!records) return live;
    for (const auto& r : *records)
        if (process::still_running(r.process)) live.push_back(r);
    return live;
}

class LaunchCliTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xlc-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
        node_json_ = dir_ + "/node.json";
        std::ofstream(node_json_) << to_json(fixtures::dgx_a100(8, 2)).dump();
        fake_ = builddir() + "/sim/fake_mps/nvidia-cuda-mps-control";
        run_dir_ = dir_ + "/run";
        // A job id no other run of these tests uses: ranks without a job directory share
        // /tmp/xpart-mps-<uid> with every other run on this machine.
        tmp_job_ = std::to_string(900000 + getpid() % 100000);
    }
    void TearDown() override {
        // Stop whatever a failed test left behind in the job directory, then remove the
        // directory (the /tmp ones of ranks without one are the last rank's to stop).
        EnvMap env{{"XPART_MPS_CONTROL", fake_}, {"XPART_RUN_DIR", run_dir_}};
        finish(start_xpart({"mps", "stop", "--job-id", "4242"}, env, dir_, "teardown"));
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // `xpart mps prepare|start` for job 4242 as the Prolog would run it (as this user's job).
    EnvMap prolog_env(const std::string& visible) {
        return {{"SLURM_JOB_ID", "4242"}, {"SLURM_JOB_UID", std::to_string(getuid())},
                {"SLURM_JOB_GID", std::to_string(getgid())}, {"CUDA_VISIBLE_DEVICES", visible},
                {"XPART_MPS_CONTROL", fake_}, {"XPART_RUN_DIR", run_dir_},
                {"XPART_NODE_JSON", node_json_}};
    }
    void prepare_job() {
        Proc p = start_xpart({"mps", "prepare"}, prolog_env(""), dir_, "prepare");
        ASSERT_EQ(finish(p), 0) << slurp(p.err);
        ASSERT_TRUE(fs::is_directory(job_dir() + "/user"));
    }
    std::string job_dir() const { return run_dir_ + "/job_4242"; }
    // Where ranks of step 0 run their own daemons when the Prolog only prepared the job.
    std::string step_dir() const { return job_dir() + "/user/step_0"; }
    int daemons_under(const std::string& base) const { return live_daemons(fake_, base); }
    // Every partition of GPUs 0..7 (two per GPU), as the plugin would list them.
    std::string all_uuids(int gpus, int per_gpu) {
        std::string list;
        for (int g = 0; g < gpus; ++g)
            for (int p = 0; p < per_gpu; ++p) list += (list.empty() ? "" : ",") + mig_uuid(g, 7 + p);
        return list;
    }
    std::vector<std::string> launch(const std::vector<std::string>& extra_args) {
        std::vector<std::string> a{"launch", "--node-json", node_json_};
        a.insert(a.end(), extra_args.begin(), extra_args.end());
        return a;
    }
    // A file each rank's program touches once it runs.
    std::string started(int local) { return dir_ + "/started." + std::to_string(local); }
    bool wait_started(int ranks) {
        for (int i = 0; i < 1000; ++i) {
            int n = 0;
            for (int l = 0; l < ranks; ++l) n += fs::exists(started(l));
            if (n == ranks) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    std::string dir_, node_json_, fake_, run_dir_, tmp_job_;
};

// srun -N2 -n8 xpart launch --verbose -- env: each node's ranks get distinct partitions.
TEST_F(LaunchCliTest, EveryRankOnItsOwnPartition) {
    const int nodes = 2, per_node = 4;
    for (int node = 0; node < nodes; ++node) {
        // Each node was allotted a different set of partitions.
        std::string allotted;
        for (int p = 0; p < per_node; ++p)
            allotted += (p ? "," : "") + mig_uuid(node * per_node + p, 7);
        std::vector<Proc> procs;
        for (int l = 0; l < per_node; ++l) {
            EnvMap env = slurm_rank(node * per_node + l, nodes * per_node, l, node, "4(x2)");
            env["CUDA_VISIBLE_DEVICES"] = allotted;
            procs.push_back(start_xpart(launch({"--verbose", "--", "env"}), env, dir_,
                                        "r" + std::to_string(node * per_node + l)));
        }
        std::set<std::string> seen;
        for (int l = 0; l < per_node; ++l) {
            ASSERT_EQ(finish(procs[l]), 0) << slurp(procs[l].err);
            std::string out = slurp(procs[l].out);
            std::string want = "CUDA_VISIBLE_DEVICES=" + mig_uuid(node * per_node + l, 7) + "\n";
            EXPECT_NE(out.find(want), std::string::npos) << out;
            seen.insert(want);
            std::string err = slurp(procs[l].err);
            int rank = node * per_node + l;
            EXPECT_EQ(err, "xpart: rank " + std::to_string(rank) + " local " + std::to_string(l) +
                               "/4 partition " + std::to_string(l) + " 1g.5gb " +
                               mig_uuid(rank, 7) + " gpu " + std::to_string(rank) + " " +
                               fixtures::kDgxBusIds[rank] + " numa 9 cpus unbound\n");
        }
        EXPECT_EQ(seen.size(), 4u);
    }
}

TEST_F(LaunchCliTest, ClosestUsesTheTopologyFile) {
    EnvMap env = slurm_rank(1, 2, 1, 0, "2");
    env["CUDA_VISIBLE_DEVICES"] = all_uuids(8, 1);
    Proc p = start_xpart(launch({"--verbose", "--bind=closest", "--topology",
                                 srcdir() + "/tests/binding/topologies/dgx-a100.xml", "--", "env"}),
                         env, dir_, "closest");
    ASSERT_EQ(finish(p), 0) << slurp(p.err);
    EXPECT_NE(slurp(p.out).find("CUDA_VISIBLE_DEVICES=" + mig_uuid(4, 7) + "\n"), std::string::npos);
    EXPECT_NE(slurp(p.err).find(" gpu 4 0000:87:00.0 numa 1 cpus 16-31"), std::string::npos)
        << slurp(p.err);
    // The XML is not this machine: its CPU numbers must not be used for binding.
    EXPECT_EQ(slurp(p.out).find("XPART_CPUS="), std::string::npos);
}

TEST_F(LaunchCliTest, ClosestPinsOnThisMachine) {
    EnvMap env = slurm_rank(0, 1, 0, 0, "1");
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 7);
    // No --topology: this machine's hwloc; the GPU is unknown to it, so the rank gets the
    // allowed CPUs, and the program really runs bound to them.
    Proc p = start_xpart(launch({"--bind=closest", "--", "sh", "-c", "echo $XPART_CPUS; grep Cpus_allowed_list /proc/self/status"}),
                         env, dir_, "pin");
    ASSERT_EQ(finish(p), 0) << slurp(p.err);
    std::istringstream out(slurp(p.out));
    std::string cpus, status;
    std::getline(out, cpus);
    std::getline(out, status);
    ASSERT_FALSE(cpus.empty());
    EXPECT_NE(status.find(cpus), std::string::npos) << cpus << " vs " << status;
}

struct StatusCase {
    const char* name;
    std::vector<std::string> command;
    EnvMap env;
    int status;
    const char* stderr_text;  // exact
};

class LaunchStatusTest : public LaunchCliTest, public ::testing::WithParamInterface<StatusCase> {};

TEST_P(LaunchStatusTest, PropagatesAndExplains) {
    const StatusCase& c = GetParam();
    EnvMap env = c.env;
    std::vector<std::string> args{"--"};
    args.insert(args.end(), c.command.begin(), c.command.end());
    Proc p = start_xpart(launch(args), env, dir_, "status");
    EXPECT_EQ(finish(p), c.status);
    EXPECT_EQ(slurp(p.err), c.stderr_text);
}

const StatusCase kStatusCases[] = {
    {"exit_status", {"sh", "-c", "exit 7"}, {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}}, 7, ""},
    {"signal_status", {"sh", "-c", "kill -TERM $$"}, {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}}, 143, ""},
    {"missing_program", {"/nonexistent/prog"}, {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}}, 127,
     "xpart launch: /nonexistent/prog: No such file or directory\n"},
    {"unknown_partition", {"true"}, {{"CUDA_VISIBLE_DEVICES", "MIG-nope"}}, 1,
     "xpart launch: environment: CUDA_VISIBLE_DEVICES='MIG-nope': token 'MIG-nope' matches no "
     "partition on this node\n"},
    {"bad_rank_variable", {"true"},
     {{"CUDA_VISIBLE_DEVICES", mig_uuid(0, 7)}, {"SLURM_PROCID", "one"}, {"SLURM_NTASKS", "2"}}, 1,
     "xpart launch: environment: SLURM_PROCID='one' is not a non-negative integer\n"},
    {"nothing_allotted", {"true"}, {}, 1,
     "xpart launch: environment: no partitions allotted: none of CUDA_VISIBLE_DEVICES, "
     "ROCR_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS is set\n"},
};

INSTANTIATE_TEST_SUITE_P(Cases, LaunchStatusTest, ::testing::ValuesIn(kStatusCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Ranks of a step whose job the Prolog only prepared run their own daemons in the job's
// user leaf: one per GPU instance while the programs run, none after the last rank left.
TEST_F(LaunchCliTest, MpsOneDaemonPerInstanceDuringTheStepNoneAfter) {
    prepare_job();
    // 4 ranks on 2 GPU instances: two ranks share each, with half the threads each.
    std::vector<Proc> procs;
    for (int l = 0; l < 4; ++l) {
        EnvMap env = slurm_rank(l, 4, l, 0, "4");
        env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 7) + "," + mig_uuid(0, 8);
        procs.push_back(start_xpart(
            launch({"--mps", "--mps-control", fake_, "--run-dir", run_dir_, "--", "sh", "-c",
                    "echo $CUDA_VISIBLE_DEVICES $CUDA_MPS_PIPE_DIRECTORY "
                    "$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; touch " + started(l) + "; sleep 1"}),
            env, dir_, "mps" + std::to_string(l)));
    }
    // While all four programs run: exactly one daemon process per instance, each recorded,
    // running as the job's user.
    ASSERT_TRUE(wait_started(4));
    EXPECT_EQ(daemons_under(step_dir()), 2);
    auto recorded = live_recorded(step_dir() + "/daemons");
    ASSERT_EQ(recorded.size(), 2u);
    for (const auto& r : recorded) EXPECT_EQ(r.process.uid, getuid()) << r.instance;
    for (int l = 0; l < 4; ++l) {
        ASSERT_EQ(finish(procs[l]), 0) << slurp(procs[l].err);
        std::string inst = l < 2 ? "gpu0-gi7" : "gpu0-gi8";
        EXPECT_EQ(slurp(procs[l].out),
                  mig_uuid(0, l < 2 ? 7 : 8) + " " + step_dir() + "/" + inst + "/pipe 50\n");
    }
    EXPECT_EQ(daemons_under(dir_), 0);
    for (const auto& r : recorded) EXPECT_FALSE(process::still_running(r.process)) << r.instance;
    EXPECT_FALSE(fs::exists(step_dir()));
    EXPECT_TRUE(fs::is_directory(job_dir() + "/user")) << "the job's leaf is the Epilog's to remove";
}

// Without the Prolog hook (no job directory under --run-dir) ranks keep theirs in
// /tmp/xpart-mps-<uid>/job-<job>.<step>, and still leave no daemon behind.
TEST_F(LaunchCliTest, MpsWithoutTheJobDirectoryUsesTheUsersTmpDirectory) {
    const std::string step = "/tmp/xpart-mps-" + std::to_string(getuid()) + "/job-" + tmp_job_ + ".0";
    std::vector<Proc> procs;
    for (int l = 0; l < 2; ++l) {
        EnvMap env = slurm_rank(l, 2, l, 0, "2");
        env["SLURM_JOB_ID"] = tmp_job_;
        env["CUDA_VISIBLE_DEVICES"] = mig_uuid(1, 7) + "," + mig_uuid(1, 8);
        procs.push_back(start_xpart(
            launch({"--mps", "--mps-control", fake_, "--run-dir", run_dir_, "--", "sh", "-c",
                    "echo $CUDA_MPS_PIPE_DIRECTORY; touch " + started(l) + "; sleep 1"}),
            env, dir_, "tmp" + std::to_string(l)));
    }
    ASSERT_TRUE(wait_started(2));
    EXPECT_EQ(daemons_under(step), 2);
    EXPECT_EQ(live_recorded(step + "/daemons").size(), 2u);
    struct stat st;
    ASSERT_EQ(lstat(("/tmp/xpart-mps-" + std::to_string(getuid())).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    for (int l = 0; l < 2; ++l) {
        ASSERT_EQ(finish(procs[l]), 0) << slurp(procs[l].err);
        EXPECT_EQ(slurp(procs[l].out), step + "/gpu1-gi" + std::to_string(7 + l) + "/pipe\n");
    }
    EXPECT_EQ(daemons_under(step), 0);
    EXPECT_FALSE(fs::exists(step));
    EXPECT_FALSE(fs::exists(job_dir())) << "ranks never create root's job directory";
}

TEST_F(LaunchCliTest, MpsKilledRankLeavesNothingBehind) {
    prepare_job();
    std::vector<Proc> procs;
    for (int l = 0; l < 3; ++l) {
        EnvMap env = slurm_rank(l, 3, l, 0, "3");
        env["CUDA_VISIBLE_DEVICES"] = all_uuids(3, 1);
        procs.push_back(start_xpart(
            launch({"--mps", "--mps-control", fake_, "--run-dir", run_dir_, "--", "sh", "-c",
                    "echo $$ >" + started(l) + ".pid; touch " + started(l) + "; exec sleep " +
                        (l == 0 ? "30" : "1")}),
            env, dir_, "kill" + std::to_string(l)));
    }
    ASSERT_TRUE(wait_started(3));
    EXPECT_EQ(daemons_under(step_dir()), 3);
    auto recorded = live_recorded(step_dir() + "/daemons");
    EXPECT_EQ(recorded.size(), 3u);
    kill(procs[0].pid, SIGKILL);  // rank 0's launcher dies without leaving
    EXPECT_EQ(finish(procs[0]), 128 + SIGKILL);
    for (int l = 1; l < 3; ++l) EXPECT_EQ(finish(procs[l]), 0) << slurp(procs[l].err);
    // The last rank out pruned the killed one and stopped all three.
    EXPECT_EQ(daemons_under(dir_), 0);
    for (const auto& r : recorded) EXPECT_FALSE(process::still_running(r.process)) << r.instance;
    EXPECT_FALSE(fs::exists(step_dir()));
    // Rank 0's program outlived its killed launcher (in Slurm its cgroup ends it): end it here,
    // or it stays behind the test for 30 s.
    const pid_t orphan = static_cast<pid_t>(std::stol(slurp(started(0) + ".pid")));
    if (orphan > 1) kill(orphan, SIGKILL);
}

TEST_F(LaunchCliTest, MpsDaemonDeathFailsTheRankClearly) {
    prepare_job();
    EnvMap env = slurm_rank(0, 1, 0, 0, "1");
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(2, 7);
    Proc p = start_xpart(launch({"--mps", "--mps-control", fake_, "--run-dir", run_dir_, "--", "sh",
                                 "-c", "touch " + started(0) + "; exec sleep 30"}),
                         env, dir_, "death");
    // Kill the daemon only once the program runs on it: the very process the records name.
    ASSERT_TRUE(wait_started(1)) << slurp(p.err);
    auto recorded = live_recorded(step_dir() + "/daemons");
    ASSERT_EQ(recorded.size(), 1u) << slurp(step_dir() + "/daemons");
    ASSERT_EQ(recorded[0].instance, "gpu2-gi7");
    ASSERT_EQ(daemons_under(step_dir()), 1);
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(process::signal_if_same(recorded[0].process, SIGKILL));
    EXPECT_EQ(finish(p), 1);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << "the rank hung";
    EXPECT_NE(slurp(p.err).find("xpart launch: rank 0: MPS control daemon for " + mig_uuid(2, 7) +
                                " died; see " + step_dir() + "/gpu2-gi7/log/control.log; "
                                "stopping the program"),
              std::string::npos)
        << slurp(p.err);
    EXPECT_EQ(daemons_under(dir_), 0);
    EXPECT_FALSE(fs::exists(step_dir()));
}

// The Prolog/Epilog path: `xpart mps start` as root for the job, ranks join, `stop` cleans.
TEST_F(LaunchCliTest, PrologStartRanksJoinEpilogStop) {
    const EnvMap prolog = prolog_env(all_uuids(2, 2));
    Proc start = start_xpart({"mps", "start"}, prolog, dir_, "prolog");
    ASSERT_EQ(finish(start), 0) << slurp(start.err);
    const std::string user_mps = job_dir() + "/user/mps";
    EXPECT_EQ(daemons_under(user_mps), 4);
    auto recorded = live_recorded(job_dir() + "/mps");  // root's own records
    EXPECT_EQ(recorded.size(), 4u);
    for (const auto& r : recorded) EXPECT_EQ(r.process.uid, getuid()) << r.instance;
    Proc status = start_xpart({"mps", "status"}, prolog, dir_, "status");
    EXPECT_EQ(finish(status), 0) << slurp(status.err);
    std::string lines = slurp(status.out);
    EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 4) << lines;
    EXPECT_NE(lines.find("gpu1-gi8 " + mig_uuid(1, 8) + " pid "), std::string::npos) << lines;
    EXPECT_EQ(lines.find("dead"), std::string::npos);

    EnvMap rank = slurm_rank(0, 1, 0, 0, "1");
    rank["CUDA_VISIBLE_DEVICES"] = mig_uuid(1, 8);
    rank["XPART_RUN_DIR"] = run_dir_;
    Proc r = start_xpart(launch({"--mps", "--mps-control", fake_, "--", "sh", "-c", "echo $CUDA_MPS_PIPE_DIRECTORY"}),
                         rank, dir_, "rank");
    ASSERT_EQ(finish(r), 0) << slurp(r.err);
    EXPECT_EQ(slurp(r.out), user_mps + "/gpu1-gi8/pipe\n");
    EXPECT_EQ(daemons_under(dir_), 4) << "ranks must not stop the Prolog's daemons, nor start their own";
    EXPECT_FALSE(fs::exists(step_dir()));

    Proc stop = start_xpart({"mps", "stop"}, prolog, dir_, "epilog");
    ASSERT_EQ(finish(stop), 0) << slurp(stop.err);
    // Root houses its daemons (a cgroup each) and says which it ended; they all quit when asked.
    EXPECT_EQ(slurp(stop.err), geteuid() == 0 ? "xpart mps stop: job 4242: MPS daemons ended: job.gpu0-gi7, "
                                                "job.gpu0-gi8, job.gpu1-gi7, job.gpu1-gi8; could not end: none\n"
                                              : "");
    EXPECT_EQ(daemons_under(dir_), 0);
    for (const auto& d : recorded) EXPECT_FALSE(process::still_running(d.process)) << d.instance;
    EXPECT_FALSE(fs::exists(job_dir()));
    Proc after = start_xpart({"mps", "status"}, prolog, dir_, "after");
    EXPECT_EQ(finish(after), 1);
    EXPECT_EQ(slurp(after.out), "job 4242: no MPS daemons\n");
}

}  // namespace
}  // namespace xpart::launcher

namespace xpart::launcher {
namespace {

// The shipped hooks, run as Slurm would run them (as root, with the job's variables).
TEST_F(LaunchCliTest, PrologAndEpilogHooksAsShipped) {
    EnvMap env = prolog_env(all_uuids(3, 1));
    env["SLURM_JOB_CONSTRAINTS"] = "bigmem,xpart-mps";
    env["XPART"] = builddir() + "/xpart";
    auto run_hook = [&](const std::string& hook, const EnvMap& e) {
        pid_t pid = fork();
        if (pid == 0) {
            for (const auto& [k, v] : e) setenv(k.c_str(), v.c_str(), 1);
            execl("/bin/bash", "bash", hook.c_str(), static_cast<char*>(nullptr));
            _exit(126);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    };
    const std::string prolog = srcdir() + "/etc/prolog.d/xpart-mps.sh";
    const std::string epilog = srcdir() + "/etc/epilog.d/xpart-mps.sh";
    // Not asked for: only the job's private directory, no daemon.
    EnvMap plain = env;
    plain["SLURM_JOB_CONSTRAINTS"] = "bigmem";
    EXPECT_EQ(run_hook(prolog, plain), 0);
    EXPECT_EQ(daemons_under(dir_), 0);
    EXPECT_TRUE(fs::is_directory(job_dir() + "/user"));
    EXPECT_FALSE(fs::exists(job_dir() + "/mps"));
    // Asked for: one daemon per instance, recorded in root's file.
    ASSERT_EQ(run_hook(prolog, env), 0);
    EXPECT_EQ(daemons_under(job_dir() + "/user/mps"), 3);
    auto recorded = live_recorded(job_dir() + "/mps");
    EXPECT_EQ(recorded.size(), 3u);
    ASSERT_EQ(run_hook(epilog, env), 0);
    EXPECT_EQ(daemons_under(dir_), 0);
    for (const auto& r : recorded) EXPECT_FALSE(process::still_running(r.process)) << r.instance;
    EXPECT_FALSE(fs::exists(job_dir()));
}

}  // namespace
}  // namespace xpart::launcher

namespace xpart::launcher {
namespace {

// Real discovery on a simulated node: xpart-sim builds the A100 MIG guide node (root tree and
// fake NVML), and `xpart --root` launches three ranks on three of its MIG devices.
TEST_F(LaunchCliTest, DiscoversASimulatedNode) {
    const std::string root = dir_ + "/root";
    pid_t pid = fork();
    if (pid == 0) {
        std::string sim = builddir() + "/xpart-sim", spec = srcdir() + "/sim/specs/a100-guide.json";
        execl(sim.c_str(), sim.c_str(), "build", spec.c_str(), root.c_str(), static_cast<char*>(nullptr));
        _exit(126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    const std::vector<std::string> uuids{"MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f",
                                         "MIG-0c757cd7-e942-5726-a0b8-0e8fb7067135",
                                         "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb"};
    for (int r = 0; r < 3; ++r) {
        EnvMap env = slurm_rank(r, 3, r, 0, "3");
        env["CUDA_VISIBLE_DEVICES"] = uuids[0] + "," + uuids[1] + "," + uuids[2];
        env["XPART_NVML_LIBRARY"] = root + "/usr/lib/xpart-sim/libnvidia-ml.so.1";
        Proc p = start_xpart({"--root", root, "launch", "--verbose", "--", "sh", "-c",
                              "echo $CUDA_VISIBLE_DEVICES"},
                             env, dir_, "sim" + std::to_string(r));
        ASSERT_EQ(finish(p), 0) << slurp(p.err);
        EXPECT_EQ(slurp(p.out), uuids[static_cast<std::size_t>(r)] + "\n");
        EXPECT_NE(slurp(p.err).find("partition " + std::to_string(r) + " "), std::string::npos)
            << slurp(p.err);
    }
}

// --nic on the DGX-A100-like node: two ranks on the first MIG device of GPUs 0 and 1 (one
// PCIe switch, two NICs) get one NIC each in NCCL_IB_HCA/UCX_NET_DEVICES; a value the user
// set is kept unless closest-override.
TEST_F(LaunchCliTest, NicClosestPerRank) {
    const std::string root = dir_ + "/root", spec = srcdir() + "/sim/specs/dgx-a100-nic.json";
    pid_t pid = fork();
    if (pid == 0) {
        std::string sim = builddir() + "/xpart-sim";
        execl(sim.c_str(), sim.c_str(), "build", spec.c_str(), root.c_str(), static_cast<char*>(nullptr));
        _exit(126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    std::ifstream in(spec);
    const auto j = nlohmann::json::parse(in, nullptr, true, true);
    const std::string first = j["nvidia"]["gpus"][0]["instances"][0]["uuid"];
    const std::string second = j["nvidia"]["gpus"][1]["instances"][0]["uuid"];
    struct Row {
        int rank;
        const char* mode;
        const char* user_hca;  // "" = unset
        const char* want;      // NCCL_IB_HCA UCX_NET_DEVICES XPART_NIC
    };
    const Row rows[] = {
        {0, "closest", "", "=mlx5_0:1 mlx5_0:1 mlx5_0:1"},
        {1, "closest", "", "=mlx5_1:1 mlx5_1:1 mlx5_1:1"},
        {1, "closest", "mlx5_9", "mlx5_9 mlx5_1:1 mlx5_1:1"},
        {1, "closest-override", "mlx5_9", "=mlx5_1:1 mlx5_1:1 mlx5_1:1"},
        {1, "none", "", "  "},
    };
    for (const Row& r : rows) {
        EnvMap env = slurm_rank(r.rank, 2, r.rank, 0, "2");
        env["CUDA_VISIBLE_DEVICES"] = first + "," + second;
        env["XPART_NVML_LIBRARY"] = root + "/usr/lib/xpart-sim/libnvidia-ml.so.1";
        if (*r.user_hca) env["NCCL_IB_HCA"] = r.user_hca;
        const std::string tag = "nic" + std::to_string(r.rank) + r.mode + r.user_hca;
        Proc p = start_xpart({"--root", root, "launch", "--verbose", "--nic", r.mode, "--", "sh", "-c",
                              "echo \"$NCCL_IB_HCA $UCX_NET_DEVICES $XPART_NIC\""},
                             env, dir_, tag);
        ASSERT_EQ(finish(p), 0) << slurp(p.err);
        EXPECT_EQ(slurp(p.out), std::string(r.want) + "\n") << tag;
        const bool named = slurp(p.err).find(" nic mlx5_") != std::string::npos;
        EXPECT_EQ(named, std::string(r.mode) != "none") << slurp(p.err);
    }
}

}  // namespace
}  // namespace xpart::launcher

namespace xpart::launcher {
namespace {

// --confine=rank on a simulated node (root: real cgroups). Two ranks share a GPU's two first
// partitions; each rank's program opens every device file of both: its own (shared ones
// included) must be allowed (ENXIO/ENODEV: the simulated nodes have no driver), the other
// rank's must be refused (EPERM). The rank's cgroup is gone once the rank ended.
struct ConfineCase {
    const char* name;
    const char* spec;
    const char* variable;  // how the step lists the two partitions
    bool nvml;
};

class LaunchConfineTest : public LaunchCliTest, public ::testing::WithParamInterface<ConfineCase> {};

const char* const kOpenProbe = R"(import errno, os, sys
for p in sys.argv[1:]:
    try:
        os.close(os.open(p, os.O_RDONLY)); r = "OK"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(p, r))";

TEST_P(LaunchConfineTest, EachRankOpensOnlyItsOwnPartition) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
    const ConfineCase& c = GetParam();
    const std::string root = dir_ + "/root";
    pid_t pid = fork();
    if (pid == 0) {
        std::string sim = builddir() + "/xpart-sim", spec = srcdir() + "/sim/specs/" + c.spec;
        execl(sim.c_str(), sim.c_str(), "build", spec.c_str(), root.c_str(), static_cast<char*>(nullptr));
        _exit(126);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    DiscoveryOptions d;
    d.root = RootFs(root);
    d.nvml_library = root + "/usr/lib/xpart-sim/libnvidia-ml.so.1";
    auto node = discover(d);
    ASSERT_TRUE(node) << node.error().message;
    ASSERT_FALSE(node->gpus.empty());
    const auto& parts = node->gpus[0].partitions;
    ASSERT_GE(parts.size(), 2u);
    std::vector<std::set<std::string>> files(2);
    for (int r = 0; r < 2; ++r)
        for (const auto& f : parts[static_cast<std::size_t>(r)].device_files) files[static_cast<std::size_t>(r)].insert(root + f.path);

    const std::string list = std::string(c.variable) == "CUDA_VISIBLE_DEVICES"
                                 ? parts[0].uuid + "," + parts[1].uuid
                                 : std::string("0,1");
    for (int r = 0; r < 2; ++r) {
        EnvMap env = slurm_rank(r, 2, r, 0, "2");
        env[c.variable] = list;
        if (c.nvml) env["XPART_NVML_LIBRARY"] = d.nvml_library;
        std::vector<std::string> args{"--root", root, "launch", "--verbose", "--confine=rank", "--",
                                      "python3", "-c", kOpenProbe};
        std::set<std::string> both = files[0];
        both.insert(files[1].begin(), files[1].end());
        args.insert(args.end(), both.begin(), both.end());
        Proc p = start_xpart(args, env, dir_, "confine" + std::to_string(r));
        ASSERT_EQ(finish(p), 0) << slurp(p.err);
        const auto& own = files[static_cast<std::size_t>(r)];
        std::istringstream out(slurp(p.out));
        std::string path, result;
        int allowed = 0, refused = 0;
        while (out >> path >> result) {
            if (own.count(path)) {
                EXPECT_TRUE(result == "ENXIO" || result == "ENODEV") << "rank " << r << " own " << path << ": " << result;
                ++allowed;
            } else {
                EXPECT_EQ(result, "EPERM") << "rank " << r << " other rank's " << path;
                ++refused;
            }
        }
        EXPECT_EQ(allowed, static_cast<int>(own.size()));
        EXPECT_GT(refused, 0) << "the two partitions share every file";
        // The verbose line names the cgroup; the launcher removed it when the rank ended.
        const std::string err = slurp(p.err);
        const std::string tag = "confined to cgroup ";
        auto at = err.find(tag);
        ASSERT_NE(at, std::string::npos) << err;
        const std::string cg = err.substr(at + tag.size(), err.find('\n', at) - at - tag.size());
        EXPECT_NE(cg.find("xpart_rank" + std::to_string(r) + "_"), std::string::npos) << cg;
        EXPECT_FALSE(fs::exists(cg)) << cg << " left behind";
    }
}

const ConfineCase kConfineCases[] = {
    {"mig_a100_guide", "a100-guide.json", "CUDA_VISIBLE_DEVICES", true},
    {"mi300x_cpx", "mi300x-cpx-8gpu.json", "ROCR_VISIBLE_DEVICES", false},
};

INSTANTIATE_TEST_SUITE_P(Nodes, LaunchConfineTest, ::testing::ValuesIn(kConfineCases),
                         [](const auto& info) { return std::string(info.param.name); });

// A rank whose cgroup cannot be set up does not run at all: one error line, exit 1. Forced
// with a parent that denies every device by default (v1): the rank's DenyManaged set would
// need the allow-by-default its parent forbids.
TEST_F(LaunchCliTest, ConfineFailureRunsNothing) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    ASSERT_TRUE(layout) << layout.error().message;
    if (!layout->has(cgroup::Hierarchy::V1)) GTEST_SKIP() << "no v1 devices controller";
    const std::string parent = layout->own(cgroup::Hierarchy::V1) + "/xpart_test_denyall_" + std::to_string(getpid());
    ASSERT_EQ(mkdir(parent.c_str(), 0755), 0) << parent << ": " << std::strerror(errno);
    ASSERT_TRUE((std::ofstream(parent + "/devices.deny") << "a").flush());
    EnvMap env = slurm_rank(0, 1, 0, 0, "1");
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 7);
    const std::string marker = dir_ + "/ran";
    Proc p = start_xpart(launch({"--confine=rank", "--", "touch", marker}), env, dir_, "cfail",
                         parent + "/cgroup.procs");
    const int rc = finish(p);
    EXPECT_EQ(rmdir(parent.c_str()), 0) << parent << ": " << std::strerror(errno);
    EXPECT_EQ(rc, 1);
    const std::string err = slurp(p.err);
    EXPECT_EQ(err.rfind("xpart launch: --confine=rank: ", 0), 0u) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_FALSE(fs::exists(marker)) << "the program ran unconfined";
}

// Without CAP_SYS_ADMIN (a job's user; here, as root, the capability is dropped from the
// bounding set, so exec does not give it back) the kernel refuses every device rule, so
// --confine=rank refuses up front: one line naming what works instead, exit 1, no cgroup,
// the program never runs.
TEST_F(LaunchCliTest, ConfineWithoutCapSysAdminRefusesUpFront) {
    EnvMap env = slurm_rank(0, 1, 0, 0, "1");
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 7);
    const std::string marker = dir_ + "/ran";
    auto drop_cap = [] {
        if (geteuid() == 0 && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0) _exit(124);
    };
    Proc p = start_xpart(launch({"--verbose", "--confine=rank", "--", "touch", marker}), env, dir_,
                         "nocap", "", drop_cap);
    EXPECT_EQ(finish(p), 1);
    EXPECT_EQ(slurp(p.err),
              "xpart launch: --confine=rank needs CAP_SYS_ADMIN to set device rules; under Slurm use "
              "'srun --xpart-confine' (the xpart SPANK plugin), elsewhere run the launcher as root\n");
    EXPECT_EQ(slurp(p.out), "");
    EXPECT_FALSE(fs::exists(marker)) << "the program ran";
    if (auto layout = cgroup::detect_cgroup_layout(RootFs("/"))) {
        for (auto h : {cgroup::Hierarchy::V1, cgroup::Hierarchy::V2}) {
            if (layout->has(h)) {
                EXPECT_FALSE(fs::exists(layout->own(h) + "/xpart_rank0_" + std::to_string(p.pid)));
            }
        }
    }
    // Without --confine the same rank runs as before.
    Proc plain = start_xpart(launch({"--", "touch", marker}), env, dir_, "nocap-plain", "", drop_cap);
    EXPECT_EQ(finish(plain), 0) << slurp(plain.err);
    EXPECT_TRUE(fs::exists(marker));
}

}  // namespace
}  // namespace xpart::launcher

namespace xpart::launcher {
namespace {

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

// A launcher killed with SIGKILL leaves its rank cgroup behind (it cannot remove it); the next
// confined launcher in the same cgroup removes it before making its own. A sibling with a
// process inside stays, whoever made it. Real v1 cgroups (root).
TEST_F(LaunchCliTest, ConfineSweepsSiblingsOfKilledLaunchers) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (cgroups)";
    auto layout = cgroup::detect_cgroup_layout(RootFs("/"));
    ASSERT_TRUE(layout) << layout.error().message;
    if (!layout->has(cgroup::Hierarchy::V1)) GTEST_SKIP() << "no v1 devices controller";
    const std::string parent = layout->own(cgroup::Hierarchy::V1) + "/xpart_test_sweep_" + std::to_string(getpid());
    ASSERT_EQ(mkdir(parent.c_str(), 0755), 0) << parent << ": " << std::strerror(errno);
    EnvMap env = slurm_rank(0, 1, 0, 0, "1");
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 7);

    // 1. A confined rank; its launcher gets SIGKILL, then its program ends.
    const std::string pid_file = dir_ + "/program.pid";
    Proc first = start_xpart(launch({"--verbose", "--confine=rank", "--", "sh", "-c",
                                     "echo $$ >" + pid_file + ".tmp && mv " + pid_file + ".tmp " +
                                         pid_file + " && exec sleep 300"}),
                             env, dir_, "first", parent + "/cgroup.procs");
    const std::string leftover = parent + "/xpart_rank0_" + std::to_string(first.pid);
    ASSERT_TRUE(wait_until([&] { return fs::exists(pid_file); }, std::chrono::seconds(30))) << slurp(first.err);
    ASSERT_TRUE(fs::exists(leftover)) << slurp(first.err);
    const pid_t program = static_cast<pid_t>(std::stol(slurp(pid_file)));
    ASSERT_EQ(kill(first.pid, SIGKILL), 0);
    EXPECT_EQ(finish(first), 128 + SIGKILL);
    ASSERT_EQ(kill(program, SIGKILL), 0);
    ASSERT_TRUE(wait_until([&] { return slurp(leftover + "/cgroup.procs").empty(); }, std::chrono::seconds(10)));
    EXPECT_TRUE(fs::exists(leftover)) << "nothing removed it yet";

    // 2. A sibling whose dead launcher left a process in it.
    const std::string busy = parent + "/xpart_rank1_" + std::to_string(first.pid);
    ASSERT_EQ(mkdir(busy.c_str(), 0755), 0);
    pid_t sleeper = fork();
    if (sleeper == 0) {
        execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
        _exit(126);
    }
    ASSERT_TRUE((std::ofstream(busy + "/cgroup.procs") << sleeper).flush());

    // 3. The next confined launcher in the same cgroup.
    Proc second = start_xpart(launch({"--confine=rank", "--", "true"}), env, dir_, "second",
                              parent + "/cgroup.procs");
    EXPECT_EQ(finish(second), 0) << slurp(second.err);
    EXPECT_FALSE(fs::exists(leftover)) << leftover << " left behind";
    EXPECT_TRUE(fs::exists(busy)) << busy << " removed with a process inside";

    kill(sleeper, SIGKILL);
    waitpid(sleeper, nullptr, 0);
    for (const std::string& d : {busy, leftover, parent})
        for (int i = 0; i < 50 && fs::exists(d) && rmdir(d.c_str()) != 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(fs::exists(parent)) << parent;
}

}  // namespace
}  // namespace xpart::launcher
