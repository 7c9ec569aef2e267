// The six bpf(2) commands xpart's device programs need, called directly. libbpf's wrappers of
// them are as thin, but linking it maps libbpf, libelf and libz into every slurmstepd that
// confines a step (about 300K instructions of loading each time, issue 49). Each returns what
// the kernel returns: a file descriptor or 0, and -1 with errno set on failure.
#pragma once

#include <linux/bpf.h>

#include <cstddef>
#include <cstdint>

namespace xpart::cgroup {

// A BPF_PROG_TYPE_CGROUP_DEVICE program, GPL. When the kernel refuses it and `log` is given,
// the load is tried once more with the verifier's log there (NUL-terminated) and errno is the
// first refusal's.
int bpf_load_device_program(const bpf_insn* insns, std::size_t count, const char* name, char* log,
                            std::uint32_t log_size);
// BPF_CGROUP_DEVICE attach; replace_fd >= 0: in that program's place (BPF_F_REPLACE).
int bpf_attach_device_program(int prog_fd, int cgroup_fd, std::uint32_t flags, int replace_fd);
int bpf_detach_device_program(int prog_fd, int cgroup_fd);
// The ids of the device programs attached to the cgroup itself; *count in: room, out: found.
int bpf_query_device_programs(int cgroup_fd, std::uint32_t* attach_flags, std::uint32_t* ids,
                              std::uint32_t* count);
int bpf_program_fd_by_id(std::uint32_t id);
// *len in: the size of *info; out: what the kernel filled.
int bpf_program_info(int prog_fd, bpf_prog_info* info, std::uint32_t* len);

}  // namespace xpart::cgroup
