#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "cgroup/layout.hpp"

namespace xpart::cgroup {
namespace {

constexpr const char* kHybridMounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kHybridTwice =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "90 88 0:33 / /srv/chroot/sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
    "91 88 0:38 / /srv/chroot/sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kHybridSelf = "5:devices:/slurm/uid_0/job_7\n1:cpu:/\n0::/user.slice\n";

struct LayoutCase {
    const char* name;
    const char* mountinfo;
    const char* self;
    LayoutKind kind;
    const char* v1_mount;
    const char* v1_own;
    const char* v2_mount;
    const char* v2_own;
    Hierarchy preferred;
};

class LayoutParse : public ::testing::TestWithParam<LayoutCase> {};

TEST_P(LayoutParse, FindsMountsAndOwnCgroups) {
    const auto& c = GetParam();
    auto l = parse_cgroup_layout(c.mountinfo, c.self);
    ASSERT_TRUE(l.ok()) << l.error().message;
    EXPECT_EQ(l->kind, c.kind);
    EXPECT_EQ(l->v1_devices_mount, c.v1_mount);
    EXPECT_EQ(l->v1_devices_own, c.v1_own);
    EXPECT_EQ(l->v2_mount, c.v2_mount);
    EXPECT_EQ(l->v2_own, c.v2_own);
    EXPECT_EQ(l->preferred(), c.preferred);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, LayoutParse,
    ::testing::Values(
        LayoutCase{"hybrid", kHybridMounts, kHybridSelf, LayoutKind::Hybrid, "/sys/fs/cgroup/devices",
                   "/sys/fs/cgroup/devices/slurm/uid_0/job_7", "/sys/fs/cgroup/unified",
                   "/sys/fs/cgroup/unified/user.slice", Hierarchy::V1},
        LayoutCase{"v2", "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
                   "0::/system.slice/slurmstepd.scope/job_3\n", LayoutKind::V2, "", "", "/sys/fs/cgroup",
                   "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_3", Hierarchy::V2},
        LayoutCase{"v1", "36 31 0:33 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n",
                   "5:devices:/\n", LayoutKind::V1, "/sys/fs/cgroup/devices", "/sys/fs/cgroup/devices", "", "",
                   Hierarchy::V1},
        // A container sees its own cgroup as the mount root; optional fields before '-'.
        LayoutCase{"v1 namespaced", "36 31 0:33 /docker/abc /sys/fs/cgroup/devices rw shared:9 - cgroup cgroup rw,devices\n",
                   "5:devices:/docker/abc/rank0\n", LayoutKind::V1, "/sys/fs/cgroup/devices",
                   "/sys/fs/cgroup/devices/rank0", "", "", Hierarchy::V1},
        // Co-mounted controllers and an escaped space in the mount point.
        LayoutCase{"v1 comounted", "36 31 0:33 / /sys/fs/cgroup/cpu\\040devices rw - cgroup cgroup rw,cpu,devices\n",
                   "5:cpu,devices:/a:b\n", LayoutKind::V1, "/sys/fs/cgroup/cpu devices",
                   "/sys/fs/cgroup/cpu devices/a:b", "", "", Hierarchy::V1},
        // A hierarchy mounted twice (a chroot bind-mounting /sys, before or after): the one at
        // /sys/fs/cgroup, whatever the order.
        LayoutCase{"hybrid bound again in a chroot", kHybridTwice, kHybridSelf, LayoutKind::Hybrid,
                   "/sys/fs/cgroup/devices", "/sys/fs/cgroup/devices/slurm/uid_0/job_7", "/sys/fs/cgroup/unified",
                   "/sys/fs/cgroup/unified/user.slice", Hierarchy::V1},
        LayoutCase{"v2 bound first elsewhere", "50 23 0:26 / /srv/chroot/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
                   "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                   "0::/system.slice/slurmstepd.scope/job_3\n", LayoutKind::V2, "", "", "/sys/fs/cgroup",
                   "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_3", Hierarchy::V2},
        // Stacked at /sys/fs/cgroup: the last mounted hides the others.
        LayoutCase{"v2 stacked", "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
                   "60 29 0:26 /system.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                   "0::/system.slice/job_3\n", LayoutKind::V2, "", "", "/sys/fs/cgroup",
                   "/sys/fs/cgroup/job_3", Hierarchy::V2},
        // None at /sys/fs/cgroup: the first mounted.
        LayoutCase{"v1 elsewhere twice", "36 31 0:33 / /cg/devices rw - cgroup cgroup rw,devices\n"
                   "70 31 0:33 / /mnt/devices rw - cgroup cgroup rw,devices\n",
                   "5:devices:/a\n", LayoutKind::V1, "/cg/devices", "/cg/devices/a", "", "", Hierarchy::V1},
        // Only a mount whose root holds the process's cgroup can reach it.
        LayoutCase{"v1 container view and host view", "36 31 0:33 /docker/abc /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
                   "70 31 0:33 / /host/cgroup/devices rw - cgroup cgroup rw,devices\n",
                   "5:devices:/slurm/job_1\n", LayoutKind::V1, "/host/cgroup/devices",
                   "/host/cgroup/devices/slurm/job_1", "", "", Hierarchy::V1}),
    [](const auto& info) {
        std::string n = info.param.name;
        for (auto& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
        return n;
    });

// Every v1 hierarchy with its whole tree, once each (the /sys/fs/cgroup mount where it is
// mounted twice), named as /proc/<pid>/cgroup names it: where the job-end kill looks.
struct HierarchiesCase {
    const char* name;
    const char* mountinfo;
    const char* want;  // "mount=controller;..." in order, cgroup2's last (controller "")
};

const HierarchiesCase kHierarchiesCases[] = {
    {"this machine's hybrid layout",
     "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
     "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
     "36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n"
     "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
     "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
     "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
     "/sys/fs/cgroup/cpu=cpu;/sys/fs/cgroup/devices=devices;/sys/fs/cgroup/freezer=freezer;"
     "/sys/fs/cgroup/systemd=name=systemd;/sys/fs/cgroup/unified="},
    {"co-mounted, mount options first",
     "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,nosuid,cpu,cpuacct\n"
     "36 31 0:33 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n",
     "/sys/fs/cgroup/cpu,cpuacct=cpu;/sys/fs/cgroup/devices=devices"},
    {"bound again in a chroot, before and after",
     "90 88 0:34 / /srv/chroot/sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
     "37 31 0:34 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
     "36 31 0:33 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
     "91 88 0:33 / /srv/chroot/sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n",
     "/sys/fs/cgroup/freezer=freezer;/sys/fs/cgroup/devices=devices"},
    {"a container's view of part of a tree is left out",
     "36 31 0:33 / /sys/fs/cgroup/devices rw - cgroup cgroup rw,devices\n"
     "37 31 0:34 /docker/abc /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n",
     "/sys/fs/cgroup/devices=devices"},
    {"pure v2", "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n", "/sys/fs/cgroup="},
};

class LayoutHierarchies : public ::testing::TestWithParam<HierarchiesCase> {};

TEST_P(LayoutHierarchies, EachOnceByItsToken) {
    const auto& c = GetParam();
    const std::string mountinfo = c.mountinfo;
    const bool v2 = mountinfo.find("cgroup2") != std::string::npos;
    const bool devices = mountinfo.find("devices") != std::string::npos;
    const std::string self = std::string(devices ? "5:devices:/\n" : "") + (v2 ? "0::/\n" : "");
    auto l = parse_cgroup_layout(mountinfo, self);
    ASSERT_TRUE(l.ok()) << l.error().message;
    std::string got;
    for (const auto& h : l->all_hierarchies()) got += (got.empty() ? "" : ";") + h.mount + "=" + h.controller;
    EXPECT_EQ(got, c.want);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LayoutHierarchies, ::testing::ValuesIn(kHierarchiesCases), [](const auto& info) {
    std::string n = info.param.name;
    for (auto& ch : n) if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
});

TEST(LayoutParseErrors, OneLineNamingTheFile) {
    struct Case {
        const char* mountinfo;
        const char* self;
        const char* error;
    } cases[] = {
        {"31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", "0::/\n",
         "/proc/self/mountinfo: no cgroup v1 devices controller and no cgroup2 mount: device rules cannot be enforced"},
        {"31 23 0:28 / /x rw\n", "0::/\n", "/proc/self/mountinfo:1: malformed mount line '31 23 0:28 / /x rw'"},
        {kHybridMounts, "0::/\n",
         "/proc/self/cgroup: no 'devices' line although /proc/self/mountinfo mounts the devices controller at /sys/fs/cgroup/devices"},
        {kHybridMounts, "5:devices:/\nbogus\n", "/proc/self/cgroup:2: malformed line 'bogus'"},
        {"36 31 0:33 /docker/abc /d rw - cgroup cgroup rw,devices\n", "5:devices:/docker/abcd\n",
         "/proc/self/cgroup: cgroup '/docker/abcd' is outside the mount root '/docker/abc'"},
    };
    for (const auto& c : cases) {
        auto l = parse_cgroup_layout(c.mountinfo, c.self);
        ASSERT_FALSE(l.ok()) << c.error;
        EXPECT_EQ(l.error().message, c.error);
    }
}

TEST(LayoutDetect, ReadsThroughTheRootPrefix) {
    auto l = detect_cgroup_layout(RootFs("/nonexistent-xpart-root"));
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().message.rfind("/nonexistent-xpart-root/proc/self/mountinfo: ", 0), 0u) << l.error().message;
}

// The live node: every hierarchy of this machine bind-mounted a second time (as a chroot that
// binds /sys would) in a private mount namespace; the layout found there is the same.
constexpr const char* kSkip = "skip: ";

TEST(LayoutDetect, ASecondMountOfEachHierarchyChangesNothing) {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (a private mount namespace)";
    auto before = detect_cgroup_layout(RootFs("/"));
    ASSERT_TRUE(before.ok()) << before.error().message;
    char tmpl[] = "/tmp/xpl-bind-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string base = tmpl;
    int out[2];
    ASSERT_EQ(pipe(out), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(out[0]);
        auto say = [&](const std::string& text) {
            ssize_t w = write(out[1], text.data(), text.size());
            _exit(w == static_cast<ssize_t>(text.size()) ? 0 : 1);
        };
        if (unshare(CLONE_NEWNS) != 0) say(std::string("mount namespace: ") + std::strerror(errno));
        // Under a chroot whose root is no mount point (scripts/debian13) "/" cannot be made
        // private: there the binds stay in this namespace only if no mount shares with another.
        if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            const int err = errno;
            auto mounts = RootFs("/").read("/proc/self/mountinfo");
            if (err != EINVAL || !mounts) say(std::string("making / private: ") + std::strerror(err));
            if (mounts->find(" shared:") != std::string::npos)
                say(std::string(kSkip) + "a chroot with shared mounts: a bind could reach another namespace");
        }
        int n = 0;
        for (const std::string& m : {before->v1_devices_mount, before->v2_mount}) {
            if (m.empty()) continue;
            const std::string at = base + "/" + std::to_string(n++);
            if (mkdir(at.c_str(), 0700) != 0 || mount(m.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) != 0)
                say("bind " + m + " at " + at + ": " + std::strerror(errno));
        }
        auto after = detect_cgroup_layout(RootFs("/"));
        if (!after) say(after.error().message);
        say(after->v1_devices_mount + "|" + after->v1_devices_own + "|" + after->v2_mount + "|" + after->v2_own);
    }
    close(out[1]);
    std::string got;
    char buf[4096];
    ssize_t r;
    while ((r = read(out[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(r));
    close(out[0]);
    int status = 0;
    waitpid(child, &status, 0);
    for (int i = 0; i < 2; ++i) rmdir((base + "/" + std::to_string(i)).c_str());  // binds died with the namespace
    rmdir(base.c_str());
    if (got.rfind(kSkip, 0) == 0) GTEST_SKIP() << got.substr(std::strlen(kSkip));
    EXPECT_EQ(got, before->v1_devices_mount + "|" + before->v1_devices_own + "|" + before->v2_mount + "|" +
                       before->v2_own);
}

}  // namespace
}  // namespace xpart::cgroup
