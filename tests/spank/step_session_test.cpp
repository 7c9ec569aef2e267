// One step as the SPANK plugin runs it (spank_plugin/step_session.hpp) without Slurm: the node
// cache under a private root, MPS daemons (the fake nvidia-cuda-mps-control) started for the
// step and recorded in root's mps.step_<s>, each task's environment, the step's end and the
// job's Epilog. Confinement needs root and a device cgroup: the real-Slurm test covers it;
// here every step runs with confine=no.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "mps/root/mps_job.hpp"
#include "spank_plugin/step_session.hpp"
#include "libxpart/node_cache.hpp"
#include "tests/fixtures/sample_nodes.hpp"
#include "tests/spank/step_test_util.hpp"

namespace xpart::spank {
namespace {

namespace fs = std::filesystem;
using fixtures::mig_uuid;

bool gone_soon(const process::ProcessIdentity& p) {
    for (int i = 0; i < 1000 && process::still_running(p); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return !process::still_running(p);
}

class StepSessionTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        ASSERT_TRUE(fs::exists(testing::fake_mps_control())) << testing::fake_mps_control();
        // GPU 0: seven 1g.5gb on GPU instances 7..13 (gres records 0-6); GPUs 1-7 whole.
        ASSERT_TRUE(write_node_cache(RootFs(dir_.path()), fixtures::dgx_a100(1, 7)).ok());
        auto o = parse_site_args({"run_dir=" + run_dir(), "mps_control=" + testing::fake_mps_control(),
                                  "mps_timeout=5", "confine=no"});
        ASSERT_TRUE(o.ok()) << o.error().message;
        options_ = *o;
        job_.run_dir = run_dir();
        job_.control = options_.mps_job.control;
        job_.timeout = options_.mps_job.timeout;
    }
    void TearDown() override { (void)mps::stop_job_daemons(job_, "7"); }

    std::string run_dir() const { return dir_.path() + "/jobs"; }  // not /run: the node cache is there
    std::string job_dir() const { return run_dir() + "/job_7"; }
    // The step env slurmstepd has: records 0..n-1 of GPU 0 and their UUIDs.
    static EnvMap step_env(int partitions) {
        EnvMap env{{"PATH", "/usr/bin"}};
        std::string gpus, cuda;
        for (int p = 0; p < partitions; ++p) {
            gpus += (p ? "," : "") + std::to_string(p);
            cuda += (p ? "," : "") + mig_uuid(0, 7 + p);
        }
        env["SLURM_STEP_GPUS"] = gpus;
        env["CUDA_VISIBLE_DEVICES"] = cuda;
        return env;
    }
    Result<StepSession> begin(const EnvMap& env, int tasks, const std::string& step = "0") {
        return StepSession::begin(options_, RootFs(dir_.path()), env,
                                  {"7", step, process::current_credentials(), tasks});
    }
    // The daemons root recorded in the job directory's file `name`.
    std::vector<process::ProcessIdentity> recorded(const std::string& name) {
        std::vector<process::ProcessIdentity> out;
        auto job = mps::JobDir::open(run_dir(), "7");
        if (!job.ok() || !*job) return out;
        auto text = (*job)->read_file(name);
        if (!text.ok() || !*text) return out;
        auto records = mps::parse_records(**text, name);
        EXPECT_TRUE(records.ok()) << records.error().message;
        if (records.ok())
            for (const auto& r : *records) out.push_back(r.process);
        return out;
    }
    std::vector<std::string> root_files() {
        auto job = mps::JobDir::open(run_dir(), "7");
        if (!job.ok() || !*job) return {};
        return (*job)->file_names();
    }

