// The reshape flow's requests against a recorded cluster (a fake SlurmClient that answers from
// `scontrol show node -o` lines and records what it is told): which request a job leaves
// behind, when it is withdrawn and when kept, and how a wait paces its polls.
#include <gtest/gtest.h>

#include <map>

#include "reshape_request/requests.hpp"
#include "tests/case_name.hpp"
#include "tests/reshape_request/fake_slurm.hpp"

namespace xpart::reshape_request {
namespace {

using namespace std::chrono_literals;

// One host (group xpart_host_h) as three siblings, `small` up; anything else is another host.
std::string host(const std::string& small_state, const std::string& small_reason, const std::string& big_state) {
    return "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=" + small_state +
           (small_reason.empty() ? "" : " Reason=" + small_reason + " [slurm@2026-12-04T03:10:00]") +
           "\nNodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=" + big_state +
           "\nNodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERED_DOWN"
           "\nNodeName=other AvailableFeatures=xpart_host_o NodeHostName=o State=IDLE+DRAIN+REBOOT_REQUESTED"
           " Reason=xpart-reshape:big\n";
}

struct PendingCase {
    const char* name;
    std::string cluster;
    std::vector<std::string> job_nodes;
    std::vector<std::string> want;  // "active->target"
};

class Pending : public ::testing::TestWithParam<PendingCase> {};

TEST_P(Pending, Finds) {
    const auto& c = GetParam();
    std::vector<std::string> got;
    for (const auto& r : pending_requests(parse_nodes(c.cluster), c.job_nodes)) got.push_back(r.active + "->" + r.target);
    EXPECT_EQ(got, c.want);
}

const std::string kRequested = host("MIXED+DRAIN+REBOOT_REQUESTED", "xpart-reshape:big", "IDLE+CLOUD+POWERING_UP");
const PendingCase kPending[] = {
    {"a request for the job's sibling", kRequested, {"big"}, {"small->big"}},
    {"the job's node list holds the sibling among others", kRequested, {"small", "big"}, {"small->big"}},
    {"the reboot is under way", host("DOWN+REBOOT_ISSUED", "xpart-reshape:big", "IDLE+CLOUD+POWERING_UP"), {"big"}, {}},
    {"the sibling is up already", host("IDLE+CLOUD+POWERED_DOWN", "", "IDLE"), {"big"}, {}},
    {"the up sibling gives the host up for another", host("MIXED+DRAIN+REBOOT_REQUESTED", "xpart-reshape:mid",
                                                          "IDLE+CLOUD+POWERING_UP"), {"big"}, {}},
    {"a reboot an admin asked for", host("MIXED+DRAIN+REBOOT_REQUESTED", "kernel update", "IDLE+CLOUD+POWERING_UP"),
     {"big"}, {}},
    {"a job on no sibling", kRequested, {"nowhere"}, {}},
};
INSTANTIATE_TEST_SUITE_P(Clusters, Pending, ::testing::ValuesIn(kPending), testing::SentenceCaseName{});

TEST(Withdraw, ARequestNoJobWaitsForIsWithdrawn) {
    FakeSlurm slurm;
    slurm.cluster = kRequested;
    slurm.configuring["big"] = {"42"};  // the job that leaves, still listed
    auto lines = withdraw_unwanted(slurm, "42", "big");
    ASSERT_TRUE(lines) << lines.error().message;
    ASSERT_EQ(slurm.told.size(), 3u);
    EXPECT_EQ(slurm.told[0], "cancel_reboot small");
    EXPECT_EQ(slurm.told[1], "update nodename=small state=UNDRAIN");
    EXPECT_EQ(slurm.told[2], "update nodename=big state=POWER_DOWN_FORCE reason=xpart-reshape withdrawn: no job "
                             "waits for it");
    ASSERT_EQ(lines->size(), 1u);
    EXPECT_EQ((*lines)[0], "small -> big: withdrawn, job 42 left and no job waits for big");
}

TEST(Withdraw, KeptWhileAnotherJobWaits) {
    FakeSlurm slurm;
    slurm.cluster = kRequested;
    slurm.configuring["big"] = {"42", "43"};
    auto lines = withdraw_unwanted(slurm, "42", "big");
    ASSERT_TRUE(lines);
    EXPECT_TRUE(slurm.told.empty());
    ASSERT_EQ(lines->size(), 1u);
    EXPECT_EQ((*lines)[0], "small -> big: kept, job 43 waits for big");
}

TEST(Withdraw, TheTargetStaysWhenTheCancelIsRefused) {
    FakeSlurm slurm;
    slurm.cluster = kRequested;
    slurm.refuse = {"cancel_reboot"};
    auto lines = withdraw_unwanted(slurm, "42", "big");
    ASSERT_TRUE(lines);
    ASSERT_EQ(slurm.told.size(), 1u);  // no power down of a sibling the host may become
    ASSERT_EQ(lines->size(), 1u);
    EXPECT_NE((*lines)[0].find("not withdrawn (scontrol cancel_reboot: REBOOT on node in progress)"), std::string::npos);
}

TEST(Withdraw, NothingForAJobOfNoRequest) {
    FakeSlurm slurm;
    slurm.cluster = host("IDLE", "", "IDLE+CLOUD+POWERED_DOWN");
    auto lines = withdraw_unwanted(slurm, "42", "small");
    ASSERT_TRUE(lines);
    EXPECT_TRUE(lines->empty());
    EXPECT_TRUE(slurm.told.empty());
}

struct ResumeCase {
    const char* name;
    std::string cluster;
    std::string targets;
    std::vector<std::string> told;
    std::string line;
    bool all_made;
};
class Resume : public ::testing::TestWithParam<ResumeCase> {};

TEST_P(Resume, AsksOrQueues) {
    const auto& c = GetParam();
    FakeSlurm slurm;
    slurm.cluster = c.cluster;
    auto out = resume(slurm, c.targets);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(slurm.told, c.told);
    ASSERT_EQ(out->lines.size(), 1u);
    EXPECT_EQ(out->lines[0], c.line);
    EXPECT_EQ(out->all_made, c.all_made);
}

const ResumeCase kResumes[] = {
    {"the host serves nothing", host("ALLOCATED", "", "IDLE+CLOUD+POWERING_UP"), "big",
     {"reboot ASAP nextstate=DOWN reason=xpart-reshape:big small"}, "big: asked small (xpart_host_h) to reshape", true},
    {"the host is asked for another sibling", host("MIXED+DRAIN+REBOOT_REQUESTED", "xpart-reshape:mid", "IDLE+CLOUD+POWERING_UP"),
     "big", {}, "big: queued, small reshapes for mid first", true},
    {"the host reboots for another sibling now", host("DOWN+REBOOT_ISSUED", "xpart-reshape:mid", "IDLE+CLOUD+POWERING_UP"),
     "big", {}, "big: queued, small reshapes for mid first", true},
    {"the host is asked for it already", kRequested, "big", {}, "big: small is asked for it already", true},
    {"no sibling is up", host("DOWN+CLOUD+POWERED_DOWN", "", "IDLE+CLOUD+POWERING_UP"), "big", {},
     "big: no sibling of xpart_host_h is up to reshape from", false},
    {"no such node", kRequested, "nowhere", {}, "nowhere: no such node", false},
};
INSTANTIATE_TEST_SUITE_P(Hosts, Resume, ::testing::ValuesIn(kResumes), testing::SentenceCaseName{});

TEST(Resume, ARefusedRebootIsNotMade) {
    FakeSlurm slurm;
    slurm.cluster = host("ALLOCATED", "", "IDLE+CLOUD+POWERING_UP");
    slurm.refuse = {"reboot"};
    auto out = resume(slurm, "big");
    ASSERT_TRUE(out);
    EXPECT_FALSE(out->all_made);
}

// The host up as big; small and mid powering up, each with a waiting job.
std::string queued_host(const std::string& big_state) {
    return "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE+CLOUD+POWERING_UP"
           "\nNodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=" + big_state +
           "\nNodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERING_UP\n";
}

TEST(AskQueued, TheJobThatWaitsLongestGoesNext) {
    FakeSlurm slurm;
    slurm.cluster = queued_host("ALLOCATED");
    slurm.configuring["small"] = {"19", "12"};
    slurm.configuring["mid"] = {"9_3"};
    auto out = ask_queued(slurm, {"big"});
    ASSERT_TRUE(out);
    EXPECT_EQ(slurm.told, (std::vector<std::string>{"reboot ASAP nextstate=DOWN reason=xpart-reshape:mid big"}));
    EXPECT_EQ(out->lines, (std::vector<std::string>{"mid: its turn, asked big to reshape (job 9 waits longest)"}));
}

TEST(AskQueued, NothingWhileTheHostIsAskedOrNoJobWaits) {
    FakeSlurm slurm;
    slurm.cluster = queued_host("ALLOCATED+DRAIN+REBOOT_REQUESTED");
    slurm.configuring["small"] = {"12"};
    auto out = ask_queued(slurm, {"big"});
    ASSERT_TRUE(out);
    EXPECT_TRUE(slurm.told.empty());
    slurm.cluster = queued_host("ALLOCATED");
    slurm.configuring.clear();
    out = ask_queued(slurm, {"big"});
    ASSERT_TRUE(out);
    EXPECT_TRUE(slurm.told.empty());
    EXPECT_TRUE(out->lines.empty());
}

// Right after a reshape: `small` gave the host up for `big`, whose slurmd has registered, and
// the RebootProgram has not powered `small` down yet. The host is big's: the PrologSlurmctld of
// the job that waited for big asks big for the queued `mid` at once. (Taking small for the up
// sibling, the hook used to see it asked and leave mid to the watcher, seconds later.)
TEST(AskQueued, TheSiblingJustRegisteredIsTheHost) {
    FakeSlurm slurm;
    slurm.cluster =
        "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=DOWN+DRAIN+REBOOT_ISSUED"
        " Reason=xpart-reshape:big [slurm@2026-12-04T03:10:00]\n"
        "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=MIXED+CLOUD\n"
        "NodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERING_UP\n";
    slurm.configuring["mid"] = {"31"};
    auto out = ask_queued(slurm, {"big"});
    ASSERT_TRUE(out);
    EXPECT_EQ(slurm.told, (std::vector<std::string>{"reboot ASAP nextstate=DOWN reason=xpart-reshape:mid big"}));
    // Until big registers, small is the host's and asked already: nothing is asked.
    slurm.told.clear();
    slurm.cluster = "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE+DRAIN+REBOOT_ISSUED"
                    " Reason=xpart-reshape:big [slurm@2026-12-04T03:10:00]\n"
                    "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERING_UP\n"
                    "NodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERING_UP\n";
    out = ask_queued(slurm, {"big"});
    ASSERT_TRUE(out);
    EXPECT_TRUE(slurm.told.empty());
}

TEST(Withdraw, TheQueuedRequestGoesOnceTheFirstIsWithdrawn) {
    FakeSlurm slurm;
    slurm.cluster = kRequested;
    slurm.configuring["big"] = {"42"};
    slurm.configuring["mid"] = {"50"};
    // After the withdrawal slurmctld shows small up, asked for nothing, and mid powering up.
    slurm.cluster_at = [](int rpc) {
        return rpc == 1 ? kRequested
                        : "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=ALLOCATED\n"
                          "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=IDLE+CLOUD+POWERED_DOWN\n"
                          "NodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERING_UP\n";
    };
    auto lines = withdraw_unwanted(slurm, "42", "big");
    ASSERT_TRUE(lines);
    ASSERT_EQ(slurm.told.size(), 4u);
    EXPECT_EQ(slurm.told[3], "reboot ASAP nextstate=DOWN reason=xpart-reshape:mid small");
    EXPECT_EQ(lines->back(), "mid: its turn, asked small to reshape (job 50 waits longest)");
}

struct RebootCase {
    const char* name;
    std::string cluster;
    std::string own;
    std::vector<std::string> hosts;
    std::string want;  // "active->target", "" for none
};
class Reboot : public ::testing::TestWithParam<RebootCase> {};

TEST_P(Reboot, FindsTheRequest) {
    const auto& c = GetParam();
    auto r = reboot_request(parse_nodes(c.cluster), c.own, c.hosts);
    EXPECT_EQ(r ? r->active + "->" + r->target : std::string(), c.want);
}

const std::string kIssued = host("DOWN+REBOOT_ISSUED", "xpart-reshape:big", "IDLE+CLOUD+POWERING_UP");
const RebootCase kReboots[] = {
    {"slurmd serves its -N name", kIssued, "small", {}, "small->big"},
    {"requested, not issued yet", kRequested, "small", {}, "small->big"},
    {"another host's node asked the same", kIssued, "other", {}, "other->big"},
    {"by the host's name without -N", kIssued, "", {"x", "h"}, "small->big"},
    {"no node of this host", kIssued, "", {"x"}, ""},
    {"a reboot an admin asked for", host("DOWN+REBOOT_ISSUED", "kernel update", "IDLE+CLOUD+POWERING_UP"), "small", {}, ""},
    {"the reason stays after the reboot", host("IDLE", "xpart-reshape:big", "IDLE+CLOUD+POWERED_DOWN"), "small", {}, ""},
};
INSTANTIATE_TEST_SUITE_P(Hosts, Reboot, ::testing::ValuesIn(kReboots), testing::SentenceCaseName{});

TEST(Wanted, ByTheJobsConfiguringOnTheTarget) {
    FakeSlurm slurm;
    EXPECT_FALSE(*target_wanted(slurm, "big"));
    slurm.configuring["big"] = {"7"};
    EXPECT_TRUE(*target_wanted(slurm, "big"));
}

TEST(Pause, BacksOffToTwoSeconds) {
    std::vector<long> got;
    std::chrono::milliseconds p{0};
    for (int i = 0; i < 9; ++i) got.push_back((p = next_pause(p)).count());
    EXPECT_EQ(got, (std::vector<long>{250, 375, 562, 843, 1264, 1896, 2000, 2000, 2000}));
}

std::string target_line(const std::string& state) {
    return "NodeName=big AvailableFeatures=xpart_host_h NodeHostName=big State=" + state + "\n";
}

TEST(Wait, ReturnsWhenTheSiblingRegisters) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.cluster_at = [](int rpc) {
        return target_line(rpc < 4 ? "IDLE+CLOUD+NOT_RESPONDING+POWERING_UP" : "ALLOCATED+CLOUD");
    };
    auto end = wait_registered(slurm, "42", "big", 600s, time.pacing());
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::Registered);
    EXPECT_EQ(slurm.node_rpcs, 4);
    EXPECT_EQ(slurm.job_rpcs, 0);
    EXPECT_EQ(time.slept, (std::vector<long>{250, 375, 562}));
}

