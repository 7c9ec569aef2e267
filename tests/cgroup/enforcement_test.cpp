// Device rules enforced by the kernel, on both hierarchies: a child process runs inside a
// test cgroup and open()s device nodes made with mknod. EPERM = denied by the cgroup;
// ENXIO/ENODEV = allowed (no driver behind these majors on this machine).
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "cgroup/bpf_device_filter.hpp"
#include "cgroup/bpf_syscall.hpp"
#include "libxpart/unique_fd.hpp"
#include "cgroup/v2_device_program.hpp"
#include "tests/cgroup/cgroup_fixture.hpp"
#include "tests/cgroup/rule_builders.hpp"

namespace xpart::cgroup::test {
namespace {

// Removes every test cgroup at the end, even after failures, and checks none is left.
class CleanupEnvironment : public ::testing::Environment {
public:
    void SetUp() override {
        if (::geteuid() != 0) ADD_FAILURE() << "enforcement tests need root (cgroups, mknod, BPF)";
    }
    void TearDown() override {
        const auto left = sweep_test_cgroups();
        for (const auto& dir : left) ADD_FAILURE() << "test cgroup left behind: " << dir;
        if (DIR* d = ::opendir(V1DeviceController::kDefaultStateDir)) {
            while (dirent* e = ::readdir(d))
                if (std::string(e->d_name).find(test_prefix()) != std::string::npos)
                    ADD_FAILURE() << "state file left behind: " << e->d_name;
            ::closedir(d);
        }
    }
};
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new CleanupEnvironment);

DeviceRuleSet allow(const std::vector<std::string>& rules, DevicePolicy policy = DevicePolicy::DenyAll) {
    return rule_set(policy, rules);
}

// A node shaped like the real ones: MIG devices (nvidiaN + GI/CI caps on the nvidia-caps
// major + shared nvidiactl; the monitor cap withheld, as by default) or AMD XCPs (one render
// node each + shared kfd).
enum class Shape { Mig, Amd };
constexpr unsigned kCapsMajor = 508, kKfdMajor = 510;
// A major no driver registers on this machine (see /proc/devices): open() reaches ENXIO.
constexpr unsigned kNoDriverMajor = 240;

Node make_node(Shape shape, unsigned partitions) {
    Node node;
    for (unsigned k = 0; k < partitions; ++k) {
        const unsigned per_gpu = shape == Shape::Mig ? 7 : 8;
        if (k % per_gpu == 0) {
            node.gpus.emplace_back();
            node.gpus.back().vendor = shape == Shape::Mig ? Vendor::Nvidia : Vendor::Amd;
            node.gpus.back().uuid = "GPU-" + std::to_string(k / per_gpu);
        }
        Gpu& gpu = node.gpus.back();
        Partition p;
        const unsigned g = k / per_gpu;
        if (shape == Shape::Mig) {
            p.uuid = "MIG-" + std::to_string(k);
            p.device_files = {{"/dev/nvidia" + std::to_string(g), 195, g, false},
                              {"gi", kCapsMajor, 3 + 2 * k, false},
                              {"ci", kCapsMajor, 4 + 2 * k, false},
                              {"/dev/nvidiactl", 195, 255, true}};
            if (gpu.withheld_files.empty())
                gpu.withheld_files.push_back({"/dev/nvidia-caps/nvidia-cap2", kCapsMajor, 2, true});
        } else {
            p.uuid = gpu.uuid;
            p.index = static_cast<int>(k % per_gpu);
            p.device_files = {{"/dev/dri/renderD" + std::to_string(128 + k), 226, 128 + k, false},
                              {"/dev/kfd", kKfdMajor, 0, true}};
        }
        gpu.partitions.push_back(p);
    }
    return node;
}

std::vector<const Partition*> first_partitions(const Node& node, unsigned n) {
    std::vector<const Partition*> out;
    for (const auto& g : node.gpus)
        for (const auto& p : g.partitions)
            if (out.size() < n) out.push_back(&p);
    return out;
}

// The files only this partition uses (a GPU's nvidiaN is shared by its MIG devices).
std::vector<DeviceFile> own_files(const Partition& p) {
    std::vector<DeviceFile> out;
    for (const auto& f : p.device_files)
        if (!f.shared && f.major != 195) out.push_back(f);
    return out;
}

class Enforcement : public ::testing::TestWithParam<Hierarchy> {
protected:
    void SetUp() override {
        if (test_parent(GetParam()).empty()) FAIL() << "no " << to_string(GetParam()) << " device hierarchy here";
    }
    DeviceNodes nodes;
    std::string c(unsigned major, unsigned minor) { return nodes.node('c', major, minor); }
};

INSTANTIATE_TEST_SUITE_P(Hierarchies, Enforcement, ::testing::Values(Hierarchy::V1, Hierarchy::V2),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// --- partitions: 1, 8 and 64 MIG devices / AMD XCPs ---------------------------------------
using PartitionParam = std::tuple<Hierarchy, Shape, unsigned>;
class PartitionEnforcement : public ::testing::TestWithParam<PartitionParam> {
protected:
    DeviceNodes nodes;
};

TEST_P(PartitionEnforcement, SelectedPartitionsOpenOthersAreDenied) {
    const auto [h, shape, count] = GetParam();
    const Node node = make_node(shape, count + 3);  // three partitions stay outside the set
    const auto chosen = first_partitions(node, count);
    DeviceRuleSet set;
    auto base = baseline_rules(RootFs("/"));
    ASSERT_TRUE(base.ok()) << base.error().message;
    for (const auto& r : *base) set.add_allow(r);
    for (const auto& r : partition_rules(chosen)) set.add_allow(r);

    ScopedCgroup cg(h);
    ProbeChild child(*cg);
    auto st = cg->apply(set);
    ASSERT_TRUE(st.ok()) << st.error().message;
    for (const Partition* p : chosen)
        for (const auto& f : p->device_files)
            EXPECT_TRUE(Allowed(child, nodes.node('c', f.major, f.minor), O_RDWR)) << p->uuid;
    for (std::size_t k = count; k < count + 3; ++k) {
        const Partition& other = *first_partitions(node, count + 3)[k];
        for (const auto& f : own_files(other))
            EXPECT_TRUE(Denied(child, nodes.node('c', f.major, f.minor), O_RDWR)) << other.uuid;
    }
    EXPECT_EQ(child.open_errno("/dev/null", O_RDWR), 0);  // baseline, with a driver: opens
    EXPECT_TRUE(Denied(child, nodes.node('c', kNoDriverMajor, 200), O_RDWR));  // not in the set: deny-all
    // What `show` reports (v2: decoded from the kernel's copy of the program) is the set.
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok()) << shown.error().message;
    ASSERT_TRUE(shown->has_value());
    EXPECT_EQ(format_rule_set((*shown)->normalized()), format_rule_set(set.normalized()));
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, PartitionEnforcement,
    ::testing::Combine(::testing::Values(Hierarchy::V1, Hierarchy::V2), ::testing::Values(Shape::Mig, Shape::Amd),
                       ::testing::Values(1u, 8u, 64u)),
    [](const auto& info) {
        return std::string(to_string(std::get<0>(info.param))) +
               (std::get<1>(info.param) == Shape::Mig ? "_mig_" : "_amd_") + std::to_string(std::get<2>(info.param));
    });

// --- rule forms ----------------------------------------------------------------------------
TEST_P(Enforcement, WildcardMinorAllowsTheWholeMajor) {
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    ASSERT_TRUE(cg->apply(allow({"c 195:* rw"})).ok());
    EXPECT_TRUE(Allowed(child, c(195, 0), O_RDWR));
    EXPECT_TRUE(Allowed(child, c(195, 77), O_RDWR));
    EXPECT_TRUE(Denied(child, c(508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('b', 195, 0), O_RDONLY));  // type matters
}

TEST_P(Enforcement, ReadOnlyRuleDeniesWriting) {
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    ASSERT_TRUE(cg->apply(allow({"c 226:128 r"})).ok());
    EXPECT_TRUE(Allowed(child, c(226, 128), O_RDONLY));
    EXPECT_TRUE(Denied(child, c(226, 128), O_WRONLY));
    EXPECT_TRUE(Denied(child, c(226, 128), O_RDWR));
}

TEST_P(Enforcement, ReplacingTheSetWhileTheChildRuns) {
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    const auto a = allow({"c 508:3 rw", "c 508:4 rw", "c 226:128 r"});
    const auto b = allow({"c 508:4 rw", "c 508:5 rw", "c 226:128 rw"});
    for (int round = 0; round < 3; ++round) {
        ASSERT_TRUE(cg->apply(a).ok());
        EXPECT_TRUE(Allowed(child, c(508, 3), O_RDWR));
        EXPECT_TRUE(Allowed(child, c(508, 4), O_RDWR));
        EXPECT_TRUE(Denied(child, c(508, 5), O_RDWR));
        EXPECT_TRUE(Denied(child, c(226, 128), O_WRONLY));
        auto st = cg->apply(b);
        ASSERT_TRUE(st.ok()) << st.error().message;
        EXPECT_TRUE(child.alive());
        EXPECT_TRUE(Denied(child, c(508, 3), O_RDWR));
        EXPECT_TRUE(Allowed(child, c(508, 4), O_RDWR));
        EXPECT_TRUE(Allowed(child, c(508, 5), O_RDWR));
        EXPECT_TRUE(Allowed(child, c(226, 128), O_WRONLY));
    }
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok()) << shown.error().message;  // v2: exactly one program of ours
}

TEST_P(Enforcement, ShowReportsTheSetInForce) {
    ScopedCgroup cg(GetParam());
    const auto set = allow({"c 195:* rw", "c 508:21 r", "c 1:3 rwm", "b 8:0 r"});
    auto none = cg->current_rules();
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE(cg->apply(set).ok());
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok()) << shown.error().message;
    ASSERT_TRUE(shown->has_value());
    EXPECT_EQ(format_rule_set((*shown)->normalized()), format_rule_set(set.normalized()));
}

