// cgroup v1: device rules through devices.allow / devices.deny of one cgroup directory.
//
// Replacing a rule set while processes run, without a moment where they hold more than
// either set allows: the kernel keeps a default (allow or deny) plus exceptions per
// (type, major, minor). In deny-default mode (DenyAll) the new access bits are allowed first,
// then the bits only the old set had are denied; in allow-default mode (DenyManaged) new
// denials are written first, then the lifted ones allowed. Going from allow-default to
// deny-default writes "a" to devices.deny first (everything denied, then the allow list):
// narrower than both sets for an instant, never wider. The opposite switch cannot be done
// without a moment of allow-all, so it is refused. Every write is logged; when one fails the
// log is undone in reverse, which restores the previous set.
//
// libcgroup is not used here: its cgroup_set_value()/cgroup_modify_cgroup() write one value
// per control file per call and do not report which line failed, so neither the write order
// above nor the undo log could be expressed; the files are written directly.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cgroup/device_rule.hpp"
#include "libxpart/defaults.hpp"
#include "libxpart/result.hpp"

namespace xpart::cgroup {

// What the kernel holds for one v1 devices cgroup.
struct V1DeviceState {
    bool default_allow = true;
    std::vector<DeviceRule> exceptions;  // allow exceptions in deny mode, denials in allow mode
};

// The kernel state a rule set maps to (DenyManaged: managed bits minus the allowed ones).
V1DeviceState v1_state_for(const DeviceRuleSet& set);
// devices.list text -> state. In allow-default mode the kernel lists only "a *:* rwm" and
// hides the denials, so `exceptions` is empty then.
Result<V1DeviceState> parse_devices_list(const std::string& text, const std::string& file);

class V1DeviceController {
public:
    // `state_dir` keeps the DenyManaged rule set of each cgroup (the kernel does not list
    // denials in allow-default mode): "/run/xpart/cgroup-v1" by default.
    explicit V1DeviceController(std::string cgroup_dir, std::string state_dir = kDefaultStateDir);
    static constexpr const char* kDefaultStateDir = defaults::kV1DeviceState;

    Status apply(const DeviceRuleSet& set) const;
    // DenyAll: the kernel's allow list. DenyManaged: the set we applied (state file).
    // nullopt: allow-all with no set of ours.
    Result<std::optional<DeviceRuleSet>> current_rules() const;
    // Back to allow-all ("a" to devices.allow; the kernel refuses under a restricted parent
    // or while the cgroup has children) and forget our state.
    Status clear() const;
    // Removes our state file (when the cgroup itself is removed).
    void forget() const;

    const std::string& dir() const { return dir_; }
    std::string state_file() const;

private:
    Result<V1DeviceState> read_state() const;
    std::string dir_;
    std::string state_dir_;
};

// Narrows a v1 devices cgroup another manager owns (Slurm's task cgroup, removed by Slurm) to
// a DenyManaged `set`, in place: every managed rule the set does not allow goes to
// devices.deny, and nothing to devices.allow, so each of that manager's own denials stays.
// The cgroup ends within both sets. No state is kept: the cgroup ends with its owner's.
Status narrow_in_place(const std::string& dir, const DeviceRuleSet& set);

}  // namespace xpart::cgroup
