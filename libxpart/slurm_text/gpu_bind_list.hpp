// The entry of a --gpu-bind=map_gpu:/mask_gpu: list that one task gets, and the GPU indices it
// names, as Slurm 22.05 evaluates them (gres.c, _get_usable_gres_map_or_mask) in the x86-64
// build Debian ships. Entries repeat with "*N" and the list starts over when tasks outnumber
// it. Values are checked against the node's GPU count; a mask's upper bound is a 32-bit shift
// by that count, which x86 takes modulo 32 (checked in the disassembly of libslurmfull.so and
// on a 64-GPU node): with 32 or 64 GPUs every mask value is rejected, and a mask bit i >= 32
// reads bit i % 32 of the value.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart {

// The indices the task's entry names, `size` (the node's GPU count) bits; all false when
// Slurm rejects the value ("Invalid --gpu-bind= value specified."). An error for a list Slurm
// cannot evaluate at all (no entry: it loops; a negative repetition count).
Result<std::vector<bool>> gpu_bind_list_pick(const std::string& list, unsigned local_id,
                                             std::size_t size, bool is_map);

}  // namespace xpart
