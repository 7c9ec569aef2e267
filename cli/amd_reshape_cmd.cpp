#include "cli/amd_reshape_cmd.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/discovery_args.hpp"
#include "cli/exit_status.hpp"
#include "cli/slice_picture.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/nvidia/mig_geometry.hpp"

namespace xpart::cli {

namespace {

// The partitionable AMD GPUs of the node (PCI order), or only the one of index `wanted`.
Result<std::vector<Gpu>> amd_gpus(const GlobalOptions& global, int wanted) {
    DiscoveryOptions options = discovery_options(global, "amd", "");
    options.rdma_nics = false;
    auto node = discover(options);
    if (!node) return node.error();
    std::vector<Gpu> out;
    std::size_t count = 0;
    for (auto& g : node->gpus) {
        const AmdModel* model = find_amd_model(g.model);
        if (g.vendor != Vendor::Amd || !model || !model->partitionable) continue;
        if (wanted < 0 || static_cast<int>(count) == wanted) out.push_back(g);
        ++count;
    }
    if (wanted >= static_cast<int>(count))
        return Error{"--gpu " + std::to_string(wanted) + ": the node has " + std::to_string(count) +
                     " partitionable AMD GPUs"};
    return out;
}

}  // namespace

Result<std::optional<AmdTarget>> amd_slurm_node_target(const GlobalOptions& global, const std::string& node,
                                                       const std::string& node_line) {
    auto types = node_gpu_geometry(node_line, 1);
    if (!types) return types.error();
    auto first = parse_amd_target(types->front());
    if (!first || !*first) return first;
    auto gpus = amd_gpus(global, -1);
    if (!gpus) return gpus.error();
    if (gpus->empty()) return Error{"node " + node + ": this host has no partitionable AMD GPU for " + types->front()};
    auto shares = node_gpu_geometry(node_line, static_cast<unsigned>(gpus->size()));
    if (!shares) return shares.error();
    const AmdModel& model = *find_amd_model(gpus->front().model);
    const unsigned per_gpu = amd_mode_partition_count((*first)->mode, model);
    for (const auto& type : *shares)
        if (type != types->front())
            return Error{"node " + node + ": its Gres mixes " + types->front() + " and " + type + ": one mode per GPU"};
    if (shares->size() != per_gpu)
        return Error{"node " + node + ": its Gres gives each of the " + std::to_string(gpus->size()) + " GPUs " +
                     std::to_string(shares->size()) + " x " + types->front() + ", but " + (*first)->text() +
                     " makes " + std::to_string(per_gpu) + " partitions of an " + model.name};
    return first;
}

Result<std::size_t> amd_geometry(const GlobalOptions& global, int gpu, const GpuRequest& wanted,
                                 AmdTypeNaming naming, bool json, nlohmann::json& doc) {
    auto gpus = amd_gpus(global, gpu);
    if (!gpus) return gpus.error();
    const RootFs root = discovery_options(global, "amd", "").root;
    for (const auto& g : *gpus) {
        auto options = amd_mode_options(root, g);
        if (!options) return options.error();
        const std::string now = AmdTarget{g.mode, g.memory_mode}.text();
        nlohmann::json j = {{"gpu", g.index}, {"pci_bus_id", g.pci_bus_id}, {"name", g.model}, {"uuid", g.uuid},
                            {"geometry", now}, {"partitions", g.partitions.size()}};
        // What each mode would register: its partitions' GRES types.
        auto types_of = [&](const AmdTarget& t, unsigned count) {
            return std::vector<std::string>(count, amd_partition_type(naming, t.mode, t.memory_mode, g.model));
        };
        const std::vector<std::string> types_now = partition_types(g);
        j["could_take"] = nlohmann::json::array();
        std::string list;
        for (const auto& o : *options) {
            const auto types = types_of(o.target, o.partitions);
            if (!wanted.empty() && !geometry_serves(types, wanted)) continue;
            j["could_take"].push_back({{"geometry", o.target.text()}, {"partitions", o.partitions},
                                       {"type", types.front()}, {"reboot", o.reboot}});
            list += (list.empty() ? "" : ", ") + o.target.text() + " (" + std::to_string(o.partitions) + " x " +
                    types.front() + (o.reboot ? ", reboot" : "") + ")";
        }
        if (!wanted.empty()) j["serves_now"] = geometry_serves(types_now, wanted);
        doc.push_back(j);
        if (json) continue;
        std::cout << "GPU " << g.index << "  " << g.model << "  " << g.pci_bus_id << "  " << g.uuid << "\n"
                  << "    now         " << now << " (" << g.partitions.size() << " x "
                  << (types_now.empty() ? std::string("none") : types_now.front()) << ")\n";
        const AmdModel* model = find_amd_model(g.model);
        if (model)
            for (const auto& row : amd_picture("XCPs", model->total_xcc, amd_mode_partition_count(g.mode, *model),
                                               g.memory_mode, true))
                std::cout << row << "\n";
        std::cout << "    " << (wanted.empty() ? "could take " : "would serve") << " "
                  << (!wanted.empty() && j["serves_now"].get<bool>() ? "(now: yes) " : "")
                  << (list.empty() ? "none" : list) << "\n";
    }
    return gpus->size();
}

int dry_run_amd_reshape(const GlobalOptions& global, int gpu, const AmdTarget& target, bool allow_reboot_class) {
    auto gpus = amd_gpus(global, gpu);
    if (!gpus) return fail("reshape", gpus.error().message);
    if (gpus->empty()) return fail("reshape", "this node has no partitionable AMD GPU for " + target.text());
    const DiscoveryOptions options = discovery_options(global, "amd", "");
    AmdReshapeOptions how;
    how.allow_reboot_class = allow_reboot_class;
    int status = kExitOk;
    for (const auto& g : *gpus) {
        auto plan = plan_amd_reshape(options, g.pci_bus_id, target, how);
        if (!plan) {
            status = fail("reshape", plan.error().message);
            continue;
        }
        const AmdModel* model = find_amd_model(g.model);
        std::cout << "GPU " << g.index << "  " << g.model << "  " << g.pci_bus_id << "  " << g.uuid << "\n";
        if (model)
            for (const auto& row : amd_picture("XCPs", plan->xccs, amd_mode_partition_count(g.mode, *model),
                                               g.memory_mode, true))
                std::cout << row << "\n";
        for (const auto& row : amd_picture("target", plan->xccs, plan->partitions, plan->memory, false))
            std::cout << row << "\n";
        const std::string label = "GPU " + g.pci_bus_id + ": ";
        std::string verdict = "would reshape to " + target.text();
        if (!plan->refused.empty())
            verdict = "refused: " + (plan->refused.rfind(label, 0) == 0 ? plan->refused.substr(label.size()) : plan->refused);
        else if (plan->reboot_class)
            verdict = "would write " + plan->memory + " (amdgpu applies it when it loads again: reboot, then reshape to " +
                      target.text() + ")";
        else if (plan->already)
            verdict = "already " + target.text();
        std::cout << "    dry run     " << verdict << "\n" << std::flush;
        if (!plan->refused.empty()) status = fail("reshape", plan->refused + " (dry run)");
    }
    return status;
}

int run_amd_reshape(const GlobalOptions& global, int gpu, const AmdTarget& target, bool allow_reboot_class) {
    auto gpus = amd_gpus(global, gpu);
    if (!gpus) return fail("reshape", gpus.error().message);
    if (gpus->empty()) return fail("reshape", "this node has no partitionable AMD GPU for " + target.text());
    DiscoveryOptions options = discovery_options(global, "amd", "");
    AmdReshapeOptions how;
    how.allow_reboot_class = allow_reboot_class;
    int status = 0;
    for (const auto& g : *gpus) {
        const auto t0 = std::chrono::steady_clock::now();
        auto out = reshape_amd_gpu(options, g.pci_bus_id, target, how);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!out) {
            status = fail("reshape", out.error().message);
            continue;
        }
        if (out->reboot_needed) {
            std::printf("GPU %s: %s -> %s written: amdgpu applies it when it loads again; reboot, then reshape to %s\n",
                        g.pci_bus_id.c_str(), out->memory_before.c_str(), out->memory_after.c_str(),
                        target.text().c_str());
            if (status == kExitOk) status = kExitRebootNeeded;
            continue;
        }
        std::printf("GPU %s: %s -> %s %s in %.2f s (discovery: %zu partitions)\n", g.pci_bus_id.c_str(),
                    AmdTarget{out->before, ""}.text().c_str(), AmdTarget{out->after, ""}.text().c_str(), out->changed ? "reshaped" : "already", secs,
                    out->partitions);
    }
    std::fflush(stdout);
    return status;
}

}  // namespace xpart::cli
