#include "libxpart/reshape/mig_reshape.hpp"

#include <algorithm>

#include "libxpart/nvidia/nvidia_cap_nodes.hpp"
#include "libxpart/reshape/reshape_engine.hpp"

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

// The MIG steps of the reshape engine. Apply reads back what the driver made, so a driver
// that made something else fails apply ("reshape to ... failed"), not verify.
class MigSteps final : public ReshapeVendor {
public:
    MigSteps(const nvml::NvmlSession& session, const nvml::MigControl& control, unsigned gpu,
             const std::vector<std::string>& target, const DiscoveryOptions& discovery)
        : session_(session), control_(control), gpu_(gpu), target_(target), discovery_(discovery) {}

    Result<ReshapeDecision> plan() override {
        auto planned = plan_reshape(session_, control_, gpu_, target_);
        if (!planned) return planned.error();
        plan_ = std::move(*planned);
        const GpuGeometry& now = plan_.now;
        const std::string to = format_mig_geometry(target_, now.profiles);
        ReshapeDecision d{"", plan_.already,
                          {where(gpu_), to, "reshaped to " + to, geometry_text(now.profile_names(), now.profiles),
                           "the previous geometry (" + describe(mig_slots(now)) + ")"}};
        if (!plan_.misfit.empty())
            d.refused = where(gpu_) + ": " + plan_.misfit;
        else if (!plan_.in_use.empty())
            d.refused = where(gpu_) + ": " + plan_.in_use + ": not reshaped (NVML_ERROR_IN_USE)";
        return d;
    }

    StepResult apply() override {
        auto dev = session_.device(gpu_);
        if (!dev) return StepResult::refused(dev.error().message);
        Status step = tear_down(control_, *dev, plan_.now.profiles);
        if (step) step = build(control_, *dev, plan_.now.profiles, plan_.target);
        if (!step) return StepResult::failed(step.error().message);
        // What the driver made; not knowing it is a failure like any other (the old geometry
        // goes back).
        auto after = read_gpu_geometry(session_, control_, gpu_);
        if (!after) return StepResult::failed(after.error().message);
        const std::vector<MigSlot> made = mig_slots(*after);
        if (by_start(made) != by_start(plan_.target))
            return StepResult::failed("the driver made " + describe(made) + ", not " + describe(plan_.target));
        return StepResult::done();
    }

    StepResult verify() override {
        auto seen = discovered_gpu(discovery_, plan_.now.uuid);
        if (!seen) return StepResult::failed(seen.error().message);
        std::vector<std::string> want = target_;
        std::sort(want.begin(), want.end());
        const std::vector<std::string> got = partition_types(*seen);
        if (want != got)
            return StepResult::failed("discovery shows " +
                                      (got.empty() ? "no partition" : format_mig_geometry(got, plan_.now.profiles)));
        auto made = make_missing_cap_nodes(discovery_.root, *seen);
        if (!made) return StepResult::failed(made.error().message);
        partitions_ = got.size();
        nodes_made_ = *made;
        return StepResult::done();
    }

    Status put_back() override { return xpart::put_back(session_, control_, plan_.now); }

    VerifiedReshape outcome(const ReshapeRun& run) const {
        const GpuGeometry& now = plan_.now;
        return {geometry_text(now.profile_names(), now.profiles), format_mig_geometry(target_, now.profiles),
                run.changed, partitions_, nodes_made_};
    }

private:
    const nvml::NvmlSession& session_;
    const nvml::MigControl& control_;
    const unsigned gpu_;
    const std::vector<std::string>& target_;
    const DiscoveryOptions& discovery_;
    MigReshapePlan plan_;
    std::size_t partitions_ = 0;
    unsigned nodes_made_ = 0;
};

}  // namespace

Result<VerifiedReshape> reshape_and_verify(const nvml::NvmlSession& session, const nvml::MigControl& control,
                                           unsigned gpu, const std::vector<std::string>& target,
                                           const DiscoveryOptions& discovery) {
    MigSteps steps(session, control, gpu, target, discovery);
    auto run = run_reshape_steps(steps);
    if (!run) return run.error();
    return steps.outcome(*run);
}

}  // namespace xpart
