// Parsing and validation of the "nvidia" part of a node spec. A spec asking for something the
// driver would refuse (overlapping placements, a profile the product lacks) is an error
// naming the GPU and the instance.
#include <algorithm>
#include <set>

#include "libxpart/text.hpp"
#include "sim/nvidia_model.hpp"
#include "sim/nvidia_profiles.hpp"
#include "sim/spec_parse.hpp"

namespace xpart::sim {

using nlohmann::json;

namespace {

Result<MigState> parse_mig_state(const std::string& s, const SpecPath& at) {
    if (s == "unsupported") return MigState::Unsupported;
    if (s == "disabled") return MigState::Disabled;
    if (s == "enabled") return MigState::Enabled;
    if (s == "enable-pending") return MigState::EnablePending;
    if (s == "disable-pending") return MigState::DisablePending;
    return at.error("expected unsupported, disabled, enabled, enable-pending or disable-pending, "
                    "got '" + s + "'");
}

Status parse_faults(const json& j, const SpecPath& at, std::map<std::string, int>& faults) {
    if (!j.is_object()) return at.error("expected an object, got " + j.dump());
    for (auto it = j.begin(); it != j.end(); ++it) {
        SpecPath fat = at.child(it.key());
        auto fault = parse_nvml_fault(it.key());
        if (!fault) return fat.error(fault.error().message);
        if (it->is_string() && (it->get<std::string>() == "kill" || it->get<std::string>() == "stop")) {
            faults[it.key()] = it->get<std::string>() == "kill" ? kNvmlFaultKill : kNvmlFaultStop;
            continue;
        }
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0 ||
            it->get<std::uint64_t>() > 999)
            return fat.error("expected an nvmlReturn_t code 1..999, \"kill\" or \"stop\", got " + it->dump());
        faults[it.key()] = it->get<int>();
    }
    return ok_status();
}

Status parse_compute_instances(const json& inst, const SpecPath& at, const MigProfileSpec& prof,
                               GpuInstanceSpec& gi) {
    auto one = inst.find("uuid");
    auto many = inst.find("compute_instances");
    if ((one == inst.end()) == (many == inst.end()))
        return at.error("give either 'uuid' (one compute instance using the whole GPU instance) "
                        "or 'compute_instances'");
    if (one != inst.end()) {
        auto uuid = get_string(inst, at, "uuid");
        if (!uuid) return uuid.error();
        gi.compute_instances.push_back({0, prof.slices, *uuid});
        return ok_status();
    }
    if (!many->is_array() || many->empty())
        return at.child("compute_instances").error("expected a non-empty array");
    unsigned used = 0;
    for (std::size_t k = 0; k < many->size(); ++k) {
        const json& c = (*many)[k];
        SpecPath cat = at.child("compute_instances").item(k);
        if (auto st = check_keys(c, cat, {"ci", "slices", "uuid"}); !st) return st;
        auto id = get_uint(c, cat, "ci");
        if (!id) return id.error();
        auto slices = get_uint(c, cat, "slices");
        if (!slices) return slices.error();
        auto uuid = get_string(c, cat, "uuid");
        if (!uuid) return uuid.error();
        if (*id > 7) return cat.child("ci").error("expected 0..7, got " + std::to_string(*id));
        for (const auto& other : gi.compute_instances)
            if (other.ci == *id)
                return cat.child("ci").error("compute instance " + std::to_string(*id) +
                                             " defined twice");
        const std::uint64_t s = *slices;
        if ((s != 1 && s != 2 && s != 3 && s != 4 && s != 7) || s > prof.slices)
            return cat.child("slices").error("a " + prof.name + " GPU instance has no " +
                                             std::to_string(s) + "-slice compute instance");
        used += static_cast<unsigned>(s);
        if (used > prof.slices)
            return cat.error("compute instances use " + std::to_string(used) + " slices; " +
                             prof.name + " has " + std::to_string(prof.slices));
        gi.compute_instances.push_back({static_cast<unsigned>(*id), static_cast<unsigned>(s), *uuid});
    }
    return ok_status();
}

Status parse_instances(const json& j, const SpecPath& at, const GpuProductSpec& product,
                       NvidiaGpuSpec& gpu) {
    if (!j.is_array()) return at.error("expected an array");
    unsigned memory_used = 0;   // bit per memory slice
    unsigned compute_used = 0;
    std::map<std::string, unsigned> counts;
    for (std::size_t i = 0; i < j.size(); ++i) {
        const json& inst = j[i];
        SpecPath iat = at.item(i);
        if (auto st = check_keys(inst, iat, {"profile", "start", "uuid", "compute_instances"}); !st)
            return st;
        auto name = get_string(inst, iat, "profile");
        if (!name) return name.error();
        const MigProfileSpec* prof = product.find_profile(*name);
        if (!prof)
            return iat.child("profile").error(product.key + " has no MIG profile '" + *name + "'");
        auto start = get_uint(inst, iat, "start");
        if (!start) return start.error();
        if (std::find(prof->starts.begin(), prof->starts.end(), *start) == prof->starts.end())
            return iat.child("start").error(*name + " cannot be placed at " +
                                            std::to_string(*start) + " on " + product.key);
        const unsigned mask = ((1u << prof->memory_slices) - 1) << *start;
        if (memory_used & mask)
            return iat.error(*name + " at " + std::to_string(*start) +
                             " overlaps the memory slices of an earlier instance");
        memory_used |= mask;
        compute_used += prof->slices;
        if (compute_used > 7)
            return iat.error(*name + " needs more compute slices than the GPU has left");
        if (++counts[*name] > prof->max_count)
            return iat.error("at most " + std::to_string(prof->max_count) + " " + *name +
                             " instance(s) per GPU");
        GpuInstanceSpec gi;
        gi.profile = *name;
        gi.start = static_cast<unsigned>(*start);
        gi.gi = prof->gi_base + gi.start / prof->memory_slices;
        if (auto st = parse_compute_instances(inst, iat, *prof, gi); !st) return st;
        gpu.instances.push_back(std::move(gi));
    }
    std::sort(gpu.instances.begin(), gpu.instances.end(),
              [](const GpuInstanceSpec& a, const GpuInstanceSpec& b) { return a.gi < b.gi; });
    return ok_status();
}

Result<NvidiaGpuSpec> parse_gpu(const json& j, const SpecPath& at, const NodeSpec& spec) {
    if (auto st = check_keys(j, at, {"product", "name", "uuid", "pci_bus_id", "minor", "numa_node",
                                     "mig", "legacy_mig_uuids", "mig_index_holes", "instances",
                                     "switch"});
        !st)
        return st.error();
    NvidiaGpuSpec g;
    auto product_key = get_string(j, at, "product");
    if (!product_key) return product_key.error();
    const GpuProductSpec* product = find_gpu_product(*product_key);
    if (!product) {
        std::string known;
        for (const auto& p : gpu_products()) known += (known.empty() ? "" : ", ") + p.key;
        return at.child("product").error("unknown product '" + *product_key + "' (known: " +
                                          known + ")");
    }
    g.product = product->key;
    g.name = get_string_or(j, "name", product->name);
    if (g.name.empty() || g.name.size() >= 96) return at.child("name").error("expected 1..95 characters");
    auto uuid = get_string(j, at, "uuid");
    if (!uuid) return uuid.error();
    if (uuid->rfind("GPU-", 0) != 0 || uuid->size() != 40)
        return at.child("uuid").error("expected GPU-<36-character uuid>, got '" + *uuid + "'");
    g.uuid = *uuid;
    auto bdf = get_pci_bus_id(j, at, "pci_bus_id");
    if (!bdf) return bdf.error();
    g.pci_bus_id = *bdf;
    auto sw = get_switch(j, at, spec);
    if (!sw) return sw.error();
    g.switch_name = *sw;
    auto minor = get_uint(j, at, "minor");
    if (!minor) return minor.error();
    if (*minor > 31) return at.child("minor").error("expected 0..31, got " + std::to_string(*minor));
    g.minor = static_cast<unsigned>(*minor);
    auto numa = get_uint_or(j, at, "numa_node", static_cast<std::uint64_t>(spec.numa.front().node));
    if (!numa) return numa.error();
    bool known_numa = false;
    for (const auto& n : spec.numa) known_numa = known_numa || n.node == static_cast<int>(*numa);
    if (!known_numa) return at.child("numa_node").error("no NUMA node " + std::to_string(*numa));
    g.numa_node = static_cast<int>(*numa);
    auto mig_text = get_string_or(j, "mig", product->mig_capable ? "disabled" : "unsupported");
    if (auto it = j.find("mig"); it != j.end() && !it->is_string())
        return at.child("mig").error("expected a string, got " + it->dump());
    auto mig = parse_mig_state(mig_text, at.child("mig"));
    if (!mig) return mig.error();
    if ((*mig == MigState::Unsupported) == product->mig_capable)
        return at.child("mig").error(product->key + (product->mig_capable ? " is" : " is not") +
                                     " MIG-capable, got '" + mig_text + "'");
    g.mig = *mig;
    auto legacy = get_bool_or(j, at, "legacy_mig_uuids", false);
    if (!legacy) return legacy.error();
    g.legacy_mig_uuids = *legacy;
    if (auto it = j.find("mig_index_holes"); it != j.end()) {
        SpecPath hat = at.child("mig_index_holes");
        if (!it->is_array()) return hat.error("expected an array of MIG indices");
        for (const json& h : *it) {
            if (!h.is_number_unsigned() || h.get<std::uint64_t>() >= product->max_mig_devices)
                return hat.error("expected MIG indices below " +
                                 std::to_string(product->max_mig_devices) + ", got " + h.dump());
            g.mig_index_holes.push_back(h.get<unsigned>());
        }
    }
    if (auto it = j.find("instances"); it != j.end()) {
        if (g.mig != MigState::Enabled && g.mig != MigState::DisablePending)
            return at.child("instances").error("MIG instances need \"mig\": \"enabled\" (or "
                                               "\"disable-pending\"), got '" + mig_text + "'");
        if (auto st = parse_instances(*it, at.child("instances"), *product, g); !st)
            return st.error();
    }
    std::size_t devices = 0;
    for (const auto& gi : g.instances) devices += gi.compute_instances.size();
    std::set<unsigned> holes(g.mig_index_holes.begin(), g.mig_index_holes.end());
    if (devices + holes.size() > product->max_mig_devices)
        return at.error(std::to_string(devices) + " MIG devices and " +
                        std::to_string(holes.size()) + " index holes exceed the " +
                        std::to_string(product->max_mig_devices) + " MIG indices of " + product->key);
    return g;
}

}  // namespace