// Writers of one cgroup's rules take turns. v1 applies a difference in several writes, so two
// applies at once would leave the union of both sets: 4 threads apply their own set at the
// same instant, 40 rounds, and after each round a process in the cgroup can open exactly the
// device of one set (open() probes: the kernel's rules, not our record of them).
TEST_P(Enforcement, ConcurrentAppliesLeaveOneWholeSet) {
    ScopedCgroup cg(GetParam());
    ASSERT_TRUE(cg->apply(allow({"c 1:3 rw"})).ok());
    ProbeChild child(*cg);
    std::vector<DeviceRuleSet> sets;
    for (unsigned i = 0; i < 4; ++i) sets.push_back(allow({"c 508:" + std::to_string(i) + " rw"}));
    int mixed = 0;
    for (int round = 0; round < 40; ++round) {
        std::atomic<unsigned> ready{0};
        std::vector<std::thread> threads;
        for (const auto& set : sets)
            threads.emplace_back([&, set] {
                for (++ready; ready < sets.size();) {}  // start together
                auto st = cg->apply(set);
                EXPECT_TRUE(st.ok()) << st.error().message;
            });
        for (auto& t : threads) t.join();
        std::string open;
        for (unsigned i = 0; i < sets.size(); ++i)
            if (Allowed(child, c(508, i), O_RDWR)) open += " 508:" + std::to_string(i);
        if (std::count(open.begin(), open.end(), ' ') != 1 && mixed++ == 0)
            ADD_FAILURE() << "round " << round << ": the cgroup lets open:" << open;
    }
    EXPECT_EQ(mixed, 0);
}

