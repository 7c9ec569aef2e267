#include "cgroup/v2_device_program.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "cgroup/bpf_device_filter.hpp"

namespace xpart::cgroup {

namespace {

Error sys_error(const std::string& what, const std::string& path, int err) {
    return Error{what + " " + path + ": " + std::strerror(err)};
}

Result<UniqueFd> open_cgroup(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return sys_error("cannot open cgroup", dir, errno);
    return UniqueFd(fd);
}

// Our programs attached to the cgroup, as open fds (in attach order).
Result<std::vector<UniqueFd>> own_programs(int cgroup_fd, const std::string& dir) {
    __u32 ids[64];
    __u32 count = 64;
    __u32 flags = 0;
    if (bpf_prog_query(cgroup_fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &count) != 0)
        return sys_error("cannot query device programs of", dir, errno);
    std::vector<UniqueFd> own;
    for (__u32 i = 0; i < count; ++i) {
        UniqueFd fd(bpf_prog_get_fd_by_id(ids[i]));
        if (!fd.valid()) {
            if (errno == ENOENT) continue;  // detached meanwhile
            return sys_error("cannot open device program id " + std::to_string(ids[i]) + " of", dir, errno);
        }
        bpf_prog_info info{};
        __u32 len = sizeof info;
        if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0)
            return sys_error("cannot read device program info of", dir, errno);
        if (std::strncmp(info.name, V2DeviceProgram::kProgramName, sizeof info.name) == 0)
            own.push_back(std::move(fd));
    }
    return own;
}

Result<std::vector<bpf_insn>> xlated_insns(int prog_fd, const std::string& dir) {
    bpf_prog_info info{};
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
        return sys_error("cannot read device program info of", dir, errno);
    std::vector<bpf_insn> insns(info.xlated_prog_len / sizeof(bpf_insn));
    bpf_prog_info again{};
    again.xlated_prog_len = static_cast<__u32>(insns.size() * sizeof(bpf_insn));
    again.xlated_prog_insns = reinterpret_cast<__u64>(insns.data());
    len = sizeof again;
    if (bpf_obj_get_info_by_fd(prog_fd, &again, &len) != 0)
        return sys_error("cannot read device program instructions of", dir, errno);
    if (again.xlated_prog_len == 0)
        return Error{"device program of " + dir + ": the kernel withholds its instructions"};
    return insns;
}

}  // namespace

Result<V2DeviceProgram> V2DeviceProgram::load(const DeviceRuleSet& set) {
    const std::vector<bpf_insn> insns = generate_device_filter(set);
    // Jump offsets are 16-bit: past this size the generated jumps would wrap.
    if (insns.size() > kMaxInstructions)
        return Error{"rule set too large for one device program (" + std::to_string(insns.size()) +
                     " instructions, at most " + std::to_string(kMaxInstructions) + ")"};
    std::vector<char> log(64 * 1024);
    LIBBPF_OPTS(bpf_prog_load_opts, opts, .log_size = static_cast<__u32>(log.size()),
                .log_buf = log.data());
    int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, kProgramName, "GPL", insns.data(), insns.size(),
                           &opts);
    if (fd < 0) {
        const int err = errno;
        std::string first(log.data(), strnlen(log.data(), log.size()));
        first = first.substr(0, first.find('\n'));
        return Error{"kernel refused the device program (" + std::to_string(insns.size()) +
                     " instructions): " + std::strerror(err) + (first.empty() ? "" : ": " + first)};
    }
    return V2DeviceProgram(UniqueFd(fd));
}

Status V2DeviceProgram::attach(const std::string& cgroup_dir) const {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto own = own_programs(cg->get(), cgroup_dir);
    if (!own) return own.error();
    LIBBPF_OPTS(bpf_prog_attach_opts, opts, .flags = BPF_F_ALLOW_MULTI);
    if (!own->empty()) {
        opts.flags |= BPF_F_REPLACE;
        opts.replace_prog_fd = own->front().get();
    }
    if (bpf_prog_attach_opts(fd_.get(), cg->get(), BPF_CGROUP_DEVICE, &opts) != 0) {
        const int err = errno;
        std::string hint = err == EPERM ? " (not root, or a program attached without BPF_F_ALLOW_MULTI)" : "";
        return Error{"cannot attach device program to " + cgroup_dir + ": " + std::strerror(err) + hint};
    }
    // Stale copies (an earlier run that died between attach and replace) would keep denying
    // what the new set allows: the new program is in force, so dropping them only widens to it.
    for (std::size_t i = 1; i < own->size(); ++i)
        if (bpf_prog_detach2((*own)[i].get(), cg->get(), BPF_CGROUP_DEVICE) != 0 && errno != ENOENT)
            return sys_error("cannot detach stale device program from", cgroup_dir, errno);
    return ok_status();
}

Status V2DeviceProgram::detach_own(const std::string& cgroup_dir) {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto own = own_programs(cg->get(), cgroup_dir);
    if (!own) return own.error();
    for (const auto& fd : *own)
        if (bpf_prog_detach2(fd.get(), cg->get(), BPF_CGROUP_DEVICE) != 0 && errno != ENOENT)
            return sys_error("cannot detach device program from", cgroup_dir, errno);
    return ok_status();
}

Result<std::optional<DeviceRuleSet>> V2DeviceProgram::attached_rules(const std::string& cgroup_dir) {
    auto cg = open_cgroup(cgroup_dir);
    if (!cg) return cg.error();
    auto own = own_programs(cg->get(), cgroup_dir);
    if (!own) return own.error();
    if (own->empty()) return std::optional<DeviceRuleSet>{};
    if (own->size() > 1)
        return Error{cgroup_dir + ": " + std::to_string(own->size()) +
                     " xpart device programs attached (expected one; apply again to repair)"};
    auto insns = xlated_insns(own->front().get(), cgroup_dir);
    if (!insns) return insns.error();
    auto set = decode_device_filter(*insns);
    if (!set) return Error{cgroup_dir + ": " + set.error().message};
    return std::optional<DeviceRuleSet>(std::move(*set));
}

}  // namespace xpart::cgroup
