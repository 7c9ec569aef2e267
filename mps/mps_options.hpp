// The MPS settings a site or user chooses, and their defaults, stated once: the SPANK plugin's
// plugstack.conf keys, `xpart mps` and `xpart launch --mps` all start from MpsJobOptions{}.
#pragma once

#include <chrono>
#include <string>

#include "libxpart/defaults.hpp"
#include "libxpart/env_map.hpp"

namespace xpart::mps {

// Root's per-job directories (emptied at boot); the default also names root's cgroup group.
inline constexpr const char* kDefaultRunDir = defaults::kRunDir;
inline constexpr const char* kDefaultMpsControl = "nvidia-cuda-mps-control";
inline constexpr std::chrono::milliseconds kDefaultMpsTimeout{10000};
// The front ends take the timeout in seconds; these bound it everywhere.
inline constexpr double kMinMpsTimeoutSeconds = 0.01;
inline constexpr double kMaxMpsTimeoutSeconds = 3600;

struct MpsJobOptions {
    std::string run_dir = kDefaultRunDir;        // --run-dir / XPART_RUN_DIR / run_dir=
    std::string control = kDefaultMpsControl;    // --mps-control / XPART_MPS_CONTROL / mps_control=
    std::chrono::milliseconds timeout = kDefaultMpsTimeout;  // readiness / quit deadline
    unsigned job_dir_mib = 64;  // --job-dir-size / job_dir_size=: each job's user/ (a tmpfs)
    EnvMap extra_env;           // tests only
};

inline std::chrono::milliseconds mps_timeout_from_seconds(double seconds) {
    return std::chrono::milliseconds(static_cast<long>(seconds * 1000));
}
inline double mps_timeout_seconds(std::chrono::milliseconds timeout) {
    return static_cast<double>(timeout.count()) / 1000;
}

}  // namespace xpart::mps