TEST_P(Enforcement, DenyManagedDeniesOnlyTheManagedSet) {
    const Node node = make_node(Shape::Mig, 4);
    DeviceRuleSet set;
    set.policy = DevicePolicy::DenyManaged;
    for (const auto& r : partition_rules(first_partitions(node, 1))) set.add_allow(r);
    set.managed = node_managed_rules(node);
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    auto st = cg->apply(set);
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_TRUE(Allowed(child, c(508, 3), O_RDWR));   // partition 0
    EXPECT_TRUE(Allowed(child, c(195, 255), O_RDWR)); // nvidiactl, part of partition 0
    EXPECT_TRUE(Denied(child, c(508, 5), O_RDWR));    // partition 1
    EXPECT_TRUE(Denied(child, c(kCapsMajor, 2), O_RDWR));  // the withheld monitor cap
    EXPECT_TRUE(Allowed(child, c(kNoDriverMajor, 200), O_RDWR));  // not managed
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok()) << shown.error().message;
    ASSERT_TRUE(shown->has_value());
    EXPECT_EQ(format_rule_set((*shown)->normalized()), format_rule_set(set.normalized()));
    // Replacement within the policy: partition 1 instead of 0.
    DeviceRuleSet next = set;
    next.allow = {DeviceRule{DeviceType::Char, 195u, 0u, kAccessRead | kAccessWrite},
                  DeviceRule{DeviceType::Char, kCapsMajor, 5u, kAccessRead | kAccessWrite},
                  DeviceRule{DeviceType::Char, kCapsMajor, 6u, kAccessRead | kAccessWrite}};
    ASSERT_TRUE(cg->apply(next).ok());
    EXPECT_TRUE(Denied(child, c(508, 3), O_RDWR));
    EXPECT_TRUE(Allowed(child, c(508, 5), O_RDWR));
    EXPECT_TRUE(Denied(child, c(195, 255), O_RDWR));
}