TEST(Wait, AMinuteCostsFortyTwoRpcs) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.cluster = target_line("IDLE+CLOUD+NOT_RESPONDING+POWERING_UP");
    auto end = wait_registered(slurm, "42", "big", 60s, time.pacing());
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::TimedOut);
    // 35 polls (6 pauses to 5.19 s, then one per 2 s) and the job's state at every fifth;
    // 0691fdc's hook made two RPCs each 0.2 s, 600 a minute.
    EXPECT_EQ(slurm.node_rpcs, 35);
    EXPECT_EQ(slurm.job_rpcs, 7);
    EXPECT_EQ(time.t - std::chrono::steady_clock::time_point{}, 60s);  // never past the timeout
}

// Another job's turn: this one asks slurmctld nothing until the turn is its own.
struct FakeTurn : PollTurn {
    int busy = 0;  // takes that fail first
    int asked = 0;
    bool take() override { return ++asked > busy; }
};

TEST(Wait, PollsOnlyInItsTurn) {
    FakeSlurm slurm;
    FakeTime time;
    FakeTurn turn;
    turn.busy = 30;  // 3 s of another job's polls
    slurm.cluster_at = [](int) { return target_line("ALLOCATED+CLOUD"); };
    auto end = wait_registered(slurm, "42", "big", 600s, time.pacing(), &turn);
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::Registered);
    EXPECT_EQ(slurm.node_rpcs, 1);
    EXPECT_EQ(time.slept, std::vector<long>(30, 100));
}

