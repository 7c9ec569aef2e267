// Test support for enforcement tests: uniquely named cgroups that are removed even when an
// assertion fails, device nodes made with mknod, and a child process that probes open().
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cgroup/device_cgroup.hpp"
#include "cgroup/v1_device_controller.hpp"

namespace xpart::cgroup::test {

// "xpart_test_<pid>_<random>": every cgroup and state file of this run starts with it.
const std::string& test_prefix();
// The parent directory tests create cgroups in: this process's own cgroup of the hierarchy.
std::string test_parent(Hierarchy h);
// Removes every cgroup named with the prefix under both parents (deepest first, killing what
// runs inside) and returns what could not be removed.
std::vector<std::string> sweep_test_cgroups();
// Removes `dir` and every cgroup below it, deepest first, killing what runs inside; false when
// something stays.
bool remove_cgroup_tree(const std::string& dir);

// A cgroup named <prefix>_<n> under `parent` (default: test_parent(h)), removed on scope exit.
class ScopedCgroup {
public:
    explicit ScopedCgroup(Hierarchy h, const std::string& parent = "");
    ~ScopedCgroup();
    ScopedCgroup(const ScopedCgroup&) = delete;
    ScopedCgroup& operator=(const ScopedCgroup&) = delete;
    const DeviceCgroup& operator*() const { return cg_; }
    const DeviceCgroup* operator->() const { return &cg_; }

private:
    DeviceCgroup cg_;
};

// Device nodes in a temporary directory, removed on scope exit.
class DeviceNodes {
public:
    DeviceNodes();
    ~DeviceNodes();
    // Path of a node "<type> major:minor" (made on first use).
    std::string node(char type, unsigned major, unsigned minor);

private:
    std::string dir_;
    std::vector<std::string> made_;
};

// A forked child that opens paths on request and answers with the errno (0: opened).
class ProbeChild {
public:
    ProbeChild();
    // Moved into `cgroup` before its first probe (throws when the move fails).
    explicit ProbeChild(const DeviceCgroup& cgroup);
    ~ProbeChild();
    ProbeChild(const ProbeChild&) = delete;
    ProbeChild& operator=(const ProbeChild&) = delete;
    pid_t pid() const { return pid_; }
    int open_errno(const std::string& path, int flags);
    bool alive();

private:
    pid_t pid_ = -1;
    int to_child_ = -1, from_child_ = -1;
};

// gtest predicates: allowed = the device cgroup let open() reach the (absent) driver.
::testing::AssertionResult Allowed(ProbeChild& c, const std::string& path, int flags);
::testing::AssertionResult Denied(ProbeChild& c, const std::string& path, int flags);

}  // namespace xpart::cgroup::test