TEST_P(Enforcement, ClearLiftsOurRules) {
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    ASSERT_TRUE(cg->apply(allow({"c 508:3 rw"})).ok());
    EXPECT_TRUE(Denied(child, c(508, 4), O_RDWR));
    auto st = cg->clear();
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_TRUE(Allowed(child, c(508, 4), O_RDWR));
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok());
    EXPECT_FALSE(shown->has_value());
}

// --- nesting -------------------------------------------------------------------------------
TEST_P(Enforcement, NestedCgroupIsBoundByItsParent) {
    ScopedCgroup parent(GetParam());
    ASSERT_TRUE(parent->apply(allow({"c 508:3 rw", "c 508:4 rw"})).ok());  // v1: before children exist
    ScopedCgroup rank(GetParam(), parent->path());
    ProbeChild in_parent, in_rank;
    ASSERT_TRUE(parent->move(in_parent.pid()).ok());
    ASSERT_TRUE(rank->move(in_rank.pid()).ok());
    ASSERT_TRUE(rank->apply(allow({"c 508:3 rw"})).ok());
    EXPECT_TRUE(Allowed(in_rank, c(508, 3), O_RDWR));
    EXPECT_TRUE(Denied(in_rank, c(508, 4), O_RDWR));
    EXPECT_TRUE(Allowed(in_parent, c(508, 4), O_RDWR));
    EXPECT_TRUE(Denied(in_parent, c(508, 9), O_RDWR));

    // The rank asks for more than its parent has.
    auto st = rank->apply(allow({"c 508:3 rw", "c 508:9 rw"}));
    if (GetParam() == Hierarchy::V1) {
        ASSERT_FALSE(st.ok());  // the kernel refuses a child wider than its parent
        EXPECT_NE(st.error().message.find("c 508:9 rw"), std::string::npos) << st.error().message;
        EXPECT_NE(st.error().message.find("previous rules restored"), std::string::npos) << st.error().message;
    } else {
        ASSERT_TRUE(st.ok()) << st.error().message;  // attached, but the parent's program still runs
    }
    EXPECT_TRUE(Denied(in_rank, c(508, 9), O_RDWR));
    EXPECT_TRUE(Allowed(in_rank, c(508, 3), O_RDWR));
}