    testing::ScratchDir dir_;
    StepOptions options_;
    mps::MpsJobOptions job_;
};

std::map<std::string, std::optional<std::string>> as_map(const std::vector<EnvChange>& changes) {
    std::map<std::string, std::optional<std::string>> out;
    for (const auto& c : changes) out[c.name] = c.value;
    return out;
}

TEST_F(StepSessionTest, InactiveOptionsDoNothing) {
    auto s = begin(step_env(2), 2);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_FALSE(s->binds());
    EXPECT_TRUE(s->env(0, step_env(2)).empty());
    EXPECT_TRUE(s->confine(0, getpid()).ok());
    EXPECT_TRUE(s->end().empty());
    EXPECT_FALSE(fs::exists(run_dir()));
}

TEST_F(StepSessionTest, AStepWithoutGpusHereIsANote) {
    options_.bind = StepBind::Rank;
    options_.mps = true;
    auto s = begin({{"PATH", "/usr/bin"}}, 2);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_FALSE(s->binds());
    EXPECT_EQ(s->notes(), (std::vector<std::string>{
                              "the step has no GPU on this node; --xpart options do nothing here"}));
    EXPECT_FALSE(fs::exists(run_dir())) << "no MPS daemon for a step without GPUs";
}

TEST_F(StepSessionTest, PlanErrorsFailTheStep) {
    options_.bind = StepBind::Rank;
    EnvMap env = step_env(2);
    env["CUDA_VISIBLE_DEVICES"] = mig_uuid(0, 8) + "," + mig_uuid(0, 7);
    auto s = begin(env, 2);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, "SLURM_STEP_GPUS names " + mig_uuid(0, 7) +
                                     " but CUDA_VISIBLE_DEVICES is '" + env["CUDA_VISIBLE_DEVICES"] +
                                     "': the node changed since slurmd started (restart slurmd)");
}

TEST_F(StepSessionTest, BindWithoutConfinementOnlyAdvises) {
    options_.bind = StepBind::Rank;
    auto s = begin(step_env(2), 2);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE(s->binds());
    // confine=no: no cgroup, no affinity change; the task's own pid is never touched.
    EXPECT_TRUE(s->confine(1, getpid()).ok());
    auto env = as_map(s->env(1, step_env(2)));
    EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], mig_uuid(0, 8));
    EXPECT_EQ(env["SLURM_STEP_GPUS"], "1");
    EXPECT_EQ(env.count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
    EXPECT_TRUE(s->task_ended(1).ok());
    EXPECT_TRUE(s->end().empty());
}

// --xpart-mps without a Prolog: the step's own daemons, one per GPU instance its tasks use,
// as the user, recorded by root; stopped at the step's end.
TEST_F(StepSessionTest, MpsDaemonsPerInstanceForTheStep) {
    options_.mps = true;  // alone: binds rank
    auto s = begin(step_env(2), 3);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE(s->binds());
    EXPECT_EQ(root_files(), (std::vector<std::string>{"lock", "mps.step_0"}));
    auto daemons = recorded("mps.step_0");
    ASSERT_EQ(daemons.size(), 2u) << "one daemon per GPU instance, not per task";
    for (const auto& d : daemons) EXPECT_TRUE(process::still_running(d)) << d.pid;

    const std::string base = job_dir() + "/user/mps_step_0/";
    // Tasks 0 and 1 share GPU instance 7, task 2 has instance 8 to itself.
    for (int t = 0; t < 3; ++t) {
        const std::string inst = t < 2 ? "gpu0-gi7" : "gpu0-gi8";
        auto env = as_map(s->env(t, step_env(2)));
        EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], mig_uuid(0, t < 2 ? 7 : 8)) << t;
        EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], base + inst + "/pipe") << t;
        EXPECT_EQ(env["CUDA_MPS_LOG_DIRECTORY"], base + inst + "/log") << t;
        if (t < 2)
            EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "50") << t;
        else
            EXPECT_EQ(env.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), 0u) << t;
        EXPECT_TRUE(fs::is_directory(base + inst + "/pipe")) << inst;
    }

    EXPECT_EQ(s->end(), std::vector<std::string>{});
    for (const auto& d : daemons) EXPECT_TRUE(gone_soon(d)) << "daemon " << d.pid << " outlived the step";
    EXPECT_TRUE(s->end().empty()) << "end() is idempotent";
    // The job directory stays for the Epilog.
    EXPECT_TRUE(fs::is_directory(job_dir()));
}

// Two steps of one job each start their own daemons; the Epilog stops what a step left.
TEST_F(StepSessionTest, TheEpilogStopsDaemonsAStepLeft) {
    options_.mps = true;
    auto first = begin(step_env(1), 1, "0");
    ASSERT_TRUE(first.ok()) << first.error().message;
    auto second = begin(step_env(2), 2, "1");
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(root_files(), (std::vector<std::string>{"lock", "mps.step_0", "mps.step_1"}));
    auto daemons = recorded("mps.step_0");
    auto more = recorded("mps.step_1");
    ASSERT_EQ(daemons.size(), 1u);
    ASSERT_EQ(more.size(), 2u);
    daemons.insert(daemons.end(), more.begin(), more.end());
    // slurmstepd died: neither step ended. The Epilog finds both records.
    auto r = mps::stop_job_daemons(job_, "7");
    EXPECT_TRUE(r.had_job_dir);
    EXPECT_TRUE(r.survivors.empty());
    for (const auto& d : daemons) EXPECT_TRUE(gone_soon(d)) << "daemon " << d.pid << " outlived the job";
    EXPECT_FALSE(fs::exists(job_dir()));
}

