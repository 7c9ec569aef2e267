#include "libxpart/visibility.hpp"

#include <algorithm>
#include <numeric>

#include "libxpart/text.hpp"

namespace xpart {

std::vector<std::optional<std::size_t>> rocm_numbers(const std::vector<int>& kfd_order,
                                                     const std::vector<bool>& openable) {
    std::vector<std::size_t> order(kfd_order.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Stable: agents with the same place keep the caller's order.
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return kfd_order[a] < kfd_order[b]; });
    std::vector<std::optional<std::size_t>> numbers(kfd_order.size());
    std::size_t next = 0;
    for (std::size_t i : order)
        if (i < openable.size() && openable[i]) numbers[i] = next++;
    return numbers;
}

std::optional<std::string> join_list(const std::vector<std::string>& items) {
    if (items.empty()) return std::nullopt;
    std::string out;
    for (const auto& s : items) {
        if (!out.empty()) out += ',';
        out += s;
    }
    return out;
}

std::vector<EnvChange> list_visibility(const std::vector<ListedDevice>& devices,
                                       AmdIndexMode amd_mode) {
    std::vector<std::string> cuda, rocr, ordinal;
    for (const ListedDevice& d : devices) {
        const std::string index = std::to_string(d.slurm_index);
        const std::string& named = !d.unique_id.empty() ? d.unique_id : index;
        ordinal.push_back(named);
        if (d.vendor == Vendor::Nvidia) cuda.push_back(named);
        else if (amd_mode == AmdIndexMode::Uuid) rocr.push_back(d.amd_uuid);
        else rocr.push_back(std::to_string(d.rocm_number));
    }
    return {{"CUDA_VISIBLE_DEVICES", join_list(cuda)},
            {"ROCR_VISIBLE_DEVICES", join_list(rocr)},
            {"GPU_DEVICE_ORDINAL", join_list(ordinal)}};
}

std::vector<EnvChange> bind_nothing_visibility() {
    return {{"CUDA_VISIBLE_DEVICES", std::string(kBindNothing)},
            {"ROCR_VISIBLE_DEVICES", std::string(kBindNothing)},
            {"GPU_DEVICE_ORDINAL", std::string(kBindNothing)}};
}

std::vector<EnvChange> withheld_visibility() {
    auto out = bind_nothing_visibility();
    out.push_back({"XPART_PARTITION", std::nullopt});
    out.push_back({"SLURM_STEP_GPUS", std::nullopt});
    return out;
}

std::vector<EnvChange> placement_visibility(const TaskPlacement& placement) {
    std::vector<EnvChange> out;
    if (placement.step_gpu) out.push_back({"SLURM_STEP_GPUS", *placement.step_gpu});
    if (placement.step_gpus) out.push_back({"XPART_STEP_GPUS", *placement.step_gpus});
    if (!placement.cpus.empty()) out.push_back({"XPART_CPUS", format_cpu_list(placement.cpus)});
    return out;
}

std::vector<EnvChange> rank_visibility(const Gpu& gpu, const Partition& part,
                                       const std::string& rocr_token, bool confined) {
    if (gpu.vendor == Vendor::Nvidia)
        return {{"CUDA_VISIBLE_DEVICES", part.uuid},
                {"ROCR_VISIBLE_DEVICES", std::nullopt},
                {"HIP_VISIBLE_DEVICES", std::nullopt},
                {"GPU_DEVICE_ORDINAL", part.uuid},
                {"XPART_PARTITION", part.uuid}};
    const std::string rocr = confined ? std::string("0") : rocr_token;
    return {{"CUDA_VISIBLE_DEVICES", std::nullopt},
            {"HIP_VISIBLE_DEVICES", std::nullopt},
            {"ROCR_VISIBLE_DEVICES", rocr},
            {"GPU_DEVICE_ORDINAL", rocr},
            {"XPART_PARTITION", part.uuid + "/" + std::to_string(part.index)}};
}

std::vector<EnvChange> prolog_visibility(const std::vector<PrologDevice>& devices) {
    std::vector<std::string> cuda, uuids, types, gpus, mig, kfd;
    for (const PrologDevice& d : devices) {
        if (d.vendor == Vendor::Nvidia && !d.unique_id.empty()) cuda.push_back(d.unique_id);
        uuids.push_back(d.partition_uuid);
        types.push_back(d.type);
        if (std::find(gpus.begin(), gpus.end(), d.gpu_uuid) == gpus.end())
            gpus.push_back(d.gpu_uuid);
        if (d.gi >= 0 && d.ci >= 0)
            mig.push_back(std::to_string(d.gpu_minor) + ":" + std::to_string(d.gi) + ":" +
                          std::to_string(d.ci));
        if (d.vendor == Vendor::Amd && d.kfd_node >= 0) kfd.push_back(std::to_string(d.kfd_node));
    }
    return {{"CUDA_VISIBLE_DEVICES", join_list(cuda)}, {"XPART_PARTITION_UUIDS", join_list(uuids)},
            {"XPART_PARTITION_TYPES", join_list(types)}, {"XPART_GPU_UUIDS", join_list(gpus)},
            {"XPART_MIG_INSTANCES", join_list(mig)},     {"XPART_AMD_KFD_NODES", join_list(kfd)}};
}

std::vector<EnvChange> nic_visibility(const Gpu& gpu, bool override_user, const EnvMap& env) {
    if (gpu.nics.empty()) return {};
    const NicRoute& own = gpu.nics.front();
    const std::string device = own.nic + ":" + std::to_string(own.port);
    std::vector<EnvChange> out;
    for (EnvChange c : {EnvChange{"NCCL_IB_HCA", "=" + device}, EnvChange{"UCX_NET_DEVICES", device}})
        if (override_user || !env_get(env, c.name)) out.push_back(std::move(c));
    out.push_back({"XPART_NIC", device});
    return out;
}

std::vector<EnvChange> mps_daemon_visibility(const std::string& instance_uuid) {
    return {{"CUDA_VISIBLE_DEVICES", instance_uuid}};
}

void apply_changes(EnvMap& env, const std::vector<EnvChange>& changes) {
    for (const EnvChange& c : changes) {
        if (c.value) env[c.name] = *c.value;
        else env.erase(c.name);
    }
}

}  // namespace xpart
