// Switching an AMD Instinct GPU's compute partition mode (SPX/DPX/TPX/QPX/CPX) as amd-smi does
// it, a write of the PCI device's current_compute_partition that amdgpu carries out inside the
// write (EBUSY while a KFD process holds the GPU), but safely: refuse while any process holds
// it, refuse a mode the memory partition (NPS) does not allow unless the admin allows a
// reboot-class change, verify by discovery, and put the old mode back when discovery does not
// confirm the new one.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "libxpart/amd/amd_models.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/result.hpp"

namespace xpart {

struct AmdTarget {
    PartitionMode mode = PartitionMode::Spx;
    std::string memory_mode;  // "NPS4"; empty: whatever the GPU has, if it allows the mode
    std::string text() const;  // "CPX", "CPX.NPS4"
};

// "cpx", "CPX", "cpx.nps4", "mi300x.cpx.nps4" (a GRES type of any AmdTypeNaming): nullopt when
// no word of it is a compute mode (a MIG geometry); Error for a word that is neither a mode, a
// memory partition nor an AMD model, or for two modes.
Result<std::optional<AmdTarget>> parse_amd_target(const std::string& text);

// Whether a GPU in memory partition `memory_mode` ("NPS4"; empty: unknown, taken as NPS1) can
// run `mode`: each partition must lie in one memory partition, so NPSk needs a partition count
// that k divides (NPS4: QPX or CPX).
bool amd_mode_fits_memory(PartitionMode mode, const AmdModel& model, const std::string& memory_mode);

// KFD processes holding any of `gpu_ids`: /sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>, the
// kernel's list of processes with the GPU open (amdgpu refuses a mode switch while one is).
Result<std::vector<unsigned>> amd_kfd_holders(const RootFs& root, const std::vector<std::uint64_t>& gpu_ids);

// A mode the GPU could take (`xpart geometry`): what amdgpu offers, with the memory
// partition it would run in, and whether getting there is reboot class (an NPS change).
struct AmdModeOption {
    AmdTarget target;     // memory_mode always set where the GPU reports one
    unsigned partitions = 0;
    bool reboot = false;
};
// From available_compute_partition and available_memory_partition: first the modes the GPU's
// memory partition allows, then those that need another one. Error when the GPU cannot switch.
Result<std::vector<AmdModeOption>> amd_mode_options(const RootFs& root, const Gpu& gpu);

struct AmdReshapeOutcome {
    PartitionMode before = PartitionMode::Spx;
    PartitionMode after = PartitionMode::Spx;
    std::string memory_before, memory_after;  // memory_after: what was written, if anything
    std::size_t partitions = 0;               // discovery's, after
    bool changed = false;
    bool reboot_needed = false;  // a memory partition was written: amdgpu applies it when it loads
};

struct AmdReshapeOptions {
    bool allow_reboot_class = false;  // write a memory partition change (applied at a reboot)
    std::chrono::milliseconds settle{10000};  // how long discovery may take to show the new mode
};

// What reshape_amd_gpu would do, decided before anything is written (its first step, and what
// `xpart reshape --dry-run` draws). Refusals are the very lines reshape_amd_gpu returns.
struct AmdReshapePlan {
    Gpu gpu;                    // as discovery shows it now
    unsigned xccs = 0;          // the GPU's XCDs (its model's)
    unsigned partitions = 0;    // what the target mode makes of it
    std::string memory;         // the memory partition the target runs in ("": the GPU's, unknown)
    bool reboot_class = false;  // a memory partition change, applied when amdgpu loads again
    bool already = false;       // in the target mode now, every partition there
    std::string refused;        // why it would not be made; "" when it would
};
// Error when the GPU cannot be read or has no compute partitions (reshape_amd_gpu's errors too).
Result<AmdReshapePlan> plan_amd_reshape(const DiscoveryOptions& discovery, const std::string& pci_bus_id,
                                        const AmdTarget& target, const AmdReshapeOptions& options);

// The switch, run by the reshape engine (reshape_engine.hpp). Error when refused ("GPU
// 0000:05:00.0: 1 KFD process holds it (pid 505): not reshaped", a mode its memory partition or
// the driver does not offer), or when discovery did not confirm the new mode: then the message
// says whether the old one was put back ("GPU 0000:05:00.0: wrote CPX but discovery shows ...;
// put back SPX", or "; putting back SPX failed: <why>").
Result<AmdReshapeOutcome> reshape_amd_gpu(const DiscoveryOptions& discovery, const std::string& pci_bus_id,
                                          const AmdTarget& target, const AmdReshapeOptions& options);

}  // namespace xpart
