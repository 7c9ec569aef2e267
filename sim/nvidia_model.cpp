#include "sim/nvidia_model.hpp"

#include <algorithm>

#include "libxpart/text.hpp"

namespace xpart::sim {

std::vector<SimMigDevice> sim_mig_devices(const NvidiaGpuSpec& gpu) {
    std::vector<SimMigDevice> out;
    const GpuProductSpec* product = find_gpu_product(gpu.product);
    if (!product || (gpu.mig != MigState::Enabled && gpu.mig != MigState::DisablePending))
        return out;
    std::vector<std::pair<const GpuInstanceSpec*, const ComputeInstanceSpec*>> cis;
    for (const auto& gi : gpu.instances)
        for (const auto& ci : gi.compute_instances) cis.emplace_back(&gi, &ci);
    std::sort(cis.begin(), cis.end(), [](const auto& a, const auto& b) {
        return a.first->gi != b.first->gi ? a.first->gi < b.first->gi : a.second->ci < b.second->ci;
    });
    unsigned index = 0;
    for (const auto& [gi, ci] : cis) {
        while (std::find(gpu.mig_index_holes.begin(), gpu.mig_index_holes.end(), index) !=
               gpu.mig_index_holes.end())
            ++index;
        out.push_back({index++, gi, ci, product->find_profile(gi->profile)});
    }
    return out;
}

const std::vector<std::string>& nvml_discovery_fault_calls() {
    static const std::vector<std::string> calls = {
        "nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
        "nvmlDeviceGetMigMode", "nvmlDeviceGetMaxMigDeviceCount",
        "nvmlDeviceGetMigDeviceHandleByIndex", "nvmlDeviceGetGpuInstanceId",
        "nvmlDeviceGetComputeInstanceId", "nvmlDeviceGetUUID", "nvmlDeviceGetAttributes_v2",
        "nvmlDeviceGetMinorNumber", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetName",
        "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetCpuAffinity", "nvmlDeviceGetMemoryAffinity"};
    return calls;
}

const std::vector<std::string>& nvml_mig_fault_calls() {
    static const std::vector<std::string> calls = {
        "nvmlDeviceGetGpuInstanceProfileInfoV", "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
        "nvmlDeviceGetGpuInstances", "nvmlDeviceCreateGpuInstanceWithPlacement",
        "nvmlGpuInstanceDestroy", "nvmlGpuInstanceCreateComputeInstance",
        "nvmlComputeInstanceDestroy", "nvmlDeviceGetComputeRunningProcesses_v3"};
    return calls;
}

const std::vector<std::string>& nvml_fault_calls() {
    static const std::vector<std::string> calls = [] {
        std::vector<std::string> all = nvml_discovery_fault_calls();
        all.insert(all.end(), nvml_mig_fault_calls().begin(), nvml_mig_fault_calls().end());
        return all;
    }();
    return calls;
}

Result<NvmlFaultKey> parse_nvml_fault(const std::string& text) {
    NvmlFaultKey f;
    std::string key = text;
    if (std::size_t hash = key.find('#'); hash != std::string::npos) {
        auto nth = parse_u64(key.substr(hash + 1));
        if (!nth || *nth == 0 || *nth > 1000000)
            return Error{"expected <call>[@<gpu>]#<n>, n counted from 1, got '" + text + "'"};
        f.nth = static_cast<unsigned>(*nth);
        key.resize(hash);
    }
    std::size_t at = key.find('@');
    f.call = key.substr(0, at);
    const auto& calls = nvml_fault_calls();
    if (std::find(calls.begin(), calls.end(), f.call) == calls.end())
        return Error{"unknown NVML call '" + f.call + "'"};
    if (at != std::string::npos) {
        auto gpu = parse_u64(key.substr(at + 1));
        if (!gpu || *gpu > 63) return Error{"expected <call>@<gpu index>, got '" + key + "'"};
        if (f.call == "nvmlInit_v2" || f.call == "nvmlDeviceGetCount_v2")
            return Error{f.call + " is not a per-GPU call: '" + key + "'"};
        f.gpu = static_cast<int>(*gpu);
    }
    return f;
}

Result<std::map<std::string, int>> parse_nvml_fault_list(const std::string& text) {
    std::map<std::string, int> out;
    for (const std::string& raw : split(text, ',')) {
        std::string item = trim(raw);
        if (item.empty()) continue;
        std::size_t eq = item.find('=');
        const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
        const int signal_code = value == "kill" ? kNvmlFaultKill : value == "stop" ? kNvmlFaultStop : 0;
        auto code = eq == std::string::npos || signal_code ? std::nullopt : parse_u64(value);
        if (!signal_code && (!code || *code == 0 || *code > 999))
            return Error{"expected <call>[@<gpu>][#<n>]=<code 1..999, kill or stop>, got '" + item + "'"};
        auto key = parse_nvml_fault(item.substr(0, eq));
        if (!key) return key.error();
        out[item.substr(0, eq)] = signal_code ? signal_code : static_cast<int>(*code);
    }
    return out;
}

}  // namespace xpart::sim
