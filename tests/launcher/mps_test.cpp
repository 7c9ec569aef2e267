// The MPS lifecycle against the fake nvidia-cuda-mps-control: real daemons, real sockets,
// real pid files, in a private temp directory.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "launcher/mps_session.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart::launch {
namespace {

namespace fs = std::filesystem;

std::string fake_control() {
    const char* b = std::getenv("XPART_BUILDDIR");
    return std::string(b ? b : ".") + "/sim/fake_mps/nvidia-cuda-mps-control";
}

#define EXPECT_OK(expr)                                       \
    do {                                                      \
        auto status_ = (expr);                                \
        ASSERT_TRUE(status_.ok()) << status_.error().message; \
    } while (0)

// Running and not a zombie (an exited daemon may wait for a reaper that never comes here).
bool pid_alive(pid_t pid) {
    if (pid <= 0 || kill(pid, 0) != 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

// Daemons leave a zombie-free process table only after they exit: poll briefly.
bool gone_soon(pid_t pid) {
    for (int i = 0; i < 500 && pid_alive(pid); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return !pid_alive(pid);
}

class MpsTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xpl-XXXXXX";  // short: socket paths must stay under 108 bytes
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        config_.control = fake_control();
        config_.job_dir = base_ + "/job-1.0";
        config_.uid = getuid();
        config_.gid = getgid();
        config_.timeout = std::chrono::milliseconds(5000);
        ASSERT_TRUE(fs::exists(config_.control)) << config_.control;
    }
    void TearDown() override {
        // Whatever a failed test left running is stopped here.
        (void)stop_job(config_);
        std::error_code ec;
        fs::remove_all(base_, ec);
    }
    std::vector<MpsInstance> instances(int n) {
        std::vector<MpsInstance> out;
        for (int i = 0; i < n; ++i)
            out.push_back({"gpu0-gi" + std::to_string(7 + i), fixtures::mig_uuid(0, 7 + i)});
        return out;
    }
    int live_daemons() {
        int n = 0;
        for (const auto& s : daemon_states(config_, false)) n += s.alive;
        return n;
    }
    std::string base_;
    MpsConfig config_;
};

TEST_F(MpsTest, StartStatusStop) {
    auto inst = instances(2);
    EXPECT_OK(start_daemons(config_, inst));
    auto states = daemon_states(config_, true);
    ASSERT_EQ(states.size(), 2u);
    std::vector<pid_t> pids;
    for (const auto& s : states) {
        EXPECT_TRUE(s.alive) << s.instance;
        EXPECT_TRUE(s.answers) << s.instance;
        EXPECT_FALSE(s.servers.empty()) << "start_server -uid was not run for " << s.instance;
        pids.push_back(s.pid);
        for (const auto& d : {mps_pipe_dir(config_, s.instance), mps_log_dir(config_, s.instance)}) {
            struct stat st;
            ASSERT_EQ(stat(d.c_str(), &st), 0) << d;
            EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
            EXPECT_EQ(st.st_uid, getuid());
        }
    }
    EXPECT_EQ(states[0].uuid, fixtures::mig_uuid(0, 7));
    // Each daemon serves exactly its own instance.
    std::ifstream log(mps_log_dir(config_, "gpu0-gi8") + "/control.log");
    std::string first;
    std::getline(log, first);
    EXPECT_NE(first.find("device " + fixtures::mig_uuid(0, 8)), std::string::npos) << first;

    ASSERT_TRUE(stop_job(config_).ok());
    for (pid_t p : pids) EXPECT_TRUE(gone_soon(p)) << p;
    EXPECT_FALSE(fs::exists(config_.job_dir));
}

TEST_F(MpsTest, SevenInstancesStartInParallel) {
    EXPECT_OK(start_daemons(config_, instances(7)));
    EXPECT_EQ(live_daemons(), 7);
    EXPECT_OK(start_daemons(config_, instances(7)));  // idempotent: nothing doubles
    EXPECT_EQ(live_daemons(), 7);
}

TEST_F(MpsTest, DeadDaemonIsReportedNotWaitedFor) {
    auto inst = instances(1);
    EXPECT_OK(start_daemons(config_, inst));
    pid_t pid = live_daemon_pid(config_, "gpu0-gi7");
    ASSERT_GT(pid, 0);
    kill(pid, SIGKILL);
    ASSERT_TRUE(gone_soon(pid));
    EXPECT_EQ(live_daemon_pid(config_, "gpu0-gi7"), -1);
    auto start = std::chrono::steady_clock::now();
    auto r = wait_ready(config_, inst);
    ASSERT_FALSE(r.ok());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_NE(r.error().message.find("(pid " + std::to_string(pid) + ") died; see " +
                                     mps_log_dir(config_, "gpu0-gi7") + "/control.log"),
              std::string::npos)
        << r.error().message;
}

TEST_F(MpsTest, SlowDaemonTimesOutClearly) {
    setenv("FAKE_MPS_START_DELAY_MS", "3000", 1);
    config_.timeout = std::chrono::milliseconds(300);
    auto r = start_daemons(config_, instances(1));
    unsetenv("FAKE_MPS_START_DELAY_MS");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("did not answer within 300 ms"), std::string::npos)
        << r.error().message;
    config_.timeout = std::chrono::milliseconds(5000);
}

TEST_F(MpsTest, MissingControlProgram) {
    config_.control = base_ + "/no-such-mps-control";
    auto r = start_daemons(config_, instances(1));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("cannot run"), std::string::npos) << r.error().message;
}

