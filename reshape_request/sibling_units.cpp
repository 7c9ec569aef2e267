#include "reshape_request/sibling_units.hpp"

#include <algorithm>
#include <optional>

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

UnitStart decide_unit_start(const std::vector<SlurmNode>& cluster, const std::string& node,
                            const std::vector<std::string>& enabled_siblings) {
    if (enabled_siblings.empty()) return {};
    auto request_of = [&](const std::string& name) -> std::optional<Request> {
        return reboot_request(cluster, name, {});
    };
    if (auto mine = request_of(node); mine && std::find(enabled_siblings.begin(), enabled_siblings.end(),
                                                        mine->target) != enabled_siblings.end())
        return {UnitStart::StandDown, {node}, "xpart-reshape: host is " + mine->target + " now"};
    if (enabled_siblings.size() == 1)
        if (auto theirs = request_of(enabled_siblings.front()); theirs && theirs->target == node)
            return {UnitStart::Start, enabled_siblings, ""};
    std::string units;
    for (const auto& name : enabled_siblings) units += (units.empty() ? "" : ", ") + name;
    return {UnitStart::Refuse, {},
            "xpart-reshape: slurmd units of " + node + " and " + units +
                " enabled together, no reshape between them under way: slurmd not started"};
}

}  // namespace xpart::reshape_request
