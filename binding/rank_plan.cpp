#include "binding/rank_plan.hpp"

#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"

namespace xpart::binding {

Result<NodePlan> plan_node(const Node& node, Allotment allotment, const Topology* topology,
                           int local_size, const MapOptions& options) {
    NodePlan plan;
    for (const auto& a : allotment.partitions) {
        const Gpu& gpu = node.gpus[a.gpu];
        Slot s;
        s.order_key = gpu.pci_bus_id;
        s.partition_index = gpu.partitions[a.partition].index;
        s.numa_node = gpu.numa_node;
        s.cpus = gpu.cpus;
        if (topology && !gpu.pci_bus_id.empty()) {
            // hwloc is the authority when it knows the device; discovery's view otherwise.
            auto loc = topology->locality_of(gpu.pci_bus_id);
            if (loc) {
                s.numa_node = loc->numa_node;
                s.cpus = loc->cpus;
            }
        }
        plan.slots.push_back(std::move(s));
    }
    auto map = map_ranks(plan.slots, local_size, options);
    if (!map) return map.error();
    plan.assignments = std::move(*map);
    plan.allotment = std::move(allotment);
    return plan;
}

EnvMap narrow_env(EnvMap env, const Node& node, const AllottedPartition& mine, bool confined) {
    const Gpu& gpu = node.gpus[mine.gpu];
    apply_changes(env, rank_visibility(gpu, gpu.partitions[mine.partition], mine.token, confined));
    return env;
}

std::string verbose_line(const Node& node, const RankInfo& rank, const NodePlan& plan) {
    const RankAssignment& me = plan.assignments[static_cast<std::size_t>(rank.local_rank)];
    const AllottedPartition& a = plan.allotment.partitions[me.slot];
    const Gpu& gpu = node.gpus[a.gpu];
    const Partition& part = gpu.partitions[a.partition];
    const Slot& slot = plan.slots[me.slot];
    std::string line = "xpart: rank " + std::to_string(rank.rank) + " local " +
                       std::to_string(rank.local_rank) + "/" + std::to_string(rank.local_size) +
                       " partition " + std::to_string(me.slot) + " " + part.type + " " +
                       part.uuid;
    if (gpu.vendor == Vendor::Amd) line += "/" + std::to_string(part.index);
    line += " gpu " + std::to_string(gpu.index) + " " + gpu.pci_bus_id + " numa " +
            (slot.numa_node < 0 ? std::string("-") : std::to_string(slot.numa_node)) + " cpus " +
            (me.cpus.empty() ? std::string("unbound") : format_cpu_list(me.cpus));
    if (me.sharers > 1) line += " shared-by " + std::to_string(me.sharers);
    return line;
}

}  // namespace xpart::binding
