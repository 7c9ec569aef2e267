#include "reshape_request/sibling_units.hpp"

#include <algorithm>

#include "reshape_request/requests.hpp"

namespace xpart::reshape_request {

std::vector<std::string> siblings_of(const std::vector<SlurmNode>& cluster, const std::string& node) {
    auto me = std::find_if(cluster.begin(), cluster.end(), [&](const SlurmNode& n) { return n.name == node; });
    std::vector<std::string> out;
    if (me == cluster.end()) return out;
    for (const auto& n : cluster)
        if (n.group == me->group && n.name != node) out.push_back(n.name);
    return out;
}

UnitStart decide_unit_start(const std::vector<SlurmNode>& cluster, const std::string& node, bool enabled,
                            const std::vector<std::string>& enabled_siblings) {
    auto request_of = [&](const std::string& name) { return reboot_request(cluster, name, {}); };
    // Its RebootProgram ran (REBOOT_ISSUED, not REBOOT_REQUESTED: no job of it runs any more).
    auto gave_up_for_me = [&](const std::string& name) {
        auto r = request_of(name);
        auto it = std::find_if(cluster.begin(), cluster.end(), [&](const SlurmNode& n) { return n.name == name; });
        return r && r->target == node && it != cluster.end() && it->has("REBOOT_ISSUED");
    };
    std::vector<std::string> gave_up;
    for (const auto& sibling : siblings_of(cluster, node))
        if (gave_up_for_me(sibling)) gave_up.push_back(sibling);
    const std::string mine = "xpart-reshape: host is " + node + " now";
    if (enabled_siblings.empty()) return {UnitStart::Start, {}, gave_up, gave_up.empty() ? "" : mine};
    if (!enabled)
        return {UnitStart::StandAside, {}, {}, "xpart-reshape: host is " + enabled_siblings.front() + " (its unit enabled)"};
    if (auto r = request_of(node);
        r && std::find(enabled_siblings.begin(), enabled_siblings.end(), r->target) != enabled_siblings.end())
        return {UnitStart::StandDown, {}, {}, "xpart-reshape: host is " + r->target + " now"};
    if (std::all_of(enabled_siblings.begin(), enabled_siblings.end(), gave_up_for_me))
        return {UnitStart::Start, enabled_siblings, gave_up, mine};
    std::string units;
    for (const auto& name : enabled_siblings) units += (units.empty() ? "" : ", ") + name;
    return {UnitStart::Refuse, {}, {},
            "xpart-reshape: slurmd units of " + node + " and " + units +
                " enabled together, no reshape between them under way: slurmd not started"};
}

}  // namespace xpart::reshape_request