// --- failures ------------------------------------------------------------------------------
TEST(EnforcementV1, FailedWriteMidwayRestoresThePreviousSet) {
    DeviceNodes nodes;
    ScopedCgroup parent(Hierarchy::V1);
    ASSERT_TRUE(parent->apply(allow({"c 508:1 rw", "c 508:2 rw"})).ok());
    ScopedCgroup rank(Hierarchy::V1, parent->path());
    ProbeChild child(*rank);
    ASSERT_TRUE(rank->apply(allow({"c 508:2 rw"})).ok());
    // 508:1 is granted first, then 508:9 fails (the parent lacks it): 508:1 must be revoked
    // again and 508:2, which the new set drops, must still be allowed.
    auto st = rank->apply(allow({"c 508:1 rw", "c 508:9 rw"}));
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().message, "cannot write 'c 508:9 rw' to " + rank->path() +
                                      "/devices.allow: Operation not permitted; previous rules restored");
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 1), O_RDWR));
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 2), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 9), O_RDWR));
}

TEST(EnforcementV1, DenyAllToDenyManagedIsRefused) {
    ScopedCgroup cg(Hierarchy::V1);
    ASSERT_TRUE(cg->apply(allow({"c 508:1 rw"})).ok());
    auto st = cg->apply(allow({"c 508:1 rw"}, DevicePolicy::DenyManaged));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("clear it first"), std::string::npos) << st.error().message;
}

TEST_P(Enforcement, CgroupGoneIsOneClearError) {
    std::string path;
    {
        ScopedCgroup cg(GetParam());
        path = cg->path();
    }
    auto cg = DeviceCgroup::open(GetParam(), path);
    ASSERT_FALSE(cg.ok());
    EXPECT_NE(cg.error().message.find(path), std::string::npos);
    ScopedCgroup live(GetParam());
    const DeviceCgroup handle = *live;
    ASSERT_TRUE(::rmdir(live->path().c_str()) == 0);
    auto st = handle.apply(allow({"c 1:3 rw"}));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find(live->path()), std::string::npos) << st.error().message;
    EXPECT_EQ(st.error().message.find('\n'), std::string::npos);
}

TEST_P(Enforcement, NotRootFailsAndKeepsTheRules) {
    ScopedCgroup cg(GetParam());
    ProbeChild child(*cg);
    ASSERT_TRUE(cg->apply(allow({"c 508:3 rw"})).ok());
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // an unprivileged process tries to widen the set
        ::close(pipefd[0]);
        if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(3);
        auto st = cg->apply(allow({"c 508:3 rw", "c 508:4 rw"}));
        const std::string msg = st.ok() ? "" : st.error().message;
        if (::write(pipefd[1], msg.data(), msg.size()) < 0) ::_exit(4);
        ::_exit(st.ok() ? 1 : 0);
    }
    ::close(pipefd[1]);
    char buf[512] = {};
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf - 1);
    ::close(pipefd[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "unprivileged apply succeeded";
    EXPECT_GT(n, 0);
    const std::string msg(buf);
    EXPECT_TRUE(msg.find("Operation not permitted") != std::string::npos ||
                msg.find("Permission denied") != std::string::npos)
        << msg;
    EXPECT_TRUE(Allowed(child, c(508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, c(508, 4), O_RDWR));
}

// --- v2: other programs on the cgroup are never touched ------------------------------------
int load_foreign(const DeviceRuleSet& set, const char* name) {
    const auto insns = generate_device_filter(set);
    return bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "GPL", insns.data(), insns.size(), nullptr);
}

std::vector<__u32> attached_ids(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    __u32 ids[64], count = 64, flags = 0;
    if (bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &count) != 0) count = 0;
    ::close(fd);
    return std::vector<__u32>(ids, ids + count);
}

__u32 prog_id(int prog_fd) {
    bpf_prog_info info{};
    __u32 len = sizeof info;
    bpf_obj_get_info_by_fd(prog_fd, &info, &len);
    return info.id;
}