Status parse_nvidia_spec(const json& j, const SpecPath& at, NodeSpec& spec) {
    if (auto st = check_keys(j, at, {"driver_version", "frontend", "faults", "gpus"}); !st) return st;
    NvidiaSpec& nv = spec.nvidia;
    nv.driver_version = get_string_or(j, "driver_version", nv.driver_version);
    auto frontend = get_bool_or(j, at, "frontend", false);
    if (!frontend) return frontend.error();
    nv.frontend = *frontend;
    if (auto it = j.find("faults"); it != j.end())
        if (auto st = parse_faults(*it, at.child("faults"), nv.faults); !st) return st;
    auto gpus = j.find("gpus");
    if (gpus == j.end() || !gpus->is_array())
        return at.child("gpus").error("missing (an array of GPUs is required)");
    std::set<std::string> uuids, bdfs;
    std::set<unsigned> minors;
    for (std::size_t i = 0; i < gpus->size(); ++i) {
        SpecPath gat = at.child("gpus").item(i);
        auto g = parse_gpu((*gpus)[i], gat, spec);
        if (!g) return g.error();
        if (!bdfs.insert(g->pci_bus_id).second)
            return gat.child("pci_bus_id").error("'" + g->pci_bus_id + "' used twice");
        if (!minors.insert(g->minor).second)
            return gat.child("minor").error(std::to_string(g->minor) + " used twice");
        if (!uuids.insert(g->uuid).second) return gat.child("uuid").error("'" + g->uuid + "' used twice");
        for (const auto& gi : g->instances)
            for (const auto& ci : gi.compute_instances)
                if (ci.uuid.rfind("MIG-", 0) != 0 || ci.uuid.size() != 40 || !uuids.insert(ci.uuid).second)
                    return gat.child("instances").error("MIG UUID '" + ci.uuid +
                                                        "' is malformed or used twice");
        nv.gpus.push_back(std::move(*g));
    }
    return ok_status();
}

}  // namespace xpart::sim
