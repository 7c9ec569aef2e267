// Rank -> partition mapping policies. Pure functions of the allotted partitions (with their
// locality) and the local rank count, so every rank of a node computes the same whole map
// and takes its own line; the MPS manager uses the whole map to know which instances are in
// use and how many ranks share each.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::binding {

enum class BindPolicy {
    None,     // partitions in the order the environment gave them; CPUs left alone
    Closest,  // partitions grouped by NUMA node; each rank pinned to CPUs near its partition
};

// One allotted partition as the mapper sees it.
struct Slot {
    int numa_node = -1;
    std::vector<unsigned> cpus;  // CPUs near the partition's GPU
    std::string order_key;       // tie-break inside a NUMA node (the GPU's PCI bus id)
    int partition_index = 0;     // tie-break inside a GPU
};

struct MapOptions {
    BindPolicy bind = BindPolicy::None;
    // Explicit map: entry i is the slot (in environment order) of local rank i.
    std::vector<int> explicit_map;
    // CPUs a rank may be pinned to (the process's allowed set); empty = no restriction.
    std::vector<unsigned> allowed_cpus;
};

struct RankAssignment {
    std::size_t slot = 0;         // index into the slots given
    int sharers = 1;              // local ranks on this slot (for the MPS thread share)
    std::vector<unsigned> cpus;   // Closest: the CPUs to pin to; else empty
};

// One line per local rank. Default: one partition per rank; with more ranks than slots,
// consecutive ranks share a slot (block distribution, each slot gets floor or ceil). Closest
// orders slots by NUMA node then PCI bus id, spreads the ranks over NUMA nodes in proportion
// to their slots, and splits each locality's CPUs among the ranks placed there.
// Error: explicit map too short or naming a missing slot; no slots.
Result<std::vector<RankAssignment>> map_ranks(const std::vector<Slot>& slots, int local_size,
                                              const MapOptions& options);

// "0,0,1,3" -> {0,0,1,3}; error names the option and the bad entry.
Result<std::vector<int>> parse_rank_map(const std::string& text);

}  // namespace xpart::binding