TEST(EnforcementV2, ProgramsOfOthersStayAttachedAndEnforced) {
    DeviceNodes nodes;
    ScopedCgroup cg(Hierarchy::V2);
    ProbeChild child(*cg);
    // Someone else's program: denies 508:4, allows the rest.
    DeviceRuleSet theirs;
    theirs.policy = DevicePolicy::DenyManaged;
    theirs.managed = {*parse_device_rule("c 508:4 rwm")};
    UniqueFd foreign(load_foreign(theirs, "site_policy"));
    ASSERT_TRUE(foreign.valid()) << std::strerror(errno);
    int cgfd = ::open(cg->path().c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(bpf_prog_attach(foreign.get(), cgfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI), 0);
    ::close(cgfd);
    const __u32 foreign_id = prog_id(foreign.get());

    ASSERT_TRUE(cg->apply(allow({"c 508:3 rw", "c 508:4 rw"})).ok());
    ASSERT_TRUE(cg->apply(allow({"c 508:3 rw", "c 508:4 rw", "c 508:5 rw"})).ok());
    auto ids = attached_ids(cg->path());
    EXPECT_EQ(ids.size(), 2u);  // theirs and exactly one of ours
    EXPECT_NE(std::find(ids.begin(), ids.end(), foreign_id), ids.end());
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 5), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));  // theirs still says no
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 6), O_RDWR));  // ours says no
    ASSERT_TRUE(cg->clear().ok());
    ids = attached_ids(cg->path());
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids[0], foreign_id);
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 6), O_RDWR));
}

// xpart's own bpf(2) calls (cgroup/bpf_syscall.cpp) against libbpf's, which these tests use as
// the other side: a program each loads is seen the same way by the other, and a program the
// verifier refuses comes back as -1 with the verifier's words in the log.
TEST(BpfSyscall, LoadsWhatLibbpfSeesAndRefusalsCarryTheVerifiersLog) {
    const auto insns = generate_device_filter(allow({"c 508:3 rw"}));
    char log[4096];
    UniqueFd fd(bpf_load_device_program(insns.data(), insns.size(), "xpart_syscall", log, sizeof log));
    ASSERT_TRUE(fd.valid()) << std::strerror(errno);
    bpf_prog_info theirs{};
    __u32 len = sizeof theirs;
    ASSERT_EQ(bpf_obj_get_info_by_fd(fd.get(), &theirs, &len), 0);
    EXPECT_STREQ(theirs.name, "xpart_syscall");
    EXPECT_EQ(theirs.type, static_cast<__u32>(BPF_PROG_TYPE_CGROUP_DEVICE));
    bpf_prog_info ours{};
    __u32 our_len = sizeof ours;
    ASSERT_EQ(bpf_program_info(fd.get(), &ours, &our_len), 0);
    EXPECT_EQ(ours.id, theirs.id);
    UniqueFd by_id(bpf_program_fd_by_id(theirs.id));
    ASSERT_TRUE(by_id.valid()) << std::strerror(errno);

    // r0 = *(u64 *)(r9 + 0) with r9 never set, then exit: the verifier refuses the read.
    const bpf_insn bad[] = {
        {BPF_LDX | BPF_MEM | BPF_DW, 0, 9, 0, 0},
        {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
    };
    std::memset(log, 'x', sizeof log);
    errno = 0;
    EXPECT_EQ(bpf_load_device_program(bad, 2, "xpart_bad", log, sizeof log), -1);
    EXPECT_EQ(errno, EACCES) << std::strerror(errno);
    EXPECT_NE(std::string(log, strnlen(log, sizeof log)).find("R9"), std::string::npos) << log;
    errno = 0;
    EXPECT_EQ(bpf_load_device_program(bad, 2, "xpart_bad", nullptr, 0), -1);
    EXPECT_EQ(errno, EACCES);

    ScopedCgroup cg(Hierarchy::V2);
    UniqueFd cgfd(::open(cg->path().c_str(), O_RDONLY | O_DIRECTORY));
    ASSERT_TRUE(cgfd.valid());
    ASSERT_EQ(bpf_attach_device_program(fd.get(), cgfd.get(), BPF_F_ALLOW_MULTI, -1), 0) << std::strerror(errno);
    EXPECT_EQ(attached_ids(cg->path()), std::vector<__u32>{theirs.id});
    __u32 ids[4], count = 4, flags = 0;
    ASSERT_EQ(bpf_query_device_programs(cgfd.get(), &flags, ids, &count), 0);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(flags, static_cast<__u32>(BPF_F_ALLOW_MULTI));
    ASSERT_EQ(bpf_detach_device_program(fd.get(), cgfd.get()), 0) << std::strerror(errno);
    EXPECT_TRUE(attached_ids(cg->path()).empty());
    EXPECT_EQ(bpf_detach_device_program(fd.get(), cgfd.get()), -1);
    EXPECT_EQ(errno, ENOENT);
}

TEST(EnforcementV2, OversizedSetIsRefusedAndThePreviousStays) {
    DeviceNodes nodes;
    ScopedCgroup cg(Hierarchy::V2);
    ProbeChild child(*cg);
    ASSERT_TRUE(cg->apply(allow({"c 508:3 rw"})).ok());
    DeviceRuleSet huge;
    for (unsigned m = 0; m < 40000; ++m) huge.allow.push_back({DeviceType::Char, 508u, m, kAccessRead});
    auto st = cg->apply(huge);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("rule set too large for one device program"), std::string::npos)
        << st.error().message;
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDONLY));
}

