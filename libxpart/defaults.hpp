// The defaults xpart's parts share, in one table (as pyxis keeps its defaults in one block):
// each value written here once, each part naming it. Paths are as on the node; readers put
// them under the root prefix (libxpart/root_fs.hpp). The shell hooks in etc/ say the same in
// their /etc/default files.
#pragma once

#include <string_view>

namespace xpart::defaults {

// Root's runtime directory: the job directories of MPS (plugstack.conf run_dir=, --run-dir,
// XPART_RUN_DIR), the node cache, the v1 device controller's state.
inline constexpr const char kRunDir[] = "/run/xpart";
// The node as slurmd's discovery found it (libxpart/node_cache.hpp).
inline constexpr std::string_view kNodeCache = "/run/xpart/node.json";
// What the v1 device controller keeps of a cgroup's rules (cgroup/v1_device_controller.hpp).
inline constexpr const char kV1DeviceState[] = "/run/xpart/cgroup-v1";
// The reshape flow's slurmd units (etc/systemd/slurmd@.service.in): their ExecStartPre
// (`xpart reshape-request unit-start`) writes /run/xpart/slurmd-reboot-<NodeName> at each start,
// which their ExecStart reads: SLURMD_REBOOTED=-b while slurmctld waits for that node's boot.
inline constexpr const char kSlurmdRebootFlagPrefix[] = "slurmd-reboot-";
inline constexpr const char kSlurmdRebootVariable[] = "SLURMD_REBOOTED";
// xpart.conf where the xpart command looks by default (the plugin reads the one beside
// slurm.conf).
inline constexpr const char kXpartConf[] = "/etc/slurm/xpart.conf";

// Where the reshape flow's PrologSlurmctld waits take turns (reshape_request/poll_turn.hpp),
// followed by the hook user's uid: SlurmUser's own 0700 directory, checked before each use.
inline constexpr const char kReshapeTurnDirPrefix[] = "/tmp/xpart-reshape-";

}  // namespace xpart::defaults