// The Prolog's daemons (sbatch --constraint=xpart-mps): the step joins them, and its end
// leaves them to the Epilog.
TEST_F(StepSessionTest, PrologDaemonsAreJoinedNotStopped) {
    options_.mps = true;
    std::vector<mps::MpsInstance> instances = {{"gpu0-gi7", mig_uuid(0, 7)}, {"gpu0-gi8", mig_uuid(0, 8)}};
    ASSERT_TRUE(mps::start_job_daemons(job_, "7", process::current_credentials(), instances).ok());
    auto prolog = recorded(mps::kMpsRecords);
    ASSERT_EQ(prolog.size(), 2u);
    auto s = begin(step_env(2), 2);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_EQ(root_files(), (std::vector<std::string>{"lock", "mps"}));
    auto env = as_map(s->env(1, step_env(2)));
    EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], job_dir() + "/user/mps/gpu0-gi8/pipe");
    EXPECT_TRUE(s->end().empty());
    for (const auto& d : prolog) EXPECT_TRUE(process::still_running(d)) << "a step stopped the Prolog's daemon";
}

struct MpsRefusal {
    const char* name;
    void (*setup)(const mps::MpsJobOptions&);  // what the job directory holds first
    std::string step;
    const char* error_start;              // the step's error begins so
};

class StepMpsRefusalTest : public StepSessionTest, public ::testing::WithParamInterface<MpsRefusal> {};

TEST_P(StepMpsRefusalTest, FailsTheStepAndStartsNothing) {
    const MpsRefusal& c = GetParam();
    if (c.setup) c.setup(job_);
    options_.mps = true;
    auto s = begin(step_env(1), 1, c.step);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message.rfind(c.error_start, 0), 0u) << s.error().message;
    for (const auto& name : root_files()) EXPECT_NE(name.rfind("mps.step_", 0), 0u) << name;
}

const MpsRefusal kRefusals[] = {
    {"failed_prolog",
     [](const mps::MpsJobOptions& o) {
         mps::MpsJobOptions broken = o;
         broken.control = "/nonexistent/nvidia-cuda-mps-control";
         (void)mps::start_job_daemons(broken, "7", process::current_credentials(), {{"gpu0-gi7", mig_uuid(0, 7)}});
     },
     "0", "--xpart-mps: MPS daemons of job 7 failed to start: "},
    {"job_ending",
     [](const mps::MpsJobOptions& o) {
         auto job = prepare_job(o, "7", process::current_credentials());
         ASSERT_TRUE(job.ok());
         ASSERT_TRUE(job->write_file("ended", "1\n").ok());
     },
     "0", "--xpart-mps: job 7 is ending: no MPS daemon started"},
    {"bad_step_id", nullptr, "../0", "--xpart-mps: step id: "},
};

INSTANTIATE_TEST_SUITE_P(Refusals, StepMpsRefusalTest, ::testing::ValuesIn(kRefusals),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(StepSessionTest, MpsOnAmdIsRefused) {
    ASSERT_TRUE(write_node_cache(RootFs(dir_.path()), fixtures::mi300x_cpx_node()).ok());
    options_.mps = true;
    auto s = begin({{"SLURM_STEP_GPUS", "2"}}, 1);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message.rfind("--xpart-mps: ", 0), 0u) << s.error().message;
    EXPECT_NE(s.error().message.find(fixtures::amd_gpu_uuid(0) + " is an AMD partition; MPS is NVIDIA only"),
              std::string::npos)
        << s.error().message;
    EXPECT_FALSE(fs::exists(run_dir()));
}

// JobDir::file_names: root's files, sorted, never user/.
TEST_F(StepSessionTest, FileNamesAreRootsFilesSorted) {
    auto job = prepare_job(job_, "7", process::current_credentials());
    ASSERT_TRUE(job.ok()) << job.error().message;
    EXPECT_EQ(job->file_names(), std::vector<std::string>{});
    for (const char* n : {"mps.step_2", "ended", "mps", "mps.step_10"})
        ASSERT_TRUE(job->write_file(n, "x\n").ok()) << n;
    EXPECT_EQ(job->file_names(), (std::vector<std::string>{"ended", "mps", "mps.step_10", "mps.step_2"}));
    EXPECT_TRUE(fs::is_directory(job->user_dir()));
}

}  // namespace
}  // namespace xpart::spank
