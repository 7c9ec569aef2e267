#include "process/detached.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <gtest/gtest.h>

namespace xpart::process {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLong = std::chrono::seconds(30);

// A file the test makes when the helper's work may go on (the helper holds none of the
// test's descriptors, so a pipe cannot be the gate).
struct Gate {
    std::string path;
    Gate() {
        char tmpl[] = "/tmp/xpd-XXXXXX";
        EXPECT_NE(mkdtemp(tmpl), nullptr);
        path = std::string(tmpl) + "/open";
    }
    ~Gate() {
        unlink(path.c_str());
        rmdir(path.substr(0, path.rfind('/')).c_str());
    }
    void open_it() { close(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)); }
    void wait() const {
        for (int i = 0; i < 30000 && access(path.c_str(), F_OK) != 0; ++i) usleep(1000);
    }
};

TEST(DetachedWorkTest, AnswersLaterAndIsNoChildOfTheCaller) {
    Gate gate;
    auto work = DetachedWork::start([&] {
        gate.wait();
        return std::string("answer\nwith lines\n");
    });
    ASSERT_TRUE(work.ok()) << work.error().message;
    EXPECT_FALSE(work->done()) << "the work still waits on the gate";
    // What slurmstepd's wait3 does: it finds no child of ours to take.
    errno = 0;
    EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
    gate.open_it();
    auto answer = work->result(Clock::now() + kLong);
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(*answer, "answer\nwith lines\n");
    EXPECT_FALSE(work->result(Clock::now() + kLong).ok()) << "taken once";
}

// The state letter of /proc/<pid>/stat, 0 when there is no such process.
char state_of(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = all.rfind(')');
    return close == std::string::npos || close + 2 >= all.size() ? 0 : all[close + 2];
}

// Its pid cannot be another process's while the caller holds the answer; the caller has it
// back only once the helper is gone (a zombie of init's at most).
TEST(DetachedWorkTest, TheHelperStaysUntilItsAnswerIsTakenAndIsGoneAfter) {
    Gate where;  // its directory holds the helper's pid
    const std::string pid_file = where.path + ".pid";
    auto work = DetachedWork::start([&] {
        std::ofstream(pid_file) << getpid() << "\n";
        return std::string("done");
    });
    ASSERT_TRUE(work.ok()) << work.error().message;
    for (int i = 0; i < 30000 && !work->done(); ++i) usleep(1000);
    ASSERT_TRUE(work->done());
    pid_t helper = 0;
    std::ifstream(pid_file) >> helper;
    unlink(pid_file.c_str());
    ASSERT_GT(helper, 0);
    const char waiting = state_of(helper);
    EXPECT_TRUE(waiting != 0 && waiting != 'Z' && waiting != 'X') << "helper " << helper << " did not wait: " << waiting;
    auto answer = work->result(Clock::now() + kLong);
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(*answer, "done");
    const char gone = state_of(helper);
    EXPECT_TRUE(gone == 0 || gone == 'Z' || gone == 'X') << "helper " << helper << " in state " << gone;
}

TEST(DetachedWorkTest, TheHelperHoldsNoneOfTheCallersDescriptors) {
    int inherited[2];
    ASSERT_EQ(pipe(inherited), 0);  // not close-on-exec: a fork keeps both ends
    auto work = DetachedWork::start([&] {
        return std::string(fcntl(inherited[0], F_GETFD) == -1 && fcntl(inherited[1], F_GETFD) == -1 ? "closed" : "held");
    });
    ASSERT_TRUE(work.ok()) << work.error().message;
    auto answer = work->result(Clock::now() + kLong);
    close(inherited[0]);
    close(inherited[1]);
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(*answer, "closed");
}

struct NoAnswerCase {
    const char* name;
    std::function<std::string()> work;
    const char* error;
};

TEST(DetachedWorkTest, AHelperThatEndsWithoutAnswerIsAnError) {
    const NoAnswerCase cases[] = {
        {"throws", [] () -> std::string { throw std::runtime_error("no"); }, "ended without an answer"},
        {"killed", [] () -> std::string { raise(SIGKILL); return "x"; }, "ended without an answer"},
        {"exits", [] () -> std::string { _exit(0); }, "ended without an answer"},
    };
    for (const auto& c : cases) {
        auto work = DetachedWork::start(c.work);
        ASSERT_TRUE(work.ok()) << c.name;
        auto answer = work->result(Clock::now() + kLong);
        ASSERT_FALSE(answer.ok()) << c.name;
        EXPECT_NE(answer.error().message.find(c.error), std::string::npos) << c.name << ": " << answer.error().message;
    }
}

TEST(DetachedWorkTest, ACgroupItCannotJoinIsTheAnswersError) {
    auto work = DetachedWork::start([] { return std::string("worked"); }, "/nonexistent/cgroup.procs");
    ASSERT_TRUE(work.ok()) << work.error().message;
    auto answer = work->result(Clock::now() + kLong);
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.error().message, "the helper cannot join /nonexistent/cgroup.procs: No such file or directory");
}

TEST(DetachedWorkTest, NoAnswerByTheDeadlineIsAnErrorAndTheHelperIsLeftAlone) {
    Gate gate;
    auto work = DetachedWork::start([&] {
        gate.wait();
        return std::string("late");
    });
    ASSERT_TRUE(work.ok());
    auto answer = work->result(Clock::now() + std::chrono::milliseconds(50));
    ASSERT_FALSE(answer.ok());
    EXPECT_NE(answer.error().message.find("did not answer in time"), std::string::npos) << answer.error().message;
    gate.open_it();  // the helper writes into a closed pipe and ends (SIGPIPE ignored)
}

}  // namespace
}  // namespace xpart::process
