#include "libxpart/reshape/amd_reshape.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "libxpart/amd/amd_kfd.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/reshape/reshape_engine.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

std::string mode_word(PartitionMode mode) { return to_upper(to_string(mode)); }

unsigned nps_count(const std::string& memory_mode) {
    auto n = memory_mode.size() > 3 ? parse_u64(std::string_view(memory_mode).substr(3)) : std::nullopt;
    return n && *n > 0 ? static_cast<unsigned>(*n) : 1;
}

// "SPX, DPX, QPX, CPX" -> the words, upper-case.
std::vector<std::string> word_list(const std::string& text) {
    std::vector<std::string> out;
    for (const auto& w : split(trim(text), ','))
        if (!trim(w).empty()) out.push_back(to_upper(trim(w)));
    return out;
}

// A sysfs attribute write: amdgpu does the work inside write(2) and answers with its errno.
Status write_attribute(const RootFs& root, const std::string& node_path, const std::string& value) {
    const std::string host = root.host_path(node_path);
    const int fd = ::open(host.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return Error{host + ": " + std::strerror(errno)};
    const std::string text = value + "\n";
    const ssize_t n = ::write(fd, text.data(), text.size());
    const int err = n < 0 ? errno : 0;
    if (::close(fd) != 0 && n >= 0) return Error{host + ": " + std::strerror(errno)};
    if (n < 0) {
        errno = err;
        return Error{host + ": " + std::strerror(err) + (err == EBUSY ? " (EBUSY)" : err == EINVAL ? " (EINVAL)" : "")};
    }
    return ok_status();
}

const Gpu* find_gpu(const Node& node, const std::string& pci_bus_id) {
    for (const auto& g : node.gpus)
        if (g.vendor == Vendor::Amd && g.pci_bus_id == pci_bus_id) return &g;
    return nullptr;
}

struct Seen {
    std::string generation;  // KFD's topology generation_id, read before the rest
    Result<Node> node = Error{"not read"};
    const Gpu* gpu = nullptr;
    bool complete = false;  // every partition of its mode is there, nothing missing
    std::string describe(const std::string& pci_bus_id) const;
};

// KFD bumps generation_id once it has rebuilt the topology (a mode switch does), so a
// generation that changed since the write, read before discovery, means discovery sees the
// whole new topology, not one half re-made.
Seen look(const DiscoveryOptions& options, const std::string& pci_bus_id) {
    Seen s;
    auto generation = options.root.read(std::string(kKfdTopology) + "/generation_id");
    s.generation = generation ? trim(*generation) : "";
    s.node = discover(options);
    if (!s.node) return s;
    s.gpu = find_gpu(*s.node, pci_bus_id);
    if (!s.gpu) return s;
    const AmdModel* model = find_amd_model(s.gpu->model);
    const bool warned = std::any_of(s.node->warnings.begin(), s.node->warnings.end(),
                                    [&](const std::string& w) { return w.find(pci_bus_id) != std::string::npos; });
    s.complete = model && !warned && s.gpu->partitions.size() == amd_mode_partition_count(s.gpu->mode, *model);
    return s;
}

std::string Seen::describe(const std::string& pci_bus_id) const {
    if (!node) return "discovery failed (" + node.error().message + ")";
    if (!gpu) return "discovery shows no AMD GPU at " + pci_bus_id;
    return mode_word(gpu->mode) + " with " + std::to_string(gpu->partitions.size()) + " partition" +
           (gpu->partitions.size() == 1 ? "" : "s") + (complete ? "" : " (incomplete)");
}

// Polls discovery until `done` holds or `settle` passes; the last look either way.
template <class Done>
Seen wait_for(const DiscoveryOptions& options, const std::string& pci_bus_id,
              std::chrono::milliseconds settle, Done done) {
    const auto deadline = std::chrono::steady_clock::now() + settle;
    for (;;) {
        Seen s = look(options, pci_bus_id);
        if (done(s) || std::chrono::steady_clock::now() >= deadline) return s;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

Result<std::vector<std::uint64_t>> gpu_ids_of(const RootFs& root, const Gpu& gpu) {
    std::vector<std::uint64_t> ids;
    for (const auto& p : gpu.partitions) {
        const std::string path = std::string(kKfdTopology) + "/nodes/" + std::to_string(p.kfd_node) + "/gpu_id";
        auto text = root.read(path);
        if (!text) return text.error();
        auto id = parse_u64(trim(*text));
        if (!id) return Error{root.host_path(path) + ": expected a number, got '" + trim(*text) + "'"};
        ids.push_back(*id);
    }
    return ids;
}

Status refuse_if_held(const RootFs& root, const Gpu& gpu, const std::string& label) {
    auto ids = gpu_ids_of(root, gpu);
    if (!ids) return ids.error();
    auto holders = amd_kfd_holders(root, *ids);
    if (!holders) return holders.error();
    if (holders->empty()) return ok_status();
    std::string pids;
    for (unsigned pid : *holders) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    return Error{label + ": " + std::to_string(holders->size()) + " KFD process" +
                 (holders->size() == 1 ? " holds" : "es hold") + " it (pid " + pids + "): not reshaped (EBUSY)"};
}

}  // namespace

std::string AmdTarget::text() const { return mode_word(mode) + (memory_mode.empty() ? "" : "." + memory_mode); }

Result<std::optional<AmdTarget>> parse_amd_target(const std::string& text) {
    std::optional<PartitionMode> mode;
    std::string memory, unknown;
    for (const auto& raw : split(trim(text), '.')) {
        const std::string word = to_upper(trim(raw));
        if (auto m = parse_amd_compute_partition(word)) {
            if (mode) return Error{"'" + text + "' names two compute partition modes"};
            mode = *m;
        } else if (auto nps = parse_amd_memory_partition(word)) {
            memory = *nps;
        } else if (!find_amd_model(word) && unknown.empty()) {
            unknown = raw;
        }
    }
    if (!mode) return std::optional<AmdTarget>();
    if (!unknown.empty())
        return Error{"'" + text + "': '" + unknown + "' is neither a compute partition mode (SPX, DPX, TPX, QPX, CPX), "
                     "a memory partition (NPS1..NPS8) nor an AMD model"};
    return std::optional<AmdTarget>(AmdTarget{*mode, memory});
}

bool amd_mode_fits_memory(PartitionMode mode, const AmdModel& model, const std::string& memory_mode) {
    return amd_mode_partition_count(mode, model) % nps_count(memory_mode) == 0;
}

Result<std::vector<unsigned>> amd_kfd_holders(const RootFs& root, const std::vector<std::uint64_t>& gpu_ids) {
    const std::string dir = "/sys/class/kfd/kfd/proc";
    std::vector<unsigned> out;
    if (!root.exists(dir)) return out;
    auto pids = root.list(dir);
    if (!pids) return pids.error();
    for (const auto& name : *pids) {
        auto pid = parse_u64(name);
        if (!pid) continue;
        for (std::uint64_t id : gpu_ids)
            if (root.exists(dir + "/" + name + "/vram_" + std::to_string(id))) {
                out.push_back(static_cast<unsigned>(*pid));
                break;
            }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Result<std::vector<AmdModeOption>> amd_mode_options(const RootFs& root, const Gpu& gpu) {
    const AmdModel* model = find_amd_model(gpu.model);
    const std::string label = "GPU " + gpu.pci_bus_id;
    if (!model || !model->partitionable) return Error{label + " (" + gpu.model + ") has no compute partitions"};
    const std::string pci_dir = "/sys/bus/pci/devices/" + gpu.pci_bus_id;
    auto modes = root.read(pci_dir + "/available_compute_partition");
    if (!modes) return Error{label + ": cannot switch compute partitions (" + modes.error().message + ")"};
    std::vector<std::string> memories{gpu.memory_mode};
    if (auto offered = root.read(pci_dir + "/available_memory_partition"))
        for (const auto& nps : word_list(*offered))
            if (nps != gpu.memory_mode) memories.push_back(nps);
    std::vector<AmdModeOption> out;
    for (const auto& memory : memories)
        for (const auto& word : word_list(*modes)) {
            auto mode = parse_amd_compute_partition(word);
            if (!mode || !amd_mode_fits_memory(*mode, *model, memory)) continue;
            out.push_back({{*mode, memory}, amd_mode_partition_count(*mode, *model), memory != gpu.memory_mode});
        }
    return out;
}

namespace {

DiscoveryOptions amd_only(const DiscoveryOptions& discovery) {
    DiscoveryOptions o = discovery;
    o.nvidia = false;
    o.amd = true;
    o.rdma_nics = false;
    return o;
}

// plan_amd_reshape on what discovery showed (`now`).
Result<AmdReshapePlan> plan_from(const DiscoveryOptions& o, const Seen& now, const std::string& pci_bus_id,
                                 const AmdTarget& target, const AmdReshapeOptions& options) {
    const RootFs& root = o.root;
    const std::string label = "GPU " + pci_bus_id;
    const std::string want = mode_word(target.mode);
    if (!now.node) return now.node.error();
    if (!now.gpu) return Error{label + ": " + now.describe(pci_bus_id)};
    AmdReshapePlan plan;
    plan.gpu = *now.gpu;
    const Gpu& gpu = plan.gpu;
    const AmdModel* model = find_amd_model(gpu.model);
    if (!model || !model->partitionable) return Error{label + " (" + gpu.model + ") has no compute partitions"};
    plan.xccs = model->total_xcc;
    plan.partitions = amd_mode_partition_count(target.mode, *model);
    const std::string pci_dir = "/sys/bus/pci/devices/" + pci_bus_id;
    if (!root.exists(pci_dir + "/current_compute_partition"))
        return Error{label + ": no " + root.host_path(pci_dir + "/current_compute_partition") +
                     ": this kernel cannot switch compute partitions"};
    auto available = root.read(pci_dir + "/available_compute_partition");
    if (!available) return available.error();
    const auto modes = word_list(*available);
    if (std::find(modes.begin(), modes.end(), want) == modes.end()) {
        plan.refused = label + ": " + want + " is not one of the modes amdgpu offers (" + trim(*available) + "): not reshaped";
        return plan;
    }
    // The memory partition the target needs: the one asked for, else the GPU's own if it
    // serves, else the first the driver offers that does.
    std::string memory = target.memory_mode;
    if (memory.empty() && !amd_mode_fits_memory(target.mode, *model, gpu.memory_mode)) {
        auto offered = root.read(pci_dir + "/available_memory_partition");
        for (const auto& nps : offered ? word_list(*offered) : std::vector<std::string>())
            if (amd_mode_fits_memory(target.mode, *model, nps)) {
                memory = nps;
                break;
            }
        if (memory.empty()) {
            plan.refused = label + ": no memory partition of it serves " + want + ": not reshaped";
            return plan;
        }
    } else if (!amd_mode_fits_memory(target.mode, *model, memory)) {
        plan.refused = label + ": " + want + " does not fit in " + memory + " (each partition lies in one of its " +
                       std::to_string(nps_count(memory)) + " memory partitions): not reshaped";
        return plan;
    }
    plan.memory = memory.empty() ? gpu.memory_mode : memory;
    plan.reboot_class = !memory.empty() && memory != gpu.memory_mode;
    if (plan.reboot_class && !options.allow_reboot_class) {
        plan.refused = label + ": " + want + " needs " + memory + ", the GPU is in " +
                       (gpu.memory_mode.empty() ? std::string("an unknown memory partition") : gpu.memory_mode) +
                       ": a memory partition change takes effect only when amdgpu loads again (reboot class): "
                       "not reshaped";
        return plan;
    }
    plan.already = !plan.reboot_class && gpu.mode == target.mode && now.complete;
    if (plan.already) return plan;
    if (auto st = refuse_if_held(root, gpu, label); !st) plan.refused = st.error().message;
    return plan;
}

}  // namespace

Result<AmdReshapePlan> plan_amd_reshape(const DiscoveryOptions& discovery, const std::string& pci_bus_id,
                                        const AmdTarget& target, const AmdReshapeOptions& options) {
    const DiscoveryOptions o = amd_only(discovery);
    return plan_from(o, look(o, pci_bus_id), pci_bus_id, target, options);
}

namespace {

// The AMD steps of the reshape engine. A write amdgpu refuses, or a switch it does not make
// (the old mode kept), leaves the GPU as it was: nothing to put back. A reboot-class change
// only writes the memory partition, which amdgpu applies when it loads again: nothing to verify
// until then.
class AmdSteps final : public ReshapeVendor {
public:
    AmdSteps(const DiscoveryOptions& discovery, const std::string& pci_bus_id, const AmdTarget& target,
             const AmdReshapeOptions& options)
        : o_(amd_only(discovery)), pci_(pci_bus_id), target_(target), options_(options), label_("GPU " + pci_bus_id),
          want_(mode_word(target.mode)), pci_dir_("/sys/bus/pci/devices/" + pci_bus_id) {}

    Result<ReshapeDecision> plan() override {
        const Seen now = look(o_, pci_);
        generation_ = now.generation;
        auto planned = plan_from(o_, now, pci_, target_, options_);
        if (!planned) return planned.error();
        plan_ = std::move(*planned);
        const std::string old = mode_word(plan_.gpu.mode);
        return ReshapeDecision{plan_.refused, plan_.already,
                               {label_, want_, "wrote " + want_, old, "the previous mode (" + old + ")"}};
    }

    StepResult apply() override {
        if (plan_.reboot_class) {
            if (auto st = write_attribute(o_.root, pci_dir_ + "/current_memory_partition", plan_.memory); !st)
                return StepResult::refused(label_ + ": " + plan_.memory + ": " + st.error().message +
                                             ": not changed");
            return StepResult::done();
        }
        if (auto st = write_attribute(o_.root, pci_dir_ + "/current_compute_partition", want_); !st)
            return StepResult::refused(label_ + ": amdgpu refused " + want_ + ": " + st.error().message +
                                         ": not reshaped");
        return StepResult::done();
    }

    StepResult verify() override {
        // Already: the plan's look at discovery showed the mode, every partition there.
        if (plan_.already || plan_.reboot_class) return StepResult::done();
        // The driver keeping the old mode (a switch it refused after the write) ends the wait too.
        const Seen after = wait_for(o_, pci_, options_.settle, [&](const Seen& s) { return switched(s) || kept(s); });
        if (switched(after)) {
            partitions_ = after.gpu->partitions.size();
            return StepResult::done();
        }
        if (kept(after))
            return StepResult::refused(label_ + ": amdgpu did not switch to " + want_ + " (it shows " +
                                         after.describe(pci_) + "): not reshaped");
        return StepResult::failed("discovery shows " + after.describe(pci_));
    }

    Status put_back() override {
        if (auto st = write_attribute(o_.root, pci_dir_ + "/current_compute_partition", mode_word(plan_.gpu.mode)); !st)
            return st;
        const Seen back = wait_for(o_, pci_, options_.settle, [&](const Seen& s) { return kept(s); });
        if (!kept(back)) return Error{"discovery shows " + back.describe(pci_)};
        return ok_status();
    }

    AmdReshapeOutcome outcome(const ReshapeRun& run) const {
        const Gpu& gpu = plan_.gpu;
        AmdReshapeOutcome out;
        out.before = gpu.mode;
        out.memory_before = gpu.memory_mode;
        // A reboot-class change leaves the mode as it is until amdgpu loads again.
        out.changed = run.changed && !plan_.reboot_class;
        out.after = out.changed ? target_.mode : gpu.mode;
        out.partitions = out.changed ? partitions_ : gpu.partitions.size();
        out.reboot_needed = plan_.reboot_class;
        if (plan_.reboot_class) out.memory_after = plan_.memory;
        return out;
    }

private:
    bool switched(const Seen& s) const {
        return s.gpu && s.complete && s.gpu->mode == target_.mode &&
               (generation_.empty() || s.generation != generation_);  // "": a kernel without it
    }
    bool kept(const Seen& s) const { return s.gpu && s.complete && s.gpu->mode == plan_.gpu.mode; }

    const DiscoveryOptions o_;
    const std::string pci_;
    const AmdTarget target_;
    const AmdReshapeOptions options_;
    const std::string label_, want_, pci_dir_;
    std::string generation_;  // KFD's, before the write
    AmdReshapePlan plan_;
    std::size_t partitions_ = 0;  // discovery's, after the switch
};

}  // namespace

Result<AmdReshapeOutcome> reshape_amd_gpu(const DiscoveryOptions& discovery, const std::string& pci_bus_id,
                                          const AmdTarget& target, const AmdReshapeOptions& options) {
    AmdSteps steps(discovery, pci_bus_id, target, options);
    auto run = run_reshape_steps(steps);
    if (!run) return run.error();
    return steps.outcome(*run);
}

}  // namespace xpart
