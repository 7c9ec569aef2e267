// Checks between what Slurm was told and what the node has: explicit gres.conf Name=gpu
// records against the hardware (slurmd start), and the allotted partitions against the node
// at step launch (a partition destroyed or re-made since slurmd started).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "libxpart/gres_record.hpp"

namespace xpart {

// One gres.conf Name=gpu record as Slurm parsed it.
struct ConfiguredGpu {
    std::string source;              // how to name it in a message ("gres.conf Name=gpu #2")
    std::string type;                // "" when not given
    std::vector<std::string> files;  // File=/MultipleFiles= paths; empty when not given
    std::uint64_t count = 1;
};

// One line per configured record that the hardware contradicts:
// "<source>: Type=<t> File=<f>: hardware has <what>".
std::vector<std::string> check_configured(const std::vector<ConfiguredGpu>& configured,
                                          const std::vector<GresRecord>& hardware);

// Stat-level checks of the partitions selected by `alloc` (bit i = record i): every presence
// path exists and every device file is still the character device recorded. One line each.
std::vector<std::string> check_present(const std::vector<GresRecord>& records,
                                       const std::vector<bool>& alloc);

}  // namespace xpart
