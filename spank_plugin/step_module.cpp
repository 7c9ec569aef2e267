// xpart_spank_step.so: the step's work, which the front (xpart_spank.cpp) hands each SPANK
// entry point to once it decided the step is one xpart acts on. Glue only, as the front: each
// function reads what Slurm hands it, calls spank_plugin/step_session.hpp, and logs its one
// line; none lets an exception out.
extern "C" {
#include <slurm/slurm.h>
#include <slurm/spank.h>
}

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libxpart/c_boundary.hpp"
#include "mps/root/mps_job.hpp"
#include "spank_plugin/step_module.h"
#include "spank_plugin/step_session.hpp"

namespace {

using namespace xpart;
using namespace xpart::spank;

std::optional<StepSession> g_session;  // this step on this node

template <class F>
int guarded(const char* where, F&& body) {
    return xpart::run_guarded(where, std::forward<F>(body), -1,
                              [](const char* line) { slurm_error("xpart: %s", line); });
}

template <class T>
bool item(spank_t sp, spank_item_t what, T& out) {
    return spank_get_item(sp, what, &out) == ESPANK_SUCCESS;
}

EnvMap job_env(spank_t sp) {
    char** env = nullptr;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) return {};
    return env_from_environ(env);
}

int task_id(spank_t sp) {
    int id = -1;
    return item(sp, S_TASK_ID, id) ? id : -1;
}

// The site's defaults, then the user's options over them; one line on error.
std::optional<StepOptions> step_options(int ac, char** av, const char* const* user, size_t count) {
    auto options = parse_site_args(std::vector<std::string>(av, av + ac));
    if (!options) {
        slurm_error("xpart: %s", options.error().message.c_str());
        return std::nullopt;
    }
    for (size_t i = 0; i < count; ++i) {
        const std::string o = user[i];
        const auto eq = o.find('=');
        if (auto s = apply_user_option(*options, o.substr(0, eq), o.substr(eq + 1)); !s) {
            slurm_error("xpart: %s", s.error().message.c_str());
            return std::nullopt;
        }
    }
    return std::move(*options);
}

int init_post_opt(spank_t sp, int ac, char** av, const char* const* user, size_t count) {
    return guarded("init_post_opt", [&] {
        auto options = step_options(ac, av, user, count);
        if (!options) return -1;
        uint32_t job = 0, step = 0, tasks = 0;
        uid_t uid = 0;
        gid_t gid = 0;
        if (!item(sp, S_JOB_ID, job) || !item(sp, S_JOB_STEPID, step) ||
            !item(sp, S_JOB_LOCAL_TASK_COUNT, tasks) || !item(sp, S_JOB_UID, uid) || !item(sp, S_JOB_GID, gid)) {
            slurm_error("xpart: cannot read the step's identity from slurmstepd");
            return -1;
        }
        StepIdentity id{std::to_string(job), std::to_string(step), {uid, gid}, static_cast<int>(tasks)};
        auto session = StepSession::begin(*options, xpart::RootFs::from_env(), job_env(sp), id);
        if (!session) {
            slurm_error("xpart: step %u.%u: %s", job, step, session.error().message.c_str());
            return -1;
        }
        for (const auto& n : session->notes()) slurm_info("xpart: step %u.%u: %s", job, step, n.c_str());
        g_session.emplace(std::move(*session));
        return 0;
    });
}

int task_post_fork(spank_t sp) {
    if (!g_session || !g_session->binds()) return 0;
    return guarded("task_post_fork", [&] {
        const int id = task_id(sp);
        pid_t pid = 0;
        if (id < 0 || !item(sp, S_TASK_PID, pid)) {
            slurm_error("xpart: cannot read the task's id and pid");
            return -1;
        }
        if (auto s = g_session->confine(id, pid); !s) {
            slurm_error("xpart: task %d: %s", id, s.error().message.c_str());
            return -1;
        }
        return 0;
    });
}

int task_init(spank_t sp) {
    if (!g_session || !g_session->binds()) return 0;
    return guarded("task_init", [&] {
        const int id = task_id(sp);
        if (id < 0) return -1;
        std::string note;
        const auto changes = g_session->env(id, job_env(sp), &note);
        if (!note.empty()) slurm_info("xpart: task %d: %s", id, note.c_str());
        for (const auto& c : changes) {
            spank_err_t rc = c.value ? spank_setenv(sp, c.name.c_str(), c.value->c_str(), 1)
                                     : spank_unsetenv(sp, c.name.c_str());
            if (rc != ESPANK_SUCCESS) {
                slurm_error("xpart: task %d: cannot set %s", id, c.name.c_str());
                return -1;
            }
        }
        return 0;
    });
}

int task_exit(spank_t sp) {
    if (!g_session) return 0;
    return guarded("task_exit", [&] {
        const int id = task_id(sp);
        if (auto s = g_session->task_ended(id); !s)
            slurm_error("xpart: task %d: %s", id, s.error().message.c_str());
        return 0;
    });
}

int step_exit(spank_t) {
    if (!g_session) return 0;
    return guarded("exit", [&] {
        for (const auto& p : g_session->end()) slurm_error("xpart: %s", p.c_str());
        g_session.reset();
        return 0;
    });
}

int job_epilog(spank_t sp, int ac, char** av) {
    return guarded("job_epilog", [&] {
        auto site = parse_site_args(std::vector<std::string>(av, av + ac));
        if (!site) {
            slurm_error("xpart: %s", site.error().message.c_str());
            return -1;
        }
        uint32_t job = 0;
        if (!item(sp, S_JOB_ID, job)) return 0;
        auto r = mps::stop_job_daemons(site->mps_job, std::to_string(job));
        for (const auto& n : r.notes) slurm_info("xpart: job %u epilog: %s", job, n.c_str());
        if (!r.ended.empty()) slurm_info("xpart: job %u epilog: %s", job, mps::describe_stop(r).c_str());
        // A failure drains the node (Slurm's "Epilog error"): a daemon root cannot end must
        // not meet the next job.
        if (!r.survivors.empty())
            slurm_error("xpart: job %u epilog: %s", job, mps::describe_stop(r).c_str());
        return r.survivors.empty() ? 0 : -1;
    });
}

const xpart_step_module g_module = {init_post_opt, task_post_fork, task_init, task_exit, step_exit, job_epilog};

}  // namespace

extern "C" const xpart_step_module* xpart_spank_step(uint32_t abi) {
    return abi == XPART_STEP_MODULE_ABI ? &g_module : nullptr;
}
