#include "cgroup/device_rule.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <tuple>

#include "libxpart/text.hpp"

namespace xpart::cgroup {

namespace {

Error rule_error(std::string_view text, const std::string& what) {
    return Error{"device rule '" + std::string(text) + "': " + what};
}

Result<std::optional<unsigned>> parse_number_or_any(std::string_view text, std::string_view field,
                                                    const char* name) {
    if (field == "*") return std::optional<unsigned>{};
    auto v = parse_u64(field);
    // Majors and minors are 32-bit in the BPF context; the kernel's dev_t caps them lower.
    if (!v || *v > 0xffffffffULL)
        return rule_error(text, std::string("bad ") + name + " '" + std::string(field) +
                                    "' (expected a number or '*')");
    return std::optional<unsigned>{static_cast<unsigned>(*v)};
}

auto rule_key(const DeviceRule& r) {
    // Wildcards sort after numbers; ~0 never names a real device.
    return std::make_tuple(static_cast<char>(r.type), r.major.value_or(~0u), r.minor.value_or(~0u));
}

void add_merged(std::vector<DeviceRule>& rules, const DeviceRule& rule) {
    for (auto& r : rules)
        if (r.type == rule.type && r.major == rule.major && r.minor == rule.minor) {
            r.access |= rule.access;
            return;
        }
    rules.push_back(rule);
}

std::vector<DeviceRule> sorted(std::vector<DeviceRule> rules) {
    std::vector<DeviceRule> merged;
    for (const auto& r : rules) add_merged(merged, r);
    std::sort(merged.begin(), merged.end(),
              [](const DeviceRule& a, const DeviceRule& b) { return rule_key(a) < rule_key(b); });
    return merged;
}

}  // namespace

Result<DeviceRule> parse_device_rule(std::string_view text) {
    std::vector<std::string> fields;
    for (auto& f : split(trim(text), ' '))
        if (!f.empty()) fields.push_back(f);
    if (fields.empty()) return rule_error(text, "empty (expected '<c|b|a> <major>:<minor> <rwm>')");
    DeviceRule rule;
    const std::string& type = fields[0];
    if (type == "a") {
        rule.type = DeviceType::All;
        if (fields.size() == 1) return rule;
    } else if (type == "c") {
        rule.type = DeviceType::Char;
    } else if (type == "b") {
        rule.type = DeviceType::Block;
    } else {
        return rule_error(text, "bad type '" + type + "' (expected c, b or a)");
    }
    if (fields.size() != 3)
        return rule_error(text, "expected '<c|b|a> <major>:<minor> <rwm>', got " +
                                    std::to_string(fields.size()) + " fields");
    auto colon = fields[1].find(':');
    if (colon == std::string::npos)
        return rule_error(text, "bad device '" + fields[1] + "' (expected <major>:<minor>)");
    auto major = parse_number_or_any(text, std::string_view(fields[1]).substr(0, colon), "major");
    if (!major) return major.error();
    auto minor = parse_number_or_any(text, std::string_view(fields[1]).substr(colon + 1), "minor");
    if (!minor) return minor.error();
    rule.major = *major;
    rule.minor = *minor;
    rule.access = 0;
    for (char c : fields[2]) {
        unsigned bit = c == 'r' ? kAccessRead : c == 'w' ? kAccessWrite : c == 'm' ? kAccessMknod : 0;
        if (bit == 0 || (rule.access & bit))
            return rule_error(text, "bad access '" + fields[2] + "' (expected letters of rwm, each once)");
        rule.access |= bit;
    }
    if (rule.type == DeviceType::All && (rule.major || rule.minor || rule.access != kAccessAll))
        return rule_error(text, "type 'a' only as 'a' or 'a *:* rwm' (the kernel has no narrower form)");
    return rule;
}

std::string format_access(unsigned access) {
    std::string s;
    if (access & kAccessRead) s += 'r';
    if (access & kAccessWrite) s += 'w';
    if (access & kAccessMknod) s += 'm';
    return s;
}

std::string format_device_rule(const DeviceRule& rule) {
    std::string s(1, static_cast<char>(rule.type));
    s += ' ';
    s += rule.major ? std::to_string(*rule.major) : "*";
    s += ':';
    s += rule.minor ? std::to_string(*rule.minor) : "*";
    s += ' ';
    s += format_access(rule.access);
    return s;
}

void DeviceRuleSet::add_allow(const DeviceRule& rule) { add_merged(allow, rule); }
void DeviceRuleSet::add_managed(const DeviceRule& rule) { add_merged(managed, rule); }

DeviceRuleSet DeviceRuleSet::normalized() const {
    DeviceRuleSet out;
    out.policy = policy;
    out.allow = sorted(allow);
    out.managed = policy == DevicePolicy::DenyManaged ? sorted(managed) : std::vector<DeviceRule>{};
    return out;
}

const char* to_string(DevicePolicy p) {
    return p == DevicePolicy::DenyAll ? "deny-all" : "deny-managed";
}

std::string format_rule_set(const DeviceRuleSet& set) {
    std::string out = std::string("policy ") + to_string(set.policy) + "\n";
    for (const auto& r : set.allow) out += "allow " + format_device_rule(r) + "\n";
    if (set.policy == DevicePolicy::DenyManaged)
        for (const auto& r : set.managed) out += "deny " + format_device_rule(r) + "\n";
    return out;
}

Result<DeviceRuleSet> parse_rule_set(const std::string& text, const std::string& file) {
    DeviceRuleSet set;
    unsigned lineno = 0;
    bool have_policy = false;
    for (const auto& raw : split(text, '\n')) {
        ++lineno;
        const std::string line = trim(raw);
        if (line.empty()) continue;
        const auto space = line.find(' ');
        const std::string key = line.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : trim(line.substr(space + 1));
        if (key == "policy" && !have_policy && (rest == "deny-all" || rest == "deny-managed")) {
            set.policy = rest == "deny-all" ? DevicePolicy::DenyAll : DevicePolicy::DenyManaged;
            have_policy = true;
            continue;
        }
        if (!have_policy) return file_error(file, lineno, "expected 'policy deny-all|deny-managed', got '" + line + "'");
        if (key != "allow" && key != "deny")
            return file_error(file, lineno, "expected 'allow <rule>' or 'deny <rule>', got '" + line + "'");
        // format_rule_set writes no deny line under deny-all (nothing is managed there): one
        // read would be dropped by the next write (fuzzing: the round trip lost it).
        if (key == "deny" && set.policy != DevicePolicy::DenyManaged)
            return file_error(file, lineno, "'deny <rule>' needs 'policy deny-managed', got '" + line + "'");
        auto rule = parse_device_rule(rest);
        if (!rule) return file_error(file, lineno, rule.error().message);
        (key == "allow" ? set.allow : set.managed).push_back(*rule);
    }
    if (!have_policy) return file_error(file, 0, "no 'policy' line");
    return set;
}

Result<std::vector<DeviceRule>> baseline_rules(const RootFs& root) {
    auto exact = [](unsigned major, unsigned minor, unsigned access) {
        return DeviceRule{DeviceType::Char, major, minor, access};
    };
    std::vector<DeviceRule> rules = {
        exact(1, 3, kAccessAll),  // /dev/null
        exact(1, 5, kAccessAll),  // /dev/zero
        exact(1, 7, kAccessAll),  // /dev/full
        exact(1, 8, kAccessAll),  // /dev/random
        exact(1, 9, kAccessAll),  // /dev/urandom
        exact(5, 0, kAccessAll),  // /dev/tty
        exact(5, 2, kAccessAll),  // /dev/ptmx
    };
    // Unix98 pty slaves use majors 136..143 (/dev/pts/N).
    for (unsigned major = 136; major <= 143; ++major)
        rules.push_back(DeviceRule{DeviceType::Char, major, std::nullopt, kAccessRead | kAccessWrite});
    // NVIDIA control nodes: majors are dynamic for uvm, so read them from the node itself.
    for (const char* path : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
        struct stat st {};
        const std::string host = root.host_path(path);
        if (::stat(host.c_str(), &st) != 0) continue;  // absent: no NVIDIA driver on this node
        if (!S_ISCHR(st.st_mode)) return Error{host + ": not a character device"};
        rules.push_back(exact(::major(st.st_rdev), ::minor(st.st_rdev), kAccessRead | kAccessWrite));
    }
    return rules;
}

std::vector<DeviceRule> partition_rules(const std::vector<const Partition*>& partitions) {
    std::vector<DeviceRule> rules;
    for (const Partition* p : partitions)
        for (const auto& f : p->device_files)
            add_merged(rules, DeviceRule{DeviceType::Char, f.major, f.minor, kAccessRead | kAccessWrite});
    return rules;
}

std::vector<DeviceRule> node_managed_rules(const Node& node) {
    std::vector<const Partition*> all;
    for (const auto& g : node.gpus)
        for (const auto& p : g.partitions) all.push_back(&p);
    std::vector<DeviceRule> rules = partition_rules(all);
    // A withheld file is no partition's, so nothing allows it: deny-managed must deny it,
    // or a cgroup without Slurm's own device rules would still reach it.
    for (const auto& g : node.gpus)
        for (const auto& f : g.withheld_files)
            add_merged(rules, DeviceRule{DeviceType::Char, f.major, f.minor, kAccessRead | kAccessWrite});
    for (auto& r : rules) r.access = kAccessAll;
    return rules;
}

Result<std::vector<const Partition*>> select_partitions(const Node& node,
                                                        const std::vector<std::string>& selectors) {
    std::vector<const Partition*> out;
    for (const auto& sel : selectors) {
        std::string uuid = sel;
        std::optional<std::uint64_t> index;
        // "GPU-<uuid>:<index>"; MIG UUIDs never contain ':'.
        if (auto colon = sel.rfind(':'); colon != std::string::npos) {
            index = parse_u64(std::string_view(sel).substr(colon + 1));
            if (!index) return Error{"partition '" + sel + "': bad index after ':'"};
            uuid = sel.substr(0, colon);
        }
        std::vector<const Partition*> hits;
        for (const auto& g : node.gpus)
            for (const auto& p : g.partitions)
                if (p.uuid == uuid && (!index || p.index == static_cast<int>(*index))) hits.push_back(&p);
        if (hits.empty()) return Error{"partition '" + sel + "': no such partition on this node"};
        if (hits.size() > 1)
            return Error{"partition '" + sel + "': " + std::to_string(hits.size()) +
                         " partitions share this UUID; select one as <uuid>:<index>"};
        if (std::find(out.begin(), out.end(), hits[0]) == out.end()) out.push_back(hits[0]);
    }
    return out;
}

}  // namespace xpart::cgroup