// A program attached without ALLOW_MULTI (as Slurm's task program is) cannot be added to:
// ours replaces it and runs its code for what ours allows, so nothing it denied opens.
TEST(EnforcementV2, ExclusiveForeignProgramIsReplacedKeepingItsDenials) {
    DeviceNodes nodes;
    ScopedCgroup cg(Hierarchy::V2);
    ProbeChild child(*cg);
    DeviceRuleSet theirs = allow({"c 508:3 rw", "c 508:5 rw"});
    __u32 foreign_id = 0;
    {
        UniqueFd foreign(load_foreign(theirs, "exclusive"));
        ASSERT_TRUE(foreign.valid());
        foreign_id = prog_id(foreign.get());
        int cgfd = ::open(cg->path().c_str(), O_RDONLY | O_DIRECTORY);
        ASSERT_EQ(bpf_prog_attach(foreign.get(), cgfd, BPF_CGROUP_DEVICE, 0), 0);  // no flag
        ::close(cgfd);
    }  // only the kernel holds it now, as after Slurm's step daemon closed its fd
    auto st = cg->apply(allow({"c 508:3 rw", "c 508:4 rw"}));
    ASSERT_TRUE(st.ok()) << st.error().message;
    auto ids = attached_ids(cg->path());
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_NE(ids[0], foreign_id);
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));  // both allow
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));   // theirs denies
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 5), O_RDWR));   // ours denies
    auto shown = cg->current_rules();
    ASSERT_TRUE(shown.ok()) << shown.error().message;
    ASSERT_TRUE(shown->has_value());
    EXPECT_EQ(format_rule_set((*shown)->normalized()), format_rule_set(allow({"c 508:3 rw", "c 508:4 rw"}).normalized()));
    // Applied again: still theirs inside, not ours twice.
    ASSERT_TRUE(cg->apply(allow({"c 508:4 rw", "c 508:5 rw"})).ok());
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 5), O_RDWR));
    // Cleared: their rules, alone, as before.
    ASSERT_TRUE(cg->clear().ok());
    ASSERT_EQ(attached_ids(cg->path()).size(), 1u);
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 5), O_RDWR));
    auto after = cg->current_rules();
    ASSERT_TRUE(after.ok());
    EXPECT_FALSE(after->has_value());
}