TEST(Wait, ATurnThatNeverComesEndsAtTheTimeout) {
    FakeSlurm slurm;
    FakeTime time;
    FakeTurn turn;
    turn.busy = 1000000;
    auto end = wait_registered(slurm, "42", "big", 5s, time.pacing(), &turn);
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::TimedOut);
    EXPECT_EQ(slurm.node_rpcs, 0);
    EXPECT_EQ(time.t - std::chrono::steady_clock::time_point{}, 5s);
}

TEST(Wait, EndsWhenTheJobNoLongerWaits) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.cluster = target_line("IDLE+CLOUD+POWERING_UP");
    slurm.states = {"CONFIGURING", "PENDING"};  // requeued
    auto end = wait_registered(slurm, "42", "big", 600s, time.pacing());
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::JobGone);
    EXPECT_EQ(slurm.node_rpcs, 10);
}

TEST(Wait, APoweredDownSiblingEndsTheWaitOnceTheJobLeft) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.cluster = target_line("IDLE+CLOUD+POWERED_DOWN");  // refused or withdrawn
    slurm.states = {"PENDING"};
    auto end = wait_registered(slurm, "42", "big", 600s, time.pacing());
    ASSERT_TRUE(end);
    EXPECT_EQ(*end, WaitEnd::JobGone);
    EXPECT_EQ(slurm.node_rpcs, 1);
    EXPECT_EQ(slurm.job_rpcs, 1);
}

