// Checks between what slurmd registered and what the node has at step launch (a partition
// destroyed or re-made since slurmd started), and slurmd's line for gres.conf's AutoDetect=.
// gres.conf's records against the hardware: check_node_gres_conf (gres_conf.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libxpart/gres_record.hpp"

namespace xpart {

// slurmd's line for a gres.conf that names AutoDetect methods (`methods`: Slurm's names, "off"
// left out by the caller): with xpart's gres/gpu no gpu/<method> plugin of Slurm's is loaded,
// xpart's discovery registered the node's GPUs, and the admin reading slurmd's log is told so.
// nullopt when no method is named.
std::optional<std::string> autodetect_line(const std::vector<std::string>& methods,
                                           std::size_t registered);

// What an admin does when the node no longer matches what slurmd registered.
inline constexpr std::string_view kReregisterAdvice =
    "restart slurmd (or scontrol reconfigure) to register the node as it is now";

// Cheap checks of the partitions selected by `alloc` (bit i = record i) at step launch: every
// presence path exists (stat), every expected content still reads the same (one read() each:
// an AMD mode switch or a re-made KFD node), every device file is still the character device
// recorded (stat). Each shared path is looked at once. At most one line per partition for its
// presence and contents, ending with kReregisterAdvice; one line per wrong device file.
std::vector<std::string> check_present(const std::vector<GresRecord>& records,
                                       const std::vector<bool>& alloc);

}  // namespace xpart
