#include "cgroup/bpf_syscall.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xpart::cgroup {

namespace {

// The whole union zeroed: the kernel refuses a nonzero byte past the fields it knows.
bpf_attr blank_attr() {
    bpf_attr attr;
    std::memset(&attr, 0, sizeof attr);
    return attr;
}

int sys_bpf(int cmd, bpf_attr& attr) {
    return static_cast<int>(::syscall(__NR_bpf, cmd, &attr, sizeof attr));
}

std::uint64_t ptr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

int load(const bpf_insn* insns, std::size_t count, const char* name, char* log, std::uint32_t log_size) {
    bpf_attr attr = blank_attr();
    attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    attr.insns = ptr(insns);
    attr.insn_cnt = static_cast<std::uint32_t>(count);
    attr.license = ptr("GPL");
    std::strncpy(attr.prog_name, name, sizeof attr.prog_name - 1);
    if (log) {
        attr.log_level = 1;
        attr.log_buf = ptr(log);
        attr.log_size = log_size;
    }
    int fd;
    // The verifier may be interrupted (EAGAIN); libbpf tries five times too.
    for (int tries = 0; (fd = sys_bpf(BPF_PROG_LOAD, attr)) < 0 && errno == EAGAIN && tries < 5; ++tries) {
    }
    return fd;
}

}  // namespace

int bpf_load_device_program(const bpf_insn* insns, std::size_t count, const char* name, char* log,
                            std::uint32_t log_size) {
    // Without a log first: the verifier writes one for every load it is given one for.
    const int fd = load(insns, count, name, nullptr, 0);
    if (fd >= 0 || !log || log_size == 0) return fd;
    const int err = errno;
    log[0] = '\0';
    const int again = load(insns, count, name, log, log_size);
    if (again >= 0) return again;  // refused once, then taken: keep it
    log[log_size - 1] = '\0';
    errno = err;
    return -1;
}

int bpf_attach_device_program(int prog_fd, int cgroup_fd, std::uint32_t flags, int replace_fd) {
    bpf_attr attr = blank_attr();
    attr.target_fd = static_cast<std::uint32_t>(cgroup_fd);
    attr.attach_bpf_fd = static_cast<std::uint32_t>(prog_fd);
    attr.attach_type = BPF_CGROUP_DEVICE;
    attr.attach_flags = flags;
    if (replace_fd >= 0) {
        attr.attach_flags |= BPF_F_REPLACE;
        attr.replace_bpf_fd = static_cast<std::uint32_t>(replace_fd);
    }
    return sys_bpf(BPF_PROG_ATTACH, attr);
}

int bpf_detach_device_program(int prog_fd, int cgroup_fd) {
    bpf_attr attr = blank_attr();
    attr.target_fd = static_cast<std::uint32_t>(cgroup_fd);
    attr.attach_bpf_fd = static_cast<std::uint32_t>(prog_fd);
    attr.attach_type = BPF_CGROUP_DEVICE;
    return sys_bpf(BPF_PROG_DETACH, attr);
}

int bpf_query_device_programs(int cgroup_fd, std::uint32_t* attach_flags, std::uint32_t* ids,
                              std::uint32_t* count) {
    bpf_attr attr = blank_attr();
    attr.query.target_fd = static_cast<std::uint32_t>(cgroup_fd);
    attr.query.attach_type = BPF_CGROUP_DEVICE;
    attr.query.prog_ids = ptr(ids);
    attr.query.prog_cnt = *count;
    const int rc = sys_bpf(BPF_PROG_QUERY, attr);
    // The kernel reports how many there are even when they did not fit (ENOSPC).
    *count = attr.query.prog_cnt;
    if (rc == 0 && attach_flags) *attach_flags = attr.query.attach_flags;
    return rc;
}

int bpf_program_fd_by_id(std::uint32_t id) {
    bpf_attr attr = blank_attr();
    attr.prog_id = id;
    return sys_bpf(BPF_PROG_GET_FD_BY_ID, attr);
}

int bpf_program_info(int prog_fd, bpf_prog_info* info, std::uint32_t* len) {
    bpf_attr attr = blank_attr();
    attr.info.bpf_fd = static_cast<std::uint32_t>(prog_fd);
    attr.info.info_len = *len;
    attr.info.info = ptr(info);
    const int rc = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, attr);
    if (rc == 0) *len = attr.info.info_len;
    return rc;
}

}  // namespace xpart::cgroup
