// Parses the "amd" object of a node spec (see sim/spec_amd.hpp). Unknown keys are rejected;
// every value is checked against the model (modes it has, render minors left).
#include <algorithm>
#include <cstdio>
#include <set>

#include "libxpart/amd/amd_models.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/text.hpp"
#include "sim/spec_parse.hpp"

namespace xpart::sim {

using nlohmann::json;

bool amd_mode_listed(const char* list, const std::string& item) {
    for (const std::string& part : split(list, ','))
        if (trim(part) == item) return true;
    return false;
}

std::string amd_mode_name(PartitionMode mode) {
    std::string out = to_string(mode);
    for (char& c : out) c = static_cast<char>(c - 'a' + 'A');
    return out;
}

std::string AmdGpuSpec::pci_bus_id() const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:00.0", domain, bus);
    return buf;
}

namespace {

// "dddd:bb:00.0", lower-case hex as sysfs names devices; function 0 (the GPU itself).
bool parse_bus_id(const std::string& s, unsigned& domain, unsigned& bus) {
    auto a = parse_pci_address(s);
    if (!a || a->device != 0 || a->function != 0) return false;
    domain = a->domain;
    bus = a->bus;
    return true;
}

Result<AmdGpuSpec> parse_gpu(const json& j, const SpecPath& at, const NodeSpec& spec) {
    if (auto st = check_keys(j, at, {"model", "unique_id", "pci_bus_id", "numa_node",
                                     "compute_partition", "memory_partition",
                                     "partitions_present", "pci_attributes", "xcp_naming",
                                     "hive_id", "switch"});
        !st)
        return st.error();
    AmdGpuSpec g;
    auto model_name = get_string(j, at, "model");
    if (!model_name) return model_name.error();
    const AmdModel* model = find_amd_model(*model_name);
    if (!model) {
        std::string names;
        for (const auto& m : amd_models()) names += std::string(names.empty() ? "" : "|") + m.name;
        return at.child("model").error("unknown model '" + *model_name + "' (expected " + names + ")");
    }
    g.model = model->name;

    auto uid = get_uint(j, at, "unique_id");
    if (!uid) return uid.error();
    if (*uid == 0) return at.child("unique_id").error("must not be 0");
    g.unique_id = *uid;

    auto bus_id = get_string(j, at, "pci_bus_id");
    if (!bus_id) return bus_id.error();
    if (!parse_bus_id(*bus_id, g.domain, g.bus))
        return at.child("pci_bus_id").error("expected 'dddd:bb:00.0' (lower-case hex), got '" +
                                            *bus_id + "'");

    auto numa = get_numa_node(j, at, spec);
    if (!numa) return numa.error();
    g.numa_node = *numa;
    auto sw = get_switch(j, at, spec);
    if (!sw) return sw.error();
    g.switch_name = *sw;

    const bool has_compute = j.contains("compute_partition");
    const bool has_memory = j.contains("memory_partition");
    if (model->partitionable) {
        std::string mode_text = "SPX";
        if (has_compute) {
            auto mode = get_string(j, at, "compute_partition");
            if (!mode) return mode.error();
            mode_text = *mode;
        }
        auto parsed = parse_amd_compute_partition(mode_text);
        if (!parsed || !amd_mode_listed(model->compute_modes, mode_text))
            return at.child("compute_partition")
                .error("'" + mode_text + "' is not a mode of the " + model->name + " (" +
                       model->compute_modes + ")");
        g.compute_partition = *parsed;
        g.memory_partition = "NPS1";
        if (has_memory) {
            auto mem = get_string(j, at, "memory_partition");
            if (!mem) return mem.error();
            g.memory_partition = *mem;
        }
        if (!parse_amd_memory_partition(g.memory_partition) ||
            !amd_mode_listed(model->memory_modes, g.memory_partition))
            return at.child("memory_partition")
                .error("'" + g.memory_partition + "' is not a memory mode of the " + model->name +
                       " (" + model->memory_modes + ")");
    } else if (has_compute || has_memory) {
        return at.child(has_compute ? "compute_partition" : "memory_partition")
            .error(std::string("the ") + model->name + " has no partition modes");
    }

    const unsigned count = g.compute_partition == PartitionMode::Full
                               ? 1
                               : amd_mode_partition_count(g.compute_partition, *model);
    auto present = get_uint_or(j, at, "partitions_present", count);
    if (!present) return present.error();
    if (*present == 0 || *present > count)
        return at.child("partitions_present")
            .error("expected 1.." + std::to_string(count) + ", got " + std::to_string(*present));
    g.partitions_present = static_cast<unsigned>(*present);

    auto attrs = get_bool_or(j, at, "pci_attributes", true);
    if (!attrs) return attrs.error();
    g.pci_attributes = *attrs;

    std::string naming_text = "dot";
    if (j.contains("xcp_naming")) {
        auto n = get_string(j, at, "xcp_naming");
        if (!n) return n.error();
        naming_text = *n;
    }
    if (naming_text == "dot")
        g.xcp_naming = XcpNaming::Dot;
    else if (naming_text == "underscore")
        g.xcp_naming = XcpNaming::Underscore;
    else
        return at.child("xcp_naming").error("expected \"dot\" or \"underscore\", got '" +
                                            naming_text + "'");

    auto hive = get_uint_or(j, at, "hive_id", 0);
    if (!hive) return hive.error();
    g.hive_id = *hive;
    return g;
}

}  // namespace

Status parse_amd_spec(const json& j, const SpecPath& at, NodeSpec& spec) {
    if (auto st = check_keys(j, at, {"gpus"}); !st) return st;
    auto it = j.find("gpus");
    if (it == j.end() || !it->is_array() || it->empty())
        return at.child("gpus").error("expected a non-empty array of GPUs");
    std::set<std::uint64_t> uids;
    std::set<std::string> buses;
    unsigned minors = 0;
    for (std::size_t i = 0; i < it->size(); ++i) {
        SpecPath gat = at.child("gpus").item(i);
        auto g = parse_gpu((*it)[i], gat, spec);
        if (!g) return g.error();
        if (!uids.insert(g->unique_id).second)
            return gat.child("unique_id").error("duplicate " + std::to_string(g->unique_id));
        if (!buses.insert(g->pci_bus_id()).second)
            return gat.child("pci_bus_id").error("duplicate '" + g->pci_bus_id() + "'");
        minors += g->partitions_present;
        if (minors > 128)
            return gat.error("more than 128 partitions: render minors 128..255 are exhausted");
        spec.amd.gpus.push_back(std::move(*g));
    }
    return ok_status();
}

void sort_amd_gpus(NodeSpec& spec) {
    std::sort(spec.amd.gpus.begin(), spec.amd.gpus.end(),
              [](const AmdGpuSpec& a, const AmdGpuSpec& b) {
                  return std::tie(a.domain, a.bus) < std::tie(b.domain, b.bus);
              });
}

}  // namespace xpart::sim
