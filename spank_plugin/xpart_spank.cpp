// xpart.so, the SPANK plugin's front: per-task binding, confinement and MPS from inside
// slurmstepd, where Slurm runs plugins as root before it drops to the user. Every srun,
// sbatch, salloc and slurmstepd of every job loads it, so it holds only what each of them
// needs: the options (checked where given), the site's defaults, and every step's v1 cgroup
// take-back. The step's work (plan, confinement, environment, MPS) is xpart_spank_step.so
// (spank_plugin/step_module.h), loaded for a step xpart acts on and for the job's Epilog.
// No exception leaves an entry point; every failure fails the step (fail closed) except at
// the end, where it is logged.
//
// Where each part runs (Slurm 22.05 to 26.05 slurmstepd, see spank(8)):
//   slurm_spank_init            every context: options; site defaults from plugstack.conf
//   slurm_spank_init_post_opt   remote, root, before the tasks fork: whether xpart acts on
//                               the step; then the module's plan and MPS daemons
//   slurm_spank_task_post_fork  remote, root, task in its cgroups, not yet exec'd: the
//                               step's v1 cgroups root's (every step); the module confines
//   slurm_spank_task_init       remote, in the task as the user, after gres/gpu: environment
//   slurm_spank_task_exit       remote, root: the task's cgroup
//   slurm_spank_exit            remote, root, at the step's end: what is left, MPS daemons
//   slurm_spank_job_epilog      Epilog, root: the job's MPS daemons and directory
// spank.h declares the entry points before its own extern "C" block.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cgroup/slurm_step_reclaim.hpp"
#include "libxpart/c_boundary.hpp"
#include "spank_plugin/step_module_load.hpp"
#include "spank_plugin/step_options.hpp"

// The build hides every symbol (-fvisibility=hidden); these are what Slurm's loader looks up.
#define XPART_EXPORT __attribute__((visibility("default")))
extern "C" {
XPART_EXPORT extern const char plugin_name[];
XPART_EXPORT extern const char plugin_type[];
XPART_EXPORT extern const unsigned int plugin_version;
XPART_EXPORT extern const unsigned int spank_plugin_version;
SPANK_PLUGIN(xpart, 1)
}

