// Device rules: what a cgroup may open. The same model drives cgroup v1 (devices.allow/deny
// lines) and cgroup v2 (a generated BPF device program), so both hierarchies enforce one set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::cgroup {

enum class DeviceType : char { Char = 'c', Block = 'b', All = 'a' };

// Access bits as the kernel names them in devices.allow ("rwm").
constexpr unsigned kAccessRead = 1, kAccessWrite = 2, kAccessMknod = 4;
constexpr unsigned kAccessAll = kAccessRead | kAccessWrite | kAccessMknod;

// One rule: "c 195:* rw". An unset major/minor is the wildcard '*'. Type All matches
// character and block devices and is only written as "a" (any major, minor, rwm) by v1.
struct DeviceRule {
    DeviceType type = DeviceType::Char;
    std::optional<unsigned> major;
    std::optional<unsigned> minor;
    unsigned access = kAccessAll;

    bool operator==(const DeviceRule& o) const {
        return type == o.type && major == o.major && minor == o.minor && access == o.access;
    }
    bool operator!=(const DeviceRule& o) const { return !(*this == o); }
};

// "c 195:* rw", "b 8:0 r", "a" (= "a *:* rwm"). Error names the rule text and the bad field.
Result<DeviceRule> parse_device_rule(std::string_view text);
// The kernel's devices.list form: "c 195:* rw"; "a *:* rwm" for the all rule.
std::string format_device_rule(const DeviceRule& rule);
std::string format_access(unsigned access);

// What is denied when no rule allows an access.
enum class DevicePolicy {
    DenyAll,      // only `allow` may be opened (containers' default; use with baseline())
    DenyManaged,  // everything may be opened except `managed` devices not in `allow`
};

struct DeviceRuleSet {
    DevicePolicy policy = DevicePolicy::DenyAll;
    std::vector<DeviceRule> allow;
    // DenyManaged only: the devices this set governs (typically every GPU partition file of
    // the node); those not allowed are denied for the access bits listed here.
    std::vector<DeviceRule> managed;

    bool operator==(const DeviceRuleSet& o) const {
        return policy == o.policy && allow == o.allow && managed == o.managed;
    }

    // Appends without duplicates (same type/major/minor: access bits are merged).
    void add_allow(const DeviceRule& rule);
    void add_managed(const DeviceRule& rule);
    // Same rules in a canonical order (sorted, merged), for comparison and display.
    DeviceRuleSet normalized() const;
};

const char* to_string(DevicePolicy p);
// One rule per line, "allow c 195:0 rw" / "deny c 195:1 rw" / "default deny".
std::string format_rule_set(const DeviceRuleSet& set);

// Inverse of format_rule_set (state files, tests). Error names `file` and the line.
Result<DeviceRuleSet> parse_rule_set(const std::string& text, const std::string& file);

// The devices every process needs: null, zero, full, random, urandom, tty, ptmx and the pts
// slaves (136-143:*), plus nvidiactl, nvidia-uvm and nvidia-uvm-tools when the node (read
// through `root`) has them. rwm for the character basics, rw for the NVIDIA control nodes.
Result<std::vector<DeviceRule>> baseline_rules(const RootFs& root);

// Exact rules ("c M:m rw") for every device file of these partitions (shared ones included:
// a MIG device is unusable without nvidiactl and nvidia-uvm).
std::vector<DeviceRule> partition_rules(const std::vector<const Partition*>& partitions);
// Every partition device file of the node and every withheld one (the MIG monitor cap when
// no partition is given it), as managed rules for DevicePolicy::DenyManaged.
std::vector<DeviceRule> node_managed_rules(const Node& node);

// Selects partitions by "<MIG-uuid>" or "<GPU-uuid>" (exactly one match), or
// "<GPU-uuid>:<index>" for AMD XCPs, which share their GPU's UUID. Error names the selector.
Result<std::vector<const Partition*>> select_partitions(const Node& node,
                                                        const std::vector<std::string>& selectors);

}  // namespace xpart::cgroup