// Ranks as forked processes: each joins, waits for a go, leaves.
pid_t fork_rank(const MpsConfig& c, const std::vector<MpsInstance>& inst, int go_fd, int ready_fd) {
    pid_t pid = fork();
    if (pid == 0) {
        auto s = MpsSession::join(c, inst);
        char ok = s.ok() ? 'y' : 'n';
        if (write(ready_fd, &ok, 1) != 1) _exit(3);
        if (!s.ok()) _exit(1);
        char go;
        if (read(go_fd, &go, 1) != 1) _exit(4);
        _exit(s->leave().ok() ? 0 : 2);
    }
    return pid;
}

TEST_F(MpsTest, LastRankOutStopsDaemonsAlsoWhenOneWasKilled) {
    auto inst = instances(3);
    int go[2], ready[2];
    ASSERT_EQ(pipe(go), 0);
    ASSERT_EQ(pipe(ready), 0);
    std::vector<pid_t> ranks;
    for (int r = 0; r < 4; ++r) ranks.push_back(fork_rank(config_, inst, go[0], ready[1]));
    for (int r = 0; r < 4; ++r) {
        char ok = 0;
        ASSERT_EQ(read(ready[0], &ok, 1), 1);
        ASSERT_EQ(ok, 'y');
    }
    EXPECT_EQ(live_daemons(), 3);  // one per instance, not one per rank
    EXPECT_EQ(prune_members(config_.job_dir).size(), 4u);
    // Rank 0 dies without leaving; ranks 1 and 2 leave: daemons must stay for rank 3.
    kill(ranks[0], SIGKILL);
    waitpid(ranks[0], nullptr, 0);
    ASSERT_EQ(write(go[1], "gg", 2), 2);
    for (int r = 1; r <= 2; ++r) {
        int st = 0;
        pid_t done = wait(&st);
        ASSERT_TRUE(done == ranks[1] || done == ranks[2] || done == ranks[3]);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    EXPECT_EQ(live_daemons(), 3);
    ASSERT_EQ(write(go[1], "g", 1), 1);
    int st = 0;
    ASSERT_GT(wait(&st), 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    EXPECT_FALSE(fs::exists(config_.job_dir)) << "the last rank out removes the directory";
    for (int fd : {go[0], go[1], ready[0], ready[1]}) close(fd);
}

TEST_F(MpsTest, ManagedDirectoryIsOnlyJoined) {
    auto inst = instances(1);
    ASSERT_TRUE(make_private_dir(config_.job_dir, config_.uid, config_.gid).ok());
    std::ofstream(config_.job_dir + "/managed") << "test\n";
    EXPECT_OK(start_daemons(config_, inst));
    pid_t pid = live_daemon_pid(config_, "gpu0-gi7");
    auto s = MpsSession::join(config_, inst);
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_TRUE(s->managed());
    ASSERT_TRUE(s->leave().ok());
    EXPECT_EQ(live_daemon_pid(config_, "gpu0-gi7"), pid) << "a rank must not stop the Prolog's daemon";
}

TEST_F(MpsTest, CleanupRemovesOnlyStaleJobs) {
    // A stale job: a pid file naming a process that is gone, a member that is gone.
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    MpsConfig stale = config_;
    stale.job_dir = base_ + "/job-2";
    ASSERT_TRUE(make_private_dir(stale.job_dir, stale.uid, stale.gid).ok());
    fs::create_directories(mps_pipe_dir(stale, "gpu1-gi3"));
    fs::create_directories(stale.job_dir + "/members");
    std::ofstream(mps_pipe_dir(stale, "gpu1-gi3") + "/nvidia-cuda-mps-control.pid") << dead << "\n";
    std::ofstream(stale.job_dir + "/members/" + std::to_string(dead));
    // A pid file naming a live process that is not an MPS daemon (pid reuse after a reboot).
    MpsConfig reused = config_;
    reused.job_dir = base_ + "/job-3";
    fs::create_directories(mps_pipe_dir(reused, "gpu2"));
    std::ofstream(mps_pipe_dir(reused, "gpu2") + "/nvidia-cuda-mps-control.pid") << getppid() << "\n";
    // A live job.
    EXPECT_OK(start_daemons(config_, instances(1)));

    auto removed = cleanup_stale(base_, config_.control);
    std::sort(removed.begin(), removed.end());
    EXPECT_EQ(removed, (std::vector<std::string>{stale.job_dir, reused.job_dir}));
    EXPECT_TRUE(fs::exists(config_.job_dir));
    EXPECT_EQ(live_daemons(), 1);
}

TEST_F(MpsTest, PrivateDirRefusesForeignOrOpenDirectories) {
    std::string open_dir = base_ + "/open";
    ASSERT_EQ(mkdir(open_dir.c_str(), 0755), 0);
    auto r = make_private_dir(open_dir, getuid(), getgid());
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("is open to others"), std::string::npos);
    std::string link = base_ + "/link";
    ASSERT_EQ(symlink(open_dir.c_str(), link.c_str()), 0);
    EXPECT_FALSE(make_private_dir(link, getuid(), getgid()).ok());
    auto foreign = make_private_dir(base_, getuid() + 1, getgid());
    ASSERT_FALSE(foreign.ok());
    EXPECT_NE(foreign.error().message.find("owned by uid"), std::string::npos);
}

TEST(MpsInstancesTest, OnePerGpuInstanceOrWholeGpu) {
    Node node = fixtures::dgx_a100(4, 2);
    // Two compute instances of one GPU instance share a daemon.
    Partition ci1 = node.gpus[0].partitions[0];
    ci1.ci = 1;
    ci1.uuid = "MIG-second-ci";
    node.gpus[0].partitions.push_back(ci1);
    auto inst = mps_instances(node, {{0, 0, ""}, {0, 2, ""}, {0, 1, ""}, {6, 0, ""}});
    ASSERT_TRUE(inst.ok()) << inst.error().message;
    ASSERT_EQ(inst->size(), 3u);
    EXPECT_EQ((*inst)[0].name, "gpu0-gi7");
    EXPECT_EQ((*inst)[0].uuid, fixtures::mig_uuid(0, 7));
    EXPECT_EQ((*inst)[1].name, "gpu0-gi8");
    EXPECT_EQ((*inst)[2].name, "gpu6");
    EXPECT_EQ((*inst)[2].uuid, fixtures::nvidia_gpu_uuid(6));
    Node amd = fixtures::mi300x_cpx_node();
    auto refused = mps_instances(amd, {{0, 0, "0"}});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("MPS is NVIDIA only"), std::string::npos);
}

}  // namespace
}  // namespace xpart::launch
