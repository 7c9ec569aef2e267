#include "cgroup/v2_device_program.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cgroup/bpf_device_filter.hpp"
#include "cgroup/bpf_syscall.hpp"
#include "libxpart/unique_fd.hpp"

namespace xpart::cgroup {

namespace {

constexpr const char* kKeptName = "kept_device";  // a program we re-attach for its owner

Error sys_error(const std::string& what, const std::string& path, int err) {
    return Error{what + " " + path + ": " + std::strerror(err)};
}

Result<UniqueFd> open_cgroup(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_error("cannot open cgroup", dir, errno);
    return UniqueFd(fd);
}

// The device programs attached to one cgroup (not inherited ones) and its attach flags.
struct Attached {
    __u32 flags = 0;
    std::vector<UniqueFd> ours, others;  // in attach order
    bool empty() const { return ours.empty() && others.empty(); }
    bool multi() const { return flags & BPF_F_ALLOW_MULTI; }
};

Result<bpf_prog_info> prog_info(int prog_fd, const std::string& dir) {
    bpf_prog_info info{};
    __u32 len = sizeof info;
    if (bpf_program_info(prog_fd, &info, &len) != 0)
        return sys_error("cannot read device program info of", dir, errno);
    return info;
}

Result<Attached> attached(int cgroup_fd, const std::string& dir) {
    __u32 ids[64];
    __u32 count = 64;
    Attached out;
    if (bpf_query_device_programs(cgroup_fd, &out.flags, ids, &count) != 0)
        return sys_error("cannot query device programs of", dir, errno);
    for (__u32 i = 0; i < count; ++i) {
        UniqueFd fd(bpf_program_fd_by_id(ids[i]));
        if (!fd.valid()) {
            if (errno == ENOENT) continue;  // detached meanwhile
            return sys_error("cannot open device program id " + std::to_string(ids[i]) + " of", dir, errno);
        }
        auto info = prog_info(fd.get(), dir);
        if (!info) return info.error();
        const bool ours = std::strncmp(info->name, V2DeviceProgram::kProgramName, sizeof info->name) == 0;
        (ours ? out.ours : out.others).push_back(std::move(fd));
    }
    return out;
}

Result<std::vector<bpf_insn>> xlated_insns(int prog_fd, const std::string& dir) {
    auto info = prog_info(prog_fd, dir);
    if (!info) return info.error();
    std::vector<bpf_insn> insns(info->xlated_prog_len / sizeof(bpf_insn));
    bpf_prog_info again{};
    again.xlated_prog_len = static_cast<__u32>(insns.size() * sizeof(bpf_insn));
    again.xlated_prog_insns = reinterpret_cast<__u64>(insns.data());
    __u32 len = sizeof again;
    if (bpf_program_info(prog_fd, &again, &len) != 0)
        return sys_error("cannot read device program instructions of", dir, errno);
    if (again.xlated_prog_len == 0)
        return Error{"device program of " + dir + ": the kernel withholds its instructions"};
    return insns;
}

// What a program decides, as code to run inside ours: ours carry it after their mark (none
// when they defer to nothing); anyone else's is the whole program.
Result<std::vector<bpf_insn>> decision_of(int prog_fd, bool ours, const std::string& dir) {
    auto insns = xlated_insns(prog_fd, dir);
    if (!insns) return insns.error();
    if (!ours) {
        if (auto s = check_inheritable(*insns); !s) return Error{dir + ": " + s.error().message};
        return insns;
    }
    auto parts = split_device_filter(*insns);
    if (!parts) return Error{dir + ": " + parts.error().message};
    return std::move(parts->inherited);
}

Status check_size(std::size_t instructions) {
    // Jump offsets are 16-bit: past this size the generated jumps would wrap.
    if (instructions > V2DeviceProgram::kMaxInstructions)
        return Error{"rule set too large for one device program (" + std::to_string(instructions) +
                     " instructions, at most " + std::to_string(V2DeviceProgram::kMaxInstructions) + ")"};
    return ok_status();
}

Result<UniqueFd> load_insns(const std::vector<bpf_insn>& insns, const char* name) {
    if (auto s = check_size(insns.size()); !s) return s.error();
    std::vector<char> log(64 * 1024);
    int fd = bpf_load_device_program(insns.data(), insns.size(), name, log.data(),
                                     static_cast<__u32>(log.size()));
    if (fd < 0) {
        const int err = errno;
        std::string first(log.data(), strnlen(log.data(), log.size()));
        first = first.substr(0, first.find('\n'));
        return Error{"kernel refused the device program (" + std::to_string(insns.size()) +
                     " instructions): " + std::strerror(err) + (first.empty() ? "" : ": " + first)};
    }
    return UniqueFd(fd);
}

// The nearest cgroup above `dir` (on the same cgroup2 mount) with device programs attached;
// empty when none has. Its program is what the kernel runs for `dir` until `dir` gets one.
Result<std::string> nearest_with_programs(const std::string& dir, Attached& found) {
    std::string at = dir;
    for (;;) {
        const auto slash = at.find_last_of('/');
        if (slash == std::string::npos || slash == 0) return std::string();
        at.resize(slash);
        struct statfs fs;
        if (::statfs(at.c_str(), &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) return std::string();
        auto cg = open_cgroup(at);
        if (!cg) return cg.error();
        auto a = attached(cg->get(), at);
        if (!a) return a.error();
        if (!a->empty()) {
            found = std::move(*a);
            return at;
        }
    }
}

Status attach_fd(int prog_fd, int cgroup_fd, __u32 flags, int replace_fd, const std::string& dir) {
    if (bpf_attach_device_program(prog_fd, cgroup_fd, flags, replace_fd) != 0)
        return sys_error("cannot attach device program to", dir, errno);
    return ok_status();
}

}  // namespace

Result<V2DeviceProgram> V2DeviceProgram::load(const DeviceRuleSet& set) {
    // Loaded (verified) when attached: only then is it known what it must carry.
    if (auto s = check_size(generate_device_filter(set).size()); !s) return s.error();
    return V2DeviceProgram(set);
}

// The kernel runs, for a cgroup, its own programs or else the nearest ancestor's, plus those of
// every BPF_F_ALLOW_MULTI ancestor above. Slurm attaches with BPF_F_ALLOW_OVERRIDE (job, step)
// and with no flag (task), which forbids adding a program anywhere below the task. So:
//  - a cgroup whose programs are MULTI: ours is added beside them (all must allow);
//  - a cgroup with one non-MULTI program (Slurm's task level): ours replaces it, same flags,
//    carrying its code (deferred form), so that both must allow;
//  - a cgroup with none: ours is added (MULTI); below an override program it would replace
//    that one for this cgroup, so it carries that program's code; below a no-flag program the
//    kernel refuses, and we say so.
// Replacing our own program keeps whatever code it carried.
Status V2DeviceProgram::attach(const std::string& cgroup_dir) const {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto here = attached(cg->get(), cgroup_dir);
    if (!here) return here.error();
    std::vector<bpf_insn> inherited;
    __u32 flags = BPF_F_ALLOW_MULTI;
    int replace = -1;
    if (!here->ours.empty()) {
        auto kept = decision_of(here->ours.front().get(), true, cgroup_dir);
        if (!kept) return kept.error();
        inherited = std::move(*kept);
    }
    if (!here->empty() && !here->multi()) {
        flags = here->flags;  // the kernel replaces the one program when the flags match
        if (here->ours.empty()) {
            auto kept = decision_of(here->others.front().get(), false, cgroup_dir);
            if (!kept) return kept.error();
            inherited = std::move(*kept);
        }
    } else if (here->empty()) {
        Attached above;
        auto at = nearest_with_programs(cgroup_dir, above);
        if (!at) return at.error();
        if (!at->empty() && !above.multi()) {
            if (!(above.flags & BPF_F_ALLOW_OVERRIDE))
                return Error{"cannot attach device program to " + cgroup_dir + ": the program on " + *at +
                             " was attached without BPF_F_ALLOW_OVERRIDE (Slurm's task level), so the"
                             " kernel allows none below it; confine in " + *at + " itself"};
            const UniqueFd& theirs = above.others.empty() ? above.ours.front() : above.others.front();
            auto kept = decision_of(theirs.get(), false, *at);  // the whole program, ours too
            if (!kept) return kept.error();
            inherited = std::move(*kept);
        }
    } else if (!here->ours.empty()) {
        replace = here->ours.front().get();  // MULTI: swap ours atomically
    }
    auto prog = load_insns(generate_device_filter(set_, inherited), kProgramName);
    if (!prog) return Error{"cgroup " + cgroup_dir + ": " + prog.error().message};
    if (auto s = attach_fd(prog->get(), cg->get(), flags, replace, cgroup_dir); !s) {
        const bool perm = s.error().message.find(std::strerror(EPERM)) != std::string::npos;
        return Error{s.error().message + (perm ? " (not root?)" : "")};
    }
    // Stale copies (an earlier run that died between attach and replace) would keep denying
    // what the new set allows: the new program is in force, so dropping them only widens to it.
    if (flags & BPF_F_ALLOW_MULTI)
        for (std::size_t i = 1; i < here->ours.size(); ++i)
            if (bpf_detach_device_program(here->ours[i].get(), cg->get()) != 0 && errno != ENOENT)
                return sys_error("cannot detach stale device program from", cgroup_dir, errno);
    return ok_status();
}

Status V2DeviceProgram::detach_own(const std::string& cgroup_dir) {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto here = attached(cg->get(), cgroup_dir);
    if (!here) return here.error();
    if (!here->multi() && !here->ours.empty()) {
        // Ours replaced someone's program (Slurm's task level): theirs goes back, as it was.
        auto kept = decision_of(here->ours.front().get(), true, cgroup_dir);
        if (!kept) return kept.error();
        if (!kept->empty()) {
            auto fd = load_insns(*kept, kKeptName);
            if (!fd) return Error{"cgroup " + cgroup_dir + ": " + fd.error().message};
            return attach_fd(fd->get(), cg->get(), here->flags, -1, cgroup_dir);
        }
    }
    for (const auto& fd : here->ours)
        if (bpf_detach_device_program(fd.get(), cg->get()) != 0 && errno != ENOENT)
            return sys_error("cannot detach device program from", cgroup_dir, errno);
    return ok_status();
}

Result<std::optional<DeviceRuleSet>> V2DeviceProgram::attached_rules(const std::string& cgroup_dir) {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto here = attached(cg->get(), cgroup_dir);
    if (!here) return here.error();
    if (here->ours.empty()) return std::optional<DeviceRuleSet>{};
    if (here->ours.size() > 1)
        return Error{cgroup_dir + ": " + std::to_string(here->ours.size()) +
                     " xpart device programs attached (expected one; apply again to repair)"};
    auto insns = xlated_insns(here->ours.front().get(), cgroup_dir);
    if (!insns) return insns.error();
    auto set = decode_device_filter(*insns);
    if (!set) return Error{cgroup_dir + ": " + set.error().message};
    return std::optional<DeviceRuleSet>(std::move(*set));
}

}  // namespace xpart::cgroup