// The watcher's lines, each with how many pauses the watcher had made when it told it.
struct WatchLog {
    explicit WatchLog(const FakeTime& time) : time_(time) {}
    LineSink sink() {
        return [this](const std::string& line) {
            lines.push_back(line);
            pauses_before.push_back(time_.slept.size());
        };
    }
    std::vector<std::string> lines;
    std::vector<size_t> pauses_before;

private:
    const FakeTime& time_;
};

TEST(Watch, WithdrawsARequestWhoseJobsAreGoneAtTwoPolls) {
    FakeSlurm slurm;
    FakeTime time;
    // The cancelled job's EpilogSlurmctld never ran: the request stays until the watcher's
    // second poll without a waiting job; then slurmctld shows the host back.
    slurm.cluster_at = [](int rpc) { return rpc <= 2 ? kRequested : host("ALLOCATED", "", "IDLE+CLOUD+POWERED_DOWN"); };
    WatchLog log(time);
    auto out = watch_host(slurm, "big", 600s, time.pacing(), nullptr, log.sink());
    ASSERT_TRUE(out) << out.error().message;
    ASSERT_GE(slurm.told.size(), 3u);
    EXPECT_EQ(slurm.told[0], "cancel_reboot small");
    ASSERT_FALSE(log.lines.empty());
    EXPECT_EQ(log.lines.front(), "small -> big: withdrawn, no job waited for big at two polls");
    EXPECT_EQ(time.slept, (std::vector<long>{2000, 3000}));  // then the host is done
}