// Slurm's cgroup/v2 layout: job and step "user" programs with ALLOW_OVERRIDE, the task's with
// no flag, each a full deny list (DenyManaged) of the GRES files the level may not open.
struct SlurmLikeStep {
    ScopedCgroup job{Hierarchy::V2};
    ScopedCgroup task{Hierarchy::V2, job->path()};
    static void attach(const DeviceCgroup& cg, const std::vector<std::string>& denied, __u32 flags) {
        DeviceRuleSet set = rule_set(DevicePolicy::DenyManaged, {}, denied);
        UniqueFd prog(load_foreign(set, "slurm_like"));
        ASSERT_TRUE(prog.valid()) << std::strerror(errno);
        int cgfd = ::open(cg.path().c_str(), O_RDONLY | O_DIRECTORY);
        ASSERT_EQ(bpf_prog_attach(prog.get(), cgfd, BPF_CGROUP_DEVICE, flags), 0) << std::strerror(errno);
        ::close(cgfd);
    }
};

// A rank's rules on Slurm's task cgroup: the rank's partition opens; another rank's, the
// other job's GPU and the step's unallocated NIC stay shut, as Slurm set them.
TEST(EnforcementV2, RankRulesOnSlurmsTaskCgroupKeepSlurmsDenials) {
    DeviceNodes nodes;
    SlurmLikeStep step;
    // Job: another job's GPU (508:8) and a NIC not allocated (231:1). Task: the same plus
    // nothing of its own GPUs (508:3, 508:4 allocated to the step).
    SlurmLikeStep::attach(*step.job, {"c 508:8 rwm", "c 231:1 rwm"}, BPF_F_ALLOW_OVERRIDE);
    SlurmLikeStep::attach(*step.task, {"c 508:8 rwm", "c 231:1 rwm"}, 0);
    ProbeChild child(*step.task);
    const auto rank0 = rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"}, {"c 508:3 rwm", "c 508:4 rwm", "c 508:8 rwm"});
    auto st = step.task->apply(rank0);
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));   // the other rank's
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 8), O_RDWR));   // another job's
    EXPECT_TRUE(Denied(child, nodes.node('c', 231, 1), O_RDWR));   // Slurm's alone denies it
    EXPECT_TRUE(Allowed(child, nodes.node('c', 231, 0), O_RDWR));  // nobody denies it

    // Below the task the kernel allows no program: one clear line, nothing attached.
    ScopedCgroup below(Hierarchy::V2, step.task->path());
    auto refused = below->apply(rank0);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("without BPF_F_ALLOW_OVERRIDE"), std::string::npos)
        << refused.error().message;
    EXPECT_TRUE(attached_ids(below->path()).empty());
}

// An empty cgroup below Slurm's override program (the step directory): ours would replace
// that program for it, so ours carries it, across re-applies, and clearing gives it back.
TEST(EnforcementV2, BelowAnOverrideProgramItsDenialsStay) {
    DeviceNodes nodes;
    SlurmLikeStep step;
    SlurmLikeStep::attach(*step.job, {"c 231:1 rwm", "c 508:8 rwm"}, BPF_F_ALLOW_OVERRIDE);
    ProbeChild child(*step.task);
    auto st = step.task->apply(rule_set(DevicePolicy::DenyManaged, {"c 508:3 rw"}, {"c 508:3 rwm", "c 508:4 rwm"}));
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 4), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 231, 1), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 8), O_RDWR));
    ASSERT_TRUE(step.task->apply(rule_set(DevicePolicy::DenyAll, {"c 508:4 rw", "c 231:1 rw"})).ok());
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 4), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 231, 1), O_RDWR));  // ours allows, Slurm's not
    ASSERT_TRUE(step.task->clear().ok());
    EXPECT_TRUE(attached_ids(step.task->path()).empty());
    EXPECT_TRUE(Allowed(child, nodes.node('c', 508, 3), O_RDWR));
    EXPECT_TRUE(Denied(child, nodes.node('c', 231, 1), O_RDWR));
}

}  // namespace
}  // namespace xpart::cgroup::test
