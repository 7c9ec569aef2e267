#include "libxpart/reshape/mig_reshape.hpp"

#include <algorithm>

#include "libxpart/nvidia/nvidia_cap_nodes.hpp"

namespace xpart {

namespace {

const nvml::GiProfile* by_id(const std::vector<nvml::GiProfile>& profiles, unsigned id) {
    for (const auto& p : profiles)
        if (p.id == id) return &p;
    return nullptr;
}

const nvml::GiProfile* by_name(const std::vector<nvml::GiProfile>& profiles, const std::string& n) {
    for (const auto& p : profiles)
        if (p.name == n) return &p;
    return nullptr;
}

std::string where(unsigned gpu) { return "GPU " + std::to_string(gpu); }

std::vector<MigSlot> by_start(std::vector<MigSlot> v) {
    std::sort(v.begin(), v.end(), [](const MigSlot& a, const MigSlot& b) { return a.start < b.start; });
    return v;
}

// Destroys every compute and GPU instance; the first failure stops it.
Status tear_down(const nvml::MigControl& control, const nvml::DeviceRef& dev,
                 const std::vector<nvml::GiProfile>& profiles) {
    auto gis = control.gpu_instances(dev, profiles);
    if (!gis) return gis.error();
    for (const auto& gi : *gis) {
        for (const auto& ci : gi.compute_instances)
            if (auto st = control.destroy_compute_instance(dev, ci.handle); !st) return st;
        if (auto st = control.destroy_gpu_instance(dev, gi.handle); !st) return st;
    }
    return ok_status();
}

// Creates the slots' GPU instances; each gets the compute instances `split` lists for it (CI
// profile ids), or one spanning it.
Status build(const nvml::MigControl& control, const nvml::DeviceRef& dev,
             const std::vector<nvml::GiProfile>& profiles, const std::vector<MigSlot>& slots,
             const std::vector<std::vector<unsigned>>& split = {}) {
    for (std::size_t k = 0; k < slots.size(); ++k) {
        const MigSlot& s = slots[k];
        const nvml::GiProfile* p = by_name(profiles, s.profile);
        if (!p) return Error{"'" + s.profile + "' is not a profile of this GPU"};
        auto gi = control.create_gpu_instance(dev, *p, s.start);
        if (!gi) return gi.error();
        if (k >= split.size() || split[k].empty()) {
            if (auto st = control.create_full_compute_instance(dev, *gi); !st) return st;
            continue;
        }
        for (unsigned ci_profile : split[k])
            if (auto st = control.create_compute_instance(dev, *gi, ci_profile); !st) return st;
    }
    return ok_status();
}

std::string describe(const std::vector<MigSlot>& slots) {
    std::string out;
    for (const auto& s : slots) out += (out.empty() ? "" : " ") + s.profile + "@" + std::to_string(s.start);
    return out.empty() ? "no instance" : out;
}

}  // namespace

std::vector<std::string> GpuGeometry::profile_names() const {
    std::vector<std::string> out;
    for (const auto& i : instances) out.push_back(i.profile);
    return out;
}

std::vector<MigSlot> mig_slots(const GpuGeometry& g) {
    std::vector<MigSlot> out;
    for (const auto& i : g.instances) out.push_back({i.profile, i.start});
    return out;
}

Result<GpuGeometry> read_gpu_geometry(const nvml::NvmlSession& session,
                                      const nvml::MigControl& control, unsigned gpu) {
    auto dev = session.device(gpu);
    if (!dev) return dev.error();
    GpuGeometry g;
    g.gpu = gpu;
    auto name = session.name(*dev);
    if (!name) return name.error();
    g.name = *name;
    auto uuid = session.uuid(*dev);
    if (!uuid) return uuid.error();
    g.uuid = *uuid;
    auto mode = session.mig_mode(*dev);
    if (!mode) return mode.error();
    g.mig_capable = mode->has_value();
    g.mig_on = g.mig_capable && (*mode)->current == nvml::kMigEnable;
    if (!g.mig_on) return g;
    auto profiles = control.profiles(*dev);
    if (!profiles) return profiles.error();
    g.profiles = std::move(*profiles);
    auto gis = control.gpu_instances(*dev, g.profiles);
    if (!gis) return gis.error();
    for (const auto& gi : *gis) {
        const nvml::GiProfile* p = by_id(g.profiles, gi.profile_id);
        MigInstanceNow inst{gi.id, p ? p->name : "profile " + std::to_string(gi.profile_id),
                            gi.placement.start, static_cast<unsigned>(gi.compute_instances.size()), {}, {}};
        for (const auto& ci : gi.compute_instances) {
            inst.ci_profiles.push_back(ci.profile_id);
            inst.ci_slices.push_back(ci.slices);
        }
        g.instances.push_back(std::move(inst));
    }
    return g;
}

Status put_back(const nvml::NvmlSession& session, const nvml::MigControl& control,
                const GpuGeometry& before) {
    auto dev = session.device(before.gpu);
    if (!dev) return dev.error();
    std::vector<std::vector<unsigned>> split;
    for (const auto& i : before.instances) split.push_back(i.ci_profiles);
    if (auto st = tear_down(control, *dev, before.profiles); !st) return st;
    return build(control, *dev, before.profiles, mig_slots(before), split);
}

Result<MigReshapePlan> plan_reshape(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                    unsigned gpu, const std::vector<std::string>& target) {
    auto now = read_gpu_geometry(session, control, gpu);
    if (!now) return now.error();
    return plan_reshape(session, control, gpu, std::move(*now), target);
}

Result<MigReshapePlan> plan_reshape(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                    unsigned gpu, GpuGeometry now, const std::vector<std::string>& target) {
    if (!now.mig_capable) return Error{where(gpu) + " (" + now.name + ") is not MIG-capable"};
    if (!now.mig_on)
        return Error{where(gpu) + ": MIG mode is off; turning it on resets the GPU (as root: "
                     "nvidia-smi -i " + std::to_string(gpu) + " -mig 1, then reshape)"};
    MigReshapePlan plan;
    plan.now = std::move(now);
    auto placed = plan_mig_geometry(plan.now.profiles, target);
    if (!placed) {
        plan.misfit = placed.error().message;
        plan.partial = place_what_fits(plan.now.profiles, target);
        return plan;
    }
    plan.target = std::move(*placed);
    // Same instances at the same places, each with one compute instance: nothing to do.
    const auto& profiles = plan.now.profiles;
    const bool whole = std::all_of(plan.now.instances.begin(), plan.now.instances.end(), [&](const MigInstanceNow& i) {
        const nvml::GiProfile* p = by_name(profiles, i.profile);
        return p && i.ci_slices == std::vector<unsigned>{p->slices};
    });
    plan.already = whole && by_start(mig_slots(plan.now)) == by_start(plan.target);
    if (plan.already) return plan;
    auto dev = session.device(gpu);
    if (!dev) return dev.error();
    auto procs = control.processes(*dev);
    if (!procs) return procs.error();
    if (!procs->empty()) {
        std::string list;
        for (const auto& p : *procs)
            list += (list.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) +
                    " in GPU instance " + std::to_string(p.gpuInstanceId);
        plan.in_use = std::to_string(procs->size()) + " process" + (procs->size() == 1 ? " runs" : "es run") +
                      " on it (" + list + ")";
    }
    return plan;
}

Result<ReshapeOutcome> reshape_gpu(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                   unsigned gpu, const std::vector<std::string>& target) {
    auto planned = plan_reshape(session, control, gpu, target);
    if (!planned) return planned.error();
    if (!planned->misfit.empty()) return Error{where(gpu) + ": " + planned->misfit};
    const GpuGeometry& now = planned->now;
    const std::vector<MigSlot>& plan = planned->target;
    ReshapeOutcome out;
    out.before = mig_slots(now);
    if (planned->already) {
        out.after = out.before;
        return out;
    }
    if (!planned->in_use.empty())
        return Error{where(gpu) + ": " + planned->in_use + ": not reshaped (NVML_ERROR_IN_USE)"};
    auto dev = session.device(gpu);
    if (!dev) return dev.error();
    Status step = tear_down(control, *dev, now.profiles);
    if (step) step = build(control, *dev, now.profiles, plan);
    if (step) {
        // What the driver made; not knowing it is a failure like any other (the old geometry
        // goes back).
        auto after = read_gpu_geometry(session, control, gpu);
        if (!after) {
            step = after.error();
        } else {
            out.after = mig_slots(*after);
            if (by_start(out.after) == by_start(plan)) {
                out.changed = true;
                return out;
            }
            step = Error{"the driver made " + describe(out.after) + ", not " + describe(plan)};
        }
    }
    // Put back what was there: the node's last good geometry.
    Status back = put_back(session, control, now);
    return Error{where(gpu) + ": reshape to " + format_mig_geometry(target, now.profiles) +
                 " failed: " + step.error().message +
                 (back ? "; the previous geometry (" + describe(out.before) + ") is back"
                       : "; restoring the previous geometry (" + describe(out.before) +
                             ") failed too: " + back.error().message)};
}

namespace {

// The GPU `uuid` as discovery (and so slurmd) sees it.
Result<Gpu> discovered_gpu(const DiscoveryOptions& discovery, const std::string& uuid) {
    DiscoveryOptions options = discovery;
    options.amd = false;
    options.rdma_nics = false;
    auto node = discover(options);
    if (!node) return node.error();
    for (const auto& gpu : node->gpus)
        if (gpu.uuid == uuid) return gpu;
    return Error{"discovery does not show " + uuid};
}

std::string geometry_text(const std::vector<std::string>& names, const std::vector<nvml::GiProfile>& profiles) {
    return names.empty() ? "none" : format_mig_geometry(names, profiles);
}

}  // namespace

Result<VerifiedReshape> reshape_and_verify(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                           unsigned gpu, const std::vector<std::string>& target,
                                           const DiscoveryOptions& discovery) {
    auto before = read_gpu_geometry(session, control, gpu);
    if (!before) return before.error();
    auto out = reshape_gpu(session, control, gpu, target);
    if (!out) return out.error();
    VerifiedReshape done;
    done.from = geometry_text(before->profile_names(), before->profiles);
    done.to = format_mig_geometry(target, before->profiles);
    done.changed = out->changed;
    auto seen = discovered_gpu(discovery, before->uuid);
    std::vector<std::string> want = target;
    std::sort(want.begin(), want.end());
    const std::vector<std::string> got = seen ? partition_types(*seen) : std::vector<std::string>();
    Result<unsigned> made = 0u;
    if (seen && want == got) made = make_missing_cap_nodes(discovery.root, *seen);
    if (seen && want == got && made) {
        done.partitions = got.size();
        done.nodes_made = *made;
        return done;
    }
    const std::string why = !seen ? seen.error().message
                            : want != got ? "discovery shows " + (got.empty() ? std::string("no partition")
                                                                              : format_mig_geometry(got, before->profiles))
                                          : made.error().message;
    const Status undo = put_back(session, control, *before);
    return Error{where(gpu) + ": reshaped to " + done.to + " but " + why +
                 (undo ? "; put back " + done.from : "; putting back " + done.from + " failed: " + undo.error().message)};
}

}  // namespace xpart
