#include "libxpart/gres_env.hpp"

#include <algorithm>

namespace xpart {
namespace {

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items) {
        if (!out.empty()) out += ',';
        out += s;
    }
    return out;
}

bool test(const std::vector<bool>& bits, std::size_t i) { return i < bits.size() && bits[i]; }

// Allocated bits beyond the records: the allocation was made for another node layout.
std::vector<std::string> out_of_range(const std::vector<GresRecord>& records,
                                      const std::vector<bool>& bits, const char* what) {
    std::vector<std::string> errors;
    for (std::size_t i = records.size(); i < bits.size(); ++i)
        if (bits[i])
            errors.push_back(std::string("gres/gpu: ") + what + " names GPU index " +
                             std::to_string(i) + " but this node has " +
                             std::to_string(records.size()) + " gres/gpu record(s)");
    return errors;
}

void set(EnvResult& r, const std::string& name, const std::vector<std::string>& items) {
    if (items.empty()) r.changes.push_back({name, std::nullopt});
    else r.changes.push_back({name, join(items)});
}

}  // namespace

const std::vector<std::string>& gres_env_names(EnvScope scope) {
    static const std::vector<std::string> job = {"SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS",
                                                 "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                 "GPU_DEVICE_ORDINAL"};
    static const std::vector<std::string> step = {"SLURM_GPUS_ON_NODE", "SLURM_STEP_GPUS",
                                                  "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                                  "GPU_DEVICE_ORDINAL"};
    return scope == EnvScope::Job ? job : step;
}

EnvResult gres_env(const std::vector<GresRecord>& records, const EnvRequest& req) {
    EnvResult result;
    const auto& names = gres_env_names(req.scope);
    const std::string& slurm_list = names[1];

    result.errors = req.faults;
    auto range = out_of_range(records, req.alloc, "the allocation");
    result.errors.insert(result.errors.end(), range.begin(), range.end());

    std::size_t allocated = 0;
    for (std::size_t i = 0; i < records.size(); ++i) allocated += test(req.alloc, i);
    if (allocated == 0 && result.errors.empty()) {
        for (const auto& n : names) result.changes.push_back({n, std::nullopt});
        return result;
    }

    // What this process gets: the allocation, or the task's own set.
    std::vector<bool> own(records.size(), false);
    for (std::size_t i = 0; i < records.size(); ++i) own[i] = test(req.alloc, i);
    bool task_unknown = false;
    if (req.scope == EnvScope::Task && req.task) {
        TaskDevices d = task_devices(records, req.alloc, req.constrain_devices, *req.task);
        if (d.kind == TaskDevices::Kind::Devices)
            for (std::size_t i = 0; i < records.size(); ++i) own[i] = own[i] && test(d.devices, i);
        if (d.kind == TaskDevices::Kind::Unknown) {
            result.errors.push_back("gres/gpu: " + d.reason + "; its GPU variables bind nothing");
            task_unknown = true;
        }
    }
    // What the device cgroup leaves it able to open: ROCm drops the agents whose render node it
    // cannot open and numbers the rest 0..n-1; CUDA and stock's indices count the same way.
    auto visible = [&](std::size_t i) { return !req.constrain_devices || test(own, i); };

    std::vector<std::string> slurm_ids, cuda, rocr, ordinal;
    std::size_t position = 0;  // among the visible ones: stock's local index
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (!own[i]) continue;
        const GresRecord& r = records[i];
        const std::string index = std::to_string(req.constrain_devices ? position++ : i);
        slurm_ids.push_back(std::to_string(i));
        ordinal.push_back(!r.unique_id.empty() ? r.unique_id : index);
        if (r.vendor == Vendor::Nvidia) {
            cuda.push_back(!r.unique_id.empty() ? r.unique_id : index);
        } else if (req.amd_index_mode == AmdIndexMode::Uuid) {
            rocr.push_back(r.partition_uuid);
        } else {
            int rank = 0;
            for (std::size_t j = 0; j < records.size(); ++j)
                if (records[j].vendor == Vendor::Amd && visible(j) &&
                    records[j].amd_rank < r.amd_rank)
                    ++rank;
            rocr.push_back(std::to_string(rank));
        }
    }

    result.changes.push_back({"SLURM_GPUS_ON_NODE", std::to_string(allocated)});
    if (task_unknown) result.changes.push_back({slurm_list, std::string(kBindNothing)});
    else set(result, slurm_list, slurm_ids);
    if (!result.errors.empty()) {
        for (std::size_t k = 2; k < names.size(); ++k)
            result.changes.push_back({names[k], std::string(kBindNothing)});
        return result;
    }
    set(result, "CUDA_VISIBLE_DEVICES", cuda);
    set(result, "ROCR_VISIBLE_DEVICES", rocr);
    set(result, "GPU_DEVICE_ORDINAL", ordinal);
    return result;
}

EnvResult epilog_env(const std::vector<GresRecord>& records, const std::vector<bool>& alloc) {
    EnvResult result;
    result.errors = out_of_range(records, alloc, "the job allocation");
    std::vector<std::string> ids, cuda, uuids, types, gpus, mig, kfd;
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (!test(alloc, i)) continue;
        const GresRecord& r = records[i];
        ids.push_back(std::to_string(i));
        if (r.vendor == Vendor::Nvidia && !r.unique_id.empty()) cuda.push_back(r.unique_id);
        uuids.push_back(r.partition_uuid);
        types.push_back(r.type);
        if (std::find(gpus.begin(), gpus.end(), r.gpu_uuid) == gpus.end())
            gpus.push_back(r.gpu_uuid);
        if (r.gi >= 0 && r.ci >= 0)
            mig.push_back(std::to_string(r.gpu_minor) + ":" + std::to_string(r.gi) + ":" +
                          std::to_string(r.ci));
        if (r.vendor == Vendor::Amd && r.kfd_node >= 0) kfd.push_back(std::to_string(r.kfd_node));
    }
    set(result, "SLURM_JOB_GPUS", ids);
    set(result, "CUDA_VISIBLE_DEVICES", cuda);
    set(result, "XPART_PARTITION_UUIDS", uuids);
    set(result, "XPART_PARTITION_TYPES", types);
    set(result, "XPART_GPU_UUIDS", gpus);
    set(result, "XPART_MIG_INSTANCES", mig);
    set(result, "XPART_AMD_KFD_NODES", kfd);
    return result;
}

}  // namespace xpart
