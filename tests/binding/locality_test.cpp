// Locality shared by `xpart launch` and the SPANK plugin: loading the topology for a plan and
// pinning a rank within its allocation. Pinning runs in a forked child: it narrows for good.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>

#include "binding/locality.hpp"

namespace xpart::binding {
namespace {

std::vector<unsigned> affinity() {
    cpu_set_t set;
    std::vector<unsigned> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

// Runs `check` in a child; true when it returned true.
bool in_child(const std::function<bool()>& check) {
    pid_t pid = fork();
    if (pid == 0) _exit(check() ? 0 : 1);
    int status = 0;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(PinWithinAllocation, PinsToTheChosenCpus) {
    const auto allowed = affinity();
    ASSERT_FALSE(allowed.empty());
    EXPECT_TRUE(in_child([&] {
        auto pinned = pin_within_allocation(0, {allowed.front()});
        return pinned.ok() && *pinned && affinity() == std::vector<unsigned>{allowed.front()};
    }));
}

TEST(PinWithinAllocation, KeepsToTheAllocation) {
    const auto allowed = affinity();
    ASSERT_FALSE(allowed.empty());
    EXPECT_TRUE(in_child([&] {
        // Allocation of one CPU; asking for it and another pins to it alone.
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(allowed.front(), &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0) return false;
        auto pinned = pin_within_allocation(0, {allowed.front(), allowed.front() + 1});
        return pinned.ok() && *pinned && affinity() == std::vector<unsigned>{allowed.front()};
    }));
    EXPECT_TRUE(in_child([&] {
        // None of the CPUs is in the allocation: nothing changes, and the caller is told.
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(allowed.front(), &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0) return false;
        auto pinned = pin_within_allocation(0, {allowed.front() + 1, CPU_SETSIZE + 5u});
        return pinned.ok() && !*pinned && affinity() == std::vector<unsigned>{allowed.front()};
    }));
}

TEST(PinWithinAllocation, AGonePidIsAnError) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
    auto pinned = pin_within_allocation(pid, {0});
    ASSERT_FALSE(pinned.ok());
    EXPECT_EQ(pinned.error().message, "sched_getaffinity of pid " + std::to_string(pid) + " failed");
}

TEST(LoadLocality, OnlyClosestLoadsATopology) {
    MapOptions none;
    auto t = load_locality(none, "", "/");
    ASSERT_TRUE(t.ok()) << t.error().message;
    EXPECT_FALSE(t->has_value());
    EXPECT_TRUE(none.allowed_cpus.empty());

    MapOptions closest;
    closest.bind = BindPolicy::Closest;
    auto live = load_locality(closest, "", "/");
    ASSERT_TRUE(live.ok()) << live.error().message;
    ASSERT_TRUE(live->has_value());
    EXPECT_EQ(closest.allowed_cpus, (*live)->allowed_cpus());
    EXPECT_FALSE(closest.allowed_cpus.empty());

    auto bad = load_locality(closest, "/nonexistent/topo.xml", "/");
    EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace xpart::binding
