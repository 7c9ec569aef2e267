#include "binding/allotment.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "libxpart/device_probe.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"

namespace xpart::binding {
namespace {

Error bad_token(const std::string& var, const std::string& value, const std::string& token,
                const std::string& why) {
    return Error{"environment: " + var + "='" + value + "': token '" + token + "' " + why};
}

// The partition's own render node (AMD): its first non-shared device file.
const DeviceFile* render_file(const Partition& p) {
    for (const auto& f : p.device_files)
        if (!f.shared && f.path.find("/dev/dri/renderD") == 0) return &f;
    return nullptr;
}

Result<Allotment> from_cuda(const Node& node, const std::string& value) {
    const std::string var = "CUDA_VISIBLE_DEVICES";
    Allotment a{var, {}};
    for (const auto& raw : split(value, ',')) {
        std::string token = trim(raw);
        if (token.empty()) continue;
        bool found = false;
        for (std::size_t g = 0; g < node.gpus.size() && !found; ++g) {
            const Gpu& gpu = node.gpus[g];
            if (gpu.vendor != Vendor::Nvidia) continue;
            for (std::size_t p = 0; p < gpu.partitions.size() && !found; ++p) {
                const Partition& part = gpu.partitions[p];
                // Legacy R450/R460 form: MIG-GPU-<uuid>/<gi>/<ci>.
                std::string legacy = "MIG-" + gpu.uuid + "/" + std::to_string(part.gi) + "/" +
                                     std::to_string(part.ci);
                bool whole = gpu.mode == PartitionMode::Full;
                if (token == part.uuid || (part.gi >= 0 && token == legacy) ||
                    (whole && token == std::to_string(gpu.index))) {
                    a.partitions.push_back({g, p, token});
                    found = true;
                }
            }
        }
        if (!found) {
            auto n = parse_u64(token);
            return bad_token(var, value, token,
                             n ? "is not the index of a whole (non-MIG) GPU on this node"
                               : "matches no partition on this node");
        }
    }
    return a;
}

struct Visible {
    std::size_t gpu, partition;
    int kfd_node;
};

// ROCR's numbering (libxpart/visibility.hpp): the openable AMD partitions, by ROCm number.
std::vector<Visible> rocr_visible(const Node& node, const DeviceOpenable& openable) {
    std::vector<Visible> agents;
    std::vector<int> kfd_order;
    std::vector<bool> open;
    for (std::size_t g = 0; g < node.gpus.size(); ++g) {
        if (node.gpus[g].vendor != Vendor::Amd) continue;
        for (std::size_t p = 0; p < node.gpus[g].partitions.size(); ++p) {
            const Partition& part = node.gpus[g].partitions[p];
            const DeviceFile* render = render_file(part);
            agents.push_back({g, p, part.kfd_node});
            kfd_order.push_back(part.kfd_node);
            open.push_back(!render || openable(*render));
        }
    }
    const auto numbers = rocm_numbers(kfd_order, open);
    std::vector<Visible> visible(static_cast<std::size_t>(
        std::count(open.begin(), open.end(), true)));
    for (std::size_t i = 0; i < agents.size(); ++i)
        if (numbers[i]) visible[*numbers[i]] = agents[i];
    return visible;
}

Result<Allotment> from_rocr(const Node& node, const std::string& value,
                            const DeviceOpenable& openable) {
    const std::string var = "ROCR_VISIBLE_DEVICES";
    const std::vector<Visible> visible = rocr_visible(node, openable);
    Allotment a{var, {}};
    for (const auto& raw : split(value, ',')) {
        std::string token = trim(raw);
        if (token.empty()) continue;
        std::vector<Visible> match;
        if (token[0] == 'G' || token[0] == 'g') {
            // A UUID matches by prefix; before ROCm 7 all XCPs of one GPU share it.
            for (const auto& v : visible)
                if (node.gpus[v.gpu].uuid.compare(0, token.size(), token) == 0)
                    match.push_back(v);
            if (match.size() > 1)
                return bad_token(var, value, token,
                                 "is ambiguous (" + std::to_string(match.size()) +
                                     " partitions share it); select XCPs by index");
        } else {
            auto n = parse_u64(token);
            if (!n) return bad_token(var, value, token, "is neither an index nor a GPU- UUID");
            if (*n >= visible.size())
                return bad_token(var, value, token,
                                 "is out of range (" + std::to_string(visible.size()) +
                                     " openable partitions)");
            match.push_back(visible[*n]);
        }
        if (match.empty()) return bad_token(var, value, token, "matches no partition");
        for (const auto& have : a.partitions)
            if (have.gpu == match[0].gpu && have.partition == match[0].partition)
                return bad_token(var, value, token, "repeats a partition");
        a.partitions.push_back({match[0].gpu, match[0].partition, token});
    }
    return a;
}

// GPU indices: every partition of each GPU. With a node from slurmd's cache the indices are
// the gres plugin's record indices instead, one partition each, placed as slurmd registered
// them (Node::gres_records). An AMD partition's token becomes its ROCR index, since that is
// what its rank's ROCR_VISIBLE_DEVICES needs.
Result<Allotment> from_gpu_indices(const Node& node, const std::string& var,
                                   const std::string& value, const DeviceOpenable& openable) {
    const std::vector<Visible> visible = rocr_visible(node, openable);
    Allotment a{var, {}};
    auto add = [&](std::size_t g, std::size_t p, const std::string& token) -> Status {
        if (node.gpus[g].vendor == Vendor::Nvidia) {
            a.partitions.push_back({g, p, token});
            return ok_status();
        }
        for (std::size_t i = 0; i < visible.size(); ++i)
            if (visible[i].gpu == g && visible[i].partition == p) {
                a.partitions.push_back({g, p, std::to_string(i)});
                return ok_status();
            }
        return bad_token(var, value, token,
                         "names a GPU whose partition " + std::to_string(p) +
                             " this process cannot open");
    };
    if (node.gres_records) {
        auto records = from_record_indices(node, var, value);
        if (!records) return records.error();
        for (const auto& p : records->partitions)
            if (auto s = add(p.gpu, p.partition, p.token); !s) return s.error();
        return a;
    }
    for (const auto& raw : split(value, ',')) {
        std::string token = trim(raw);
        if (token.empty()) continue;
        auto n = parse_u64(token);
        if (!n) return bad_token(var, value, token, "is not a GPU index");
        bool found = false;
        for (std::size_t g = 0; g < node.gpus.size() && !found; ++g) {
            if (node.gpus[g].index != static_cast<int>(*n)) continue;
            for (std::size_t p = 0; p < node.gpus[g].partitions.size(); ++p)
                if (auto s = add(g, p, token); !s) return s.error();
            found = true;
        }
        if (!found) return bad_token(var, value, token, "is not a GPU index on this node");
    }
    return a;
}

}  // namespace

Result<Allotment> from_record_indices(const Node& node, const std::string& var,
                                      const std::string& value) {
    // What slurmd registered when the node is its cache, else the same decision made again.
    const std::vector<PartitionPlace> by_record = registered_record_order(node);
    Allotment a{var, {}};
    for (const auto& raw : split(value, ',')) {
        const std::string token = trim(raw);
        const auto index = parse_u64(token);
        if (!index || *index >= by_record.size())
            return bad_token(var, value, token,
                             "is not one of this node's " + std::to_string(by_record.size()) +
                                 " gres/gpu records");
        a.partitions.push_back({by_record[*index].gpu, by_record[*index].partition, token});
    }
    return a;
}

DeviceOpenable open_probe(const RootFs& root) {
    // Read-only, as Slurm's 24.11 adapter probes: capability files are read-only for users,
    // and a device rule that denies denies a read too.
    return [root](const DeviceFile& f) { return device_openable(root.host_path(f.path), false); };
}

DeviceOpenable cgroup_probe(const RootFs& root) {
    return [root](const DeviceFile& f) { return !device_denied(root.host_path(f.path)); };
}

std::optional<std::size_t> rocr_index(const Node& node, const AllottedPartition& part,
                                      const DeviceOpenable& openable) {
    const auto visible = rocr_visible(node, openable);
    for (std::size_t i = 0; i < visible.size(); ++i)
        if (visible[i].gpu == part.gpu && visible[i].partition == part.partition) return i;
    return std::nullopt;
}

Result<Allotment> resolve_allotment(const Node& node, const EnvMap& env,
                                    const DeviceOpenable& openable) {
    Result<Allotment> a = Error{
        "environment: no partitions allotted: none of CUDA_VISIBLE_DEVICES, "
        "ROCR_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS is set"};
    if (const auto* v = env_get(env, "CUDA_VISIBLE_DEVICES"); v && !trim(*v).empty())
        a = from_cuda(node, *v);
    else if (const auto* r = env_get(env, "ROCR_VISIBLE_DEVICES"); r && !trim(*r).empty())
        a = from_rocr(node, *r, openable);
    else if (const auto* s = env_get(env, "SLURM_STEP_GPUS"); s && !trim(*s).empty())
        a = from_gpu_indices(node, "SLURM_STEP_GPUS", *s, openable);
    else if (const auto* j = env_get(env, "SLURM_JOB_GPUS"); j && !trim(*j).empty())
        a = from_gpu_indices(node, "SLURM_JOB_GPUS", *j, openable);
    if (a && a->partitions.empty())
        return Error{"environment: " + a->variable + " names no partition"};
    return a;
}

}  // namespace xpart::binding
