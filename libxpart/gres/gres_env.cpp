#include "libxpart/gres/gres_env.hpp"

#include "libxpart/visibility.hpp"

namespace xpart {
namespace {

bool test(const std::vector<bool>& bits, std::size_t i) { return i < bits.size() && bits[i]; }

// Allocated bits beyond the records: the allocation was made for another node layout.
std::vector<std::string> out_of_range(const std::vector<GresRecord>& records,
                                      const std::vector<bool>& bits, const char* what) {
    std::vector<std::string> errors;
    for (std::size_t i = records.size(); i < bits.size(); ++i)
        if (bits[i])
            errors.push_back(std::string(what) + " names GPU index " +
                             std::to_string(i) + " but this node has " +
                             std::to_string(records.size()) + " gres/gpu record(s)");
    return errors;
}

}  // namespace

const std::vector<std::string>& gres_env_names(EnvScope scope) {
    // Slurm's own two, then every vendor list the model may set.
    auto names = [](const char* slurm_list) {
        std::vector<std::string> out = {"SLURM_GPUS_ON_NODE", slurm_list};
        for (const EnvChange& c : bind_nothing_visibility()) out.push_back(c.name);
        return out;
    };
    static const std::vector<std::string> job = names("SLURM_JOB_GPUS");
    static const std::vector<std::string> step = names("SLURM_STEP_GPUS");
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
            result.errors.push_back(d.reason + "; its GPU variables bind nothing");
            task_unknown = true;
        }
    }
    // What the device cgroup leaves it able to open: ROCm drops the agents whose render node it
    // cannot open and numbers the rest 0..n-1; CUDA and stock's indices count the same way.
    std::vector<int> amd_order;
    std::vector<bool> openable;
    for (std::size_t i = 0; i < records.size(); ++i) {
        amd_order.push_back(records[i].amd_rank);
        openable.push_back(records[i].vendor == Vendor::Amd &&
                           (!req.constrain_devices || test(own, i)));
    }
    const auto rocm = rocm_numbers(amd_order, openable);

    std::vector<std::string> slurm_ids;
    std::vector<ListedDevice> devices;
    std::size_t position = 0;  // among the visible ones: stock's local index
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (!own[i]) continue;
        const GresRecord& r = records[i];
        slurm_ids.push_back(std::to_string(i));
        devices.push_back({r.vendor, r.unique_id, r.partition_uuid,
                           req.constrain_devices ? position++ : i, rocm[i].value_or(0)});
    }

    result.changes.push_back({"SLURM_GPUS_ON_NODE", std::to_string(allocated)});
    if (task_unknown) result.changes.push_back({slurm_list, std::string(kBindNothing)});
    else result.changes.push_back({slurm_list, join_list(slurm_ids)});
    const auto vendor = result.errors.empty() ? list_visibility(devices, req.amd_index_mode)
                                              : bind_nothing_visibility();
    result.changes.insert(result.changes.end(), vendor.begin(), vendor.end());
    return result;
}

EnvResult epilog_env(const std::vector<GresRecord>& records, const std::vector<bool>& alloc) {
    EnvResult result;
    result.errors = out_of_range(records, alloc, "the job allocation");
    std::vector<std::string> ids;
    std::vector<PrologDevice> devices;
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (!test(alloc, i)) continue;
        const GresRecord& r = records[i];
        ids.push_back(std::to_string(i));
        devices.push_back({r.vendor, r.unique_id, r.partition_uuid, r.type, r.gpu_uuid,
                           r.gpu_minor, r.gi, r.ci, r.kfd_node});
    }
    result.changes.push_back({"SLURM_JOB_GPUS", join_list(ids)});
    const auto vars = prolog_visibility(devices);
    result.changes.insert(result.changes.end(), vars.begin(), vars.end());
    return result;
}

}  // namespace xpart