namespace {

using namespace xpart;
using namespace xpart::spank;

std::optional<StepOptions> g_options;      // site defaults, then the user's options
std::vector<std::string> g_user_options;   // "name=value" as given, applied after the site's
const xpart_step_module* g_module = nullptr;  // remote context: set for a step xpart acts on

int remember(int val, const char* optarg, int remote);

// has_arg 2: the value is optional (--xpart-confine alone means yes).
struct spank_option g_spank_options[] = {
    {const_cast<char*>("xpart-bind"), const_cast<char*>("rank|closest|none"),
     const_cast<char*>("xpart: give each task its own GPU partition (closest: near its CPUs)"),
     1, 0, remember},
    {const_cast<char*>("xpart-confine"), const_cast<char*>("[yes|no]"),
     const_cast<char*>("xpart: each task can open only its own partition's device files"),
     2, 1, remember},
    {const_cast<char*>("xpart-mps"), const_cast<char*>("[yes|no]"),
     const_cast<char*>("xpart: one CUDA MPS control daemon per MIG GPU instance of the step"),
     2, 2, remember},
    {const_cast<char*>("xpart-nic"), const_cast<char*>("closest|closest-override|none"),
     const_cast<char*>("xpart: each task's nearest RDMA NIC in NCCL_IB_HCA and UCX_NET_DEVICES"),
     1, 3, remember},
    SPANK_OPTIONS_TABLE_END};

// Checked at once, so srun/sbatch refuse a bad value before anything is allocated; applied
// over the site's defaults once all are known (init_post_opt).
int remember(int val, const char* optarg, int) {
    if (val < 0 || val > 3) return -1;
    const std::string name = g_spank_options[val].name, value = optarg ? optarg : "";
    StepOptions scratch;
    if (auto s = apply_user_option(scratch, name, value); !s) {
        slurm_error("xpart: %s", s.error().message.c_str());
        return -1;
    }
    g_user_options.push_back(name + "=" + value);
    return 0;
}

// Every entry point's body: -1 (and one "xpart: " line) for an exception.
template <class F>
int guarded(const char* where, F&& body) {
    return xpart::run_guarded(where, std::forward<F>(body), -1,
                          [](const char* line) { slurm_error("xpart: %s", line); });
}

// Site defaults, then the user's options over them; one line on error.
int effective_options() {
    if (!g_options) return -1;
    for (const auto& o : g_user_options) {
        const auto eq = o.find('=');
        if (auto s = apply_user_option(*g_options, o.substr(0, eq), o.substr(eq + 1)); !s) {
            slurm_error("xpart: %s", s.error().message.c_str());
            return -1;
        }
    }
    return 0;
}

template <class T>
bool item(spank_t sp, spank_item_t what, T& out) {
    return spank_get_item(sp, what, &out) == ESPANK_SUCCESS;
}

bool is_task_step(uint32_t step) {
    return step != SLURM_BATCH_SCRIPT && step != SLURM_EXTERN_CONT && step != SLURM_INTERACTIVE_STEP;
}

const xpart_step_module* load_module() {
    auto m = xpart::spank::step_module();
    if (!m) {
        slurm_error("xpart: %s", m.error().message.c_str());
        return nullptr;
    }
    return *m;
}

// The one decision of the front: a task step whose effective options bind (StepOptions::
// active) gets the module; every other step, and every process that is not a step, never
// loads it.
int begin_step(spank_t sp, int ac, char** av) {
    if (effective_options() != 0) return -1;
    uint32_t step = 0;
    if (!item(sp, S_JOB_STEPID, step)) {
        slurm_error("xpart: cannot read the step's identity from slurmstepd");
        return -1;
    }
    if (!is_task_step(step) || !g_options->active()) return 0;
    const xpart_step_module* module = load_module();
    if (!module) return -1;
    std::vector<const char*> user;
    for (const auto& o : g_user_options) user.push_back(o.c_str());
    if (module->init_post_opt(sp, ac, av, user.data(), user.size()) != 0) return -1;
    g_module = module;
    return 0;
}

// slurmstepd's part of ending every process with its job (cgroup/slurm_step_reclaim.hpp):
// one reclaimer per slurmstepd, which is one step.
std::optional<cgroup::SlurmStepReclaimer> g_reclaimer;

int reclaim_step_cgroups(spank_t sp) {
    uint32_t job = 0, step = 0;
    (void)item(sp, S_JOB_ID, job);
    (void)item(sp, S_JOB_STEPID, step);
    if (!g_reclaimer) {
        auto made = cgroup::SlurmStepReclaimer::for_this_process();
        if (!made) {
            slurm_error("xpart: step %u.%u: %s", job, step, made.error().message.c_str());
            return -1;
        }
        g_reclaimer.emplace(std::move(*made));
    }
    auto r = g_reclaimer->run(std::chrono::seconds(5));
    if (!r) {
        slurm_error("xpart: step %u.%u: %s", job, step, r.error().message.c_str());
        return -1;
    }
    for (const auto& dir : r->removed)
        slurm_info("xpart: step %u.%u: ended a cgroup the job's user made in the step's: %s", job, step, dir.c_str());
    return 0;
}

}  // namespace

extern "C" {

XPART_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
    return guarded("init", [&] {
        for (int i = 0; g_spank_options[i].name; ++i)
            if (spank_option_register(sp, &g_spank_options[i]) != ESPANK_SUCCESS) {
                slurm_error("xpart: cannot register --%s", g_spank_options[i].name);
                return -1;
            }
        auto site = parse_site_args(std::vector<std::string>(av, av + ac));
        if (!site) {
            slurm_error("xpart: %s", site.error().message.c_str());
            return -1;
        }
        g_options = std::move(*site);
        return 0;
    });
}

XPART_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) {
    if (spank_context() != S_CTX_REMOTE) return 0;
    return guarded("init_post_opt", [&] { return begin_step(sp, ac, av); });
}

XPART_EXPORT int slurm_spank_task_post_fork(spank_t sp, int, char**) {
    return guarded("task_post_fork", [&] {
        // Every step (batch, extern, interactive, xpart's or not): its v1 cgroups root's
        // before any of its tasks runs, so nothing of the job can make a cgroup to hide in.
        if (reclaim_step_cgroups(sp) != 0) return -1;
        return g_module ? g_module->task_post_fork(sp) : 0;
    });
}

XPART_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
    return g_module ? g_module->task_init(sp) : 0;
}

XPART_EXPORT int slurm_spank_task_exit(spank_t sp, int, char**) {
    return g_module ? g_module->task_exit(sp) : 0;
}

XPART_EXPORT int slurm_spank_exit(spank_t sp, int, char**) {
    return g_module ? g_module->exit(sp) : 0;
}

// slurm_spank_init is not called in the job script context: the module parses the arguments.
XPART_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
    return guarded("job_epilog", [&] {
        const xpart_step_module* module = load_module();
        return module ? module->job_epilog(sp, ac, av) : -1;
    });
}

}  // extern "C"
