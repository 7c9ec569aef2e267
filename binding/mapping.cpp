#include "binding/mapping.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include "libxpart/text.hpp"

namespace xpart::binding {
namespace {

// Slot indices in the order ranks take them.
std::vector<std::size_t> ordered_slots(const std::vector<Slot>& slots, BindPolicy bind) {
    std::vector<std::size_t> order(slots.size());
    std::iota(order.begin(), order.end(), 0);
    if (bind == BindPolicy::Closest) {
        auto key = [&](std::size_t i) {
            // Unknown NUMA nodes sort last.
            unsigned numa = slots[i].numa_node < 0 ? ~0u : static_cast<unsigned>(slots[i].numa_node);
            return std::make_tuple(numa, slots[i].order_key, slots[i].partition_index);
        };
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
    }
    return order;
}

// Fewer ranks than slots under Closest: NUMA node k gets a share of the ranks in proportion to
// its slots (largest remainder), so two ranks on a two-socket box land on both sockets.
std::vector<std::size_t> spread_over_numa(const std::vector<Slot>& slots,
                                          const std::vector<std::size_t>& order, int ranks) {
    std::vector<std::vector<std::size_t>> groups;
    for (std::size_t i : order) {
        if (groups.empty() || slots[groups.back().front()].numa_node != slots[i].numa_node)
            groups.emplace_back();
        groups.back().push_back(i);
    }
    const std::size_t n = order.size();
    std::vector<std::size_t> quota(groups.size());
    std::vector<std::pair<std::size_t, std::size_t>> remainder;  // (remainder, group)
    std::size_t given = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        std::size_t exact = static_cast<std::size_t>(ranks) * groups[g].size();
        quota[g] = exact / n;
        given += quota[g];
        remainder.emplace_back(exact % n, g);
    }
    std::stable_sort(remainder.begin(), remainder.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t k = 0; given < static_cast<std::size_t>(ranks); ++k, ++given)
        ++quota[remainder[k].second];
    std::vector<std::size_t> chosen;
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (std::size_t q = 0; q < quota[g]; ++q) chosen.push_back(groups[g][q]);
    return chosen;
}

std::vector<unsigned> intersect(const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
    std::vector<unsigned> out;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

// Splits each locality's CPUs among the ranks placed on it, in rank order.
void assign_cpus(const std::vector<Slot>& slots, const std::vector<unsigned>& allowed,
                 std::vector<RankAssignment>& ranks) {
    std::map<std::vector<unsigned>, std::vector<std::size_t>> by_locality;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        std::vector<unsigned> near = slots[ranks[r].slot].cpus;
        if (!allowed.empty()) near = intersect(near, allowed);
        if (near.empty()) near = allowed;  // no locality known (or none allowed): any CPU
        by_locality[near].push_back(r);
    }
    for (const auto& [cpus, members] : by_locality) {
        const std::size_t c = cpus.size(), m = members.size();
        for (std::size_t k = 0; k < m; ++k) {
            auto& out = ranks[members[k]].cpus;
            if (c < m)
                out = cpus;  // more ranks than CPUs: they share the locality
            else
                out.assign(cpus.begin() + static_cast<long>(k * c / m),
                           cpus.begin() + static_cast<long>((k + 1) * c / m));
        }
    }
}

}  // namespace

Result<std::vector<RankAssignment>> map_ranks(const std::vector<Slot>& slots, int local_size,
                                              const MapOptions& options) {
    if (slots.empty()) return Error{"no partitions to map ranks to"};
    if (local_size < 1) return Error{"local size " + std::to_string(local_size) + " is below 1"};
    const std::size_t n = slots.size(), ranks = static_cast<std::size_t>(local_size);
    std::vector<RankAssignment> out(ranks);

    if (!options.explicit_map.empty()) {
        if (options.explicit_map.size() < ranks)
            return Error{"--map has " + std::to_string(options.explicit_map.size()) +
                         " entries for " + std::to_string(ranks) + " local ranks"};
        for (std::size_t r = 0; r < ranks; ++r) {
            int s = options.explicit_map[r];
            if (s < 0 || static_cast<std::size_t>(s) >= n)
                return Error{"--map entry " + std::to_string(r) + " is " + std::to_string(s) +
                             ", but only " + std::to_string(n) + " partitions are allotted"};
            out[r].slot = static_cast<std::size_t>(s);
        }
    } else {
        auto order = ordered_slots(slots, options.bind);
        if (ranks < n && options.bind == BindPolicy::Closest)
            order = spread_over_numa(slots, order, local_size);
        for (std::size_t r = 0; r < ranks; ++r)
            out[r].slot = ranks <= n ? order[r] : order[r * n / ranks];
    }

    std::vector<int> sharers(n, 0);
    for (const auto& a : out) ++sharers[a.slot];
    for (auto& a : out) a.sharers = sharers[a.slot];
    if (options.bind == BindPolicy::Closest) assign_cpus(slots, options.allowed_cpus, out);
    return out;
}

Result<std::vector<int>> parse_rank_map(const std::string& text) {
    std::vector<int> map;
    for (const auto& field : split(text, ',')) {
        auto n = parse_u64(trim(field));
        if (!n || *n > 4096)
            return Error{"--map='" + text + "': entry '" + field + "' is not a partition number"};
        map.push_back(static_cast<int>(*n));
    }
    return map;
}

}  // namespace xpart::binding