TEST(Watch, KeepsARequestAJobWaitsForUntilTheHostIsDone) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.configuring["big"] = {"7"};
    slurm.cluster_at = [](int rpc) { return rpc <= 20 ? kRequested : host("IDLE+CLOUD+POWERED_DOWN", "", "ALLOCATED"); };
    WatchLog log(time);
    auto out = watch_host(slurm, "small", 600s, time.pacing(), nullptr, log.sink());
    ASSERT_TRUE(out);
    EXPECT_TRUE(slurm.told.empty());
    EXPECT_TRUE(log.lines.empty());
    EXPECT_EQ(slurm.node_rpcs, 21);
    EXPECT_EQ(time.slept.back(), 5000);  // backs off to 5 s
}

TEST(Watch, AsksForAQueuedRequestNobodyAskedFor) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.configuring["mid"] = {"9"};
    // The watcher's poll and ask_queued's own read, then the host is asked and done.
    slurm.cluster_at = [](int rpc) { return rpc <= 2 ? queued_host("ALLOCATED") : host("ALLOCATED", "", "IDLE+CLOUD+POWERED_DOWN"); };
    WatchLog log(time);
    auto out = watch_host(slurm, "big", 600s, time.pacing(), nullptr, log.sink());
    ASSERT_TRUE(out);
    EXPECT_EQ(slurm.told, (std::vector<std::string>{"reboot ASAP nextstate=DOWN reason=xpart-reshape:mid big"}));
    EXPECT_EQ(log.lines, (std::vector<std::string>{"mid: its turn, asked big to reshape (job 9 waits longest)"}));
}

TEST(Watch, TellsEachLineBeforeItsNextPause) {
    FakeSlurm slurm;
    FakeTime time;
    slurm.configuring["mid"] = {"9"};
    // Asked at the first poll, then the host reshapes for a while: the line must not wait for it.
    const std::string asked = "NodeName=small AvailableFeatures=xpart_host_h NodeHostName=h State=IDLE+CLOUD+POWERED_DOWN"
                              "\nNodeName=big AvailableFeatures=xpart_host_h NodeHostName=big"
                              " State=ALLOCATED+DRAIN+REBOOT_REQUESTED Reason=xpart-reshape:mid [slurm@2026-12-04T03:10:00]"
                              "\nNodeName=mid AvailableFeatures=xpart_host_h NodeHostName=mid State=IDLE+CLOUD+POWERING_UP\n";
    slurm.cluster_at = [&asked](int rpc) {
        return rpc <= 2 ? queued_host("ALLOCATED") : rpc <= 30 ? asked : host("ALLOCATED", "", "IDLE+CLOUD+POWERED_DOWN");
    };
    WatchLog log(time);
    auto out = watch_host(slurm, "big", 600s, time.pacing(), nullptr, log.sink());
    ASSERT_TRUE(out);
    ASSERT_EQ(log.lines.size(), 1u);
    EXPECT_EQ(log.pauses_before, (std::vector<size_t>{0}));
    EXPECT_GT(time.slept.size(), 5u);  // it went on watching after it told
}

TEST(Watch, OneWatcherPerHost) {
    FakeSlurm slurm;
    FakeTime time;
    FakeTurn taken;
    taken.busy = 1;
    WatchLog log(time);
    auto out = watch_host(slurm, "big", 600s, time.pacing(), &taken, log.sink());
    ASSERT_TRUE(out);
    EXPECT_EQ(slurm.node_rpcs, 0);
    EXPECT_TRUE(log.lines.empty());
}

}  // namespace
}  // namespace xpart::reshape_request
