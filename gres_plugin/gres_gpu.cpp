// gres/gpu, a drop-in for Slurm's own: the entry points every supported series shares (22.05,
// 24.11, 25.11, 26.05) translate Slurm's types (lists, bitstr_t, env arrays, buf_t) to and from the core
// library and delegate to it; the series differences live in series_<series>.cpp behind
// series.hpp. Nothing here decides anything; no exception leaves an entry point.
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Slurm's headers first: they #define error, which must rename every use alike.
#include "gres_plugin/series.hpp"
#include "gres_plugin/discovery_module.hpp"
#include "libxpart/c_boundary.hpp"
#include "libxpart/device_probe.hpp"
#include "libxpart/gres/gres_check.hpp"
#include "libxpart/slurm_text/slurmd_node_name.hpp"
#include "libxpart/gres/gres_env.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/gres/xpart_conf.hpp"

const char plugin_name[] = "xpart gres/gpu plugin (NVIDIA MIG, AMD XCP)";
const char plugin_type[] = "gres/gpu";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

namespace {

char kGresName[] = "gpu";

// Process-wide, as in every Slurm plugin: slurmd fills it at node_config_load, slurmstepd at
// recv_stepd.
std::vector<xpart::GresRecord> g_records;
std::string g_records_text;  // slurmd: g_records as sent to every slurmstepd
xpart::AmdIndexMode g_amd_index_mode = xpart::AmdIndexMode::Index;
uint32_t g_node_cpus = 0;  // the CPU count the records were registered with
struct xlist* g_devices = nullptr;  // gres_device_t per device file, for task/cgroup

// Every entry point's body: `on_error` (and one "gres/gpu: " line) for an exception.
template <class F>
auto guarded(const char* where, F&& body, decltype(body()) on_error) -> decltype(body()) {
    return xpart::run_guarded(where, std::forward<F>(body), on_error,
                          [](const char* line) { error("gres/gpu: %s", line); });
}

std::vector<bool> to_bits(bitstr_t* bits) {
    std::vector<bool> out;
    if (!bits) return out;
    const bitoff_t n = bit_size(bits);
    out.resize(static_cast<std::size_t>(n));
    for (bitoff_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = bit_test(bits, i);
    return out;
}

void apply(char*** env, const xpart::EnvResult& result) {
    for (const auto& line : result.errors) error("gres/gpu: %s", line.c_str());
    for (const auto& c : result.changes) {
        if (c.value) env_array_overwrite(env, c.name.c_str(), c.value->c_str());
        else if (*env) unsetenvp(*env, c.name.c_str());
    }
}

int is_gpu_record(void* x, void*) {
    auto* conf = static_cast<gres_slurmd_conf_t*>(x);
    return conf->name && std::string(conf->name) == kGresName;
}

// The NodeName this slurmd runs as: its -N, else the one slurm.conf gives this host (what
// slurmd itself does), else the short host name (a dynamic node).
std::string slurmd_node_name() {
    if (auto named = xpart::slurmd_node_name_arg(xpart::own_arguments())) return *named;
    if (char* aliased = slurm_conf_get_aliased_nodename()) {
        std::string name(aliased);
        xfree(aliased);
        return name;
    }
    return xpart::short_hostname();
}

// The record's CPUs as Slurm wants them: a machine-numbered bitmap sized to the node
// (slurm_record_cpus) and the abstract range string. True when none of its CPUs is among the
// node's configured ones (then any CPU may use it).
bool add_record(struct xlist* list, const xpart::GresRecord& r, node_config_load_t* node_conf) {
    const uint32_t cpu_cnt = node_conf->cpu_cnt;
    bitstr_t* mac = nullptr;
    char* abs = nullptr;
    bool beyond = false;
    if (cpu_cnt > 0) {
        mac = bit_alloc(cpu_cnt);
        for (unsigned cpu : xpart::slurm_record_cpus(r, cpu_cnt)) bit_set(mac, cpu);
        beyond = !r.cpus.empty() &&
                 std::none_of(r.cpus.begin(), r.cpus.end(), [&](unsigned c) { return c < cpu_cnt; });
        if (beyond)
            debug("gres/gpu: %s (%s): its CPUs are beyond the node's %u configured CPUs; "
                  "any CPU may use it", r.type.c_str(), r.partition_uuid.c_str(), cpu_cnt);
        char* mac_str = bit_fmt_full(mac);
        if (node_conf->xcpuinfo_mac_to_abs) node_conf->xcpuinfo_mac_to_abs(mac_str, &abs);
        else abs = xstrdup(mac_str);
        xfree(mac_str);
    }
    const uint32_t flags = r.vendor == xpart::Vendor::Nvidia ? GRES_CONF_ENV_NVML
                                                              : GRES_CONF_ENV_RSMI;
    std::string files = xpart::files_value(r);
    xpart::gres_plugin::add_gres(list, {kGresName, cpu_cnt, abs, mac, files.c_str(), r.type.c_str(),
                                  r.unique_id.empty() ? nullptr : r.unique_id.c_str(), flags,
                                  r.vendor == xpart::Vendor::Nvidia && r.gi >= 0});
    xfree(abs);
    FREE_NULL_BITMAP(mac);
    return beyond;
}

// The task's CPU affinity, as Slurm's closest binding reads it (sched_getaffinity).
std::optional<std::vector<unsigned>> own_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::nullopt;
    std::vector<unsigned> cpus;
    for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    return cpus;
}

std::optional<std::string> env_value(char** env, const char* name) {
    const char* v = env ? getenvp(env, name) : nullptr;
    return v ? std::optional<std::string>(v) : std::nullopt;
}

// check_present()'s answer for the step: each task, forked from slurmstepd right after
// step_set_env, reuses it instead of stat()ing the same files again.
struct PresenceCheck {
    std::vector<bool> alloc;
    std::vector<std::string> faults;
};
std::optional<PresenceCheck> g_step_check;

std::vector<std::string> presence_faults(const std::vector<bool>& alloc, xpart::EnvScope scope) {
    if (scope == xpart::EnvScope::Task && g_step_check && g_step_check->alloc == alloc)
        return g_step_check->faults;
    auto faults = xpart::check_present(g_records, alloc);
    if (scope == xpart::EnvScope::Step) g_step_check = PresenceCheck{alloc, faults};
    return faults;
}

void set_env(char*** env, bitstr_t* alloc, xpart::EnvScope scope, bitstr_t* usable = nullptr) {
    xpart::EnvRequest req;
    req.scope = scope;
    req.alloc = to_bits(alloc);
    req.constrain_devices = gres_use_local_device_index();
    req.amd_index_mode = g_amd_index_mode;
    if (scope == xpart::EnvScope::Task) {
        xpart::TaskBinding task;
        task.tres_bind = env_value(*env, "SLURMD_TRES_BIND");
        task.local_id = env_value(*env, "SLURM_LOCALID");
        if (usable) task.slurm_set = to_bits(usable);
        task.cpus = own_cpus();
        task.task_plugins = slurm_conf.task_plugin ? slurm_conf.task_plugin : "";
        task.node_cpus = g_node_cpus;
        task.slurm_rule_modelled = xpart::gres_plugin::kTaskRuleModelled;
        // task_set_env runs in the task, already constrained; read-only: no file it probes
        // needs writing to tell the partitions apart (MIG capability files are 0444).
        task.can_open = [](const std::string& path) { return xpart::device_openable(path, false); };
        req.task = std::move(task);
    }
    req.faults = presence_faults(req.alloc, scope);
    apply(env, xpart::gres_env(g_records, req));
}

}  // namespace

int init(void) {
    debug("%s loaded", plugin_name);
    return SLURM_SUCCESS;
}

int fini(void) {
    FREE_NULL_LIST(g_devices);
    g_records.clear();
    g_records_text.clear();
    return SLURM_SUCCESS;
}

int gres_p_node_config_load(struct xlist* gres_conf_list, node_config_load_t* node_conf) {
    return guarded("node_config_load", [&]() -> int {
        FREE_NULL_LIST(g_devices);
        if (node_conf->in_slurmd) {
            // gres.conf is read again by the check: Slurm has dropped from gres_conf_list the
            // records whose type slurm.conf's Gres= lacks (xpart::SlurmdGresConf).
            char* path = get_extra_conf_path(const_cast<char*>("xpart.conf"));
            char* gres_conf = get_extra_conf_path(const_cast<char*>("gres.conf"));
            auto found = xpart::gres_plugin::discover_node(path, gres_conf, slurmd_node_name(),
                                                     xpart::gres_plugin::kSeries);
            xfree(path);
            xfree(gres_conf);
            // The core's lines name no plugin: the prefix is Slurm's log's, added here.
            for (const auto& w : found.gres.warnings) info("gres/gpu: %s", w.c_str());
            for (const auto& e : found.gres.errors) error("gres/gpu: %s", e.c_str());
            g_records = std::move(found.gres.records);
            g_records_text = std::move(found.records_text);
            g_amd_index_mode = found.amd_index_mode;
            g_node_cpus = node_conf->cpu_cnt;

            list_delete_all(gres_conf_list, is_gpu_record, nullptr);
            auto ours = list_create(destroy_gres_slurmd_conf);
            std::size_t beyond = 0;
            for (std::size_t i = 0; i < g_records.size(); ++i) {
                const auto& r = g_records[i];
                debug("gres/gpu: record %zu: type=%s uuid=%s files=%s", i, r.type.c_str(),
                      r.partition_uuid.c_str(), xpart::files_value(r).c_str());
                beyond += add_record(ours, r, node_conf);
            }
            list_transfer(gres_conf_list, ours);
            FREE_NULL_LIST(ours);
            // One line at info; the records are at debug (slurmd -G -v shows them).
            if (beyond)
                info("gres/gpu: %zu GPU partition(s) registered; %zu of them have their CPUs "
                     "beyond the node's %u configured CPUs, so any CPU may use those",
                     g_records.size(), beyond, node_conf->cpu_cnt);
            else
                info("gres/gpu: %zu GPU partition(s) registered", g_records.size());
        }
        return xpart::gres_plugin::load_devices(gres_conf_list, kGresName, node_conf, &g_devices);
    }, SLURM_ERROR);
}

void gres_p_job_set_env(char*** job_env_ptr, bitstr_t* gres_bit_alloc, uint64_t,
                        gres_internal_flags_t) {
    guarded("job_set_env", [&] { set_env(job_env_ptr, gres_bit_alloc, xpart::EnvScope::Job); return 0; }, 0);
}

void gres_p_step_set_env(char*** step_env_ptr, bitstr_t* gres_bit_alloc, uint64_t,
                         gres_internal_flags_t) {
    guarded("step_set_env", [&] { set_env(step_env_ptr, gres_bit_alloc, xpart::EnvScope::Step); return 0; }, 0);
}

void gres_p_task_set_env(char*** step_env_ptr, bitstr_t* gres_bit_alloc, uint64_t,
                         bitstr_t* usable_gres, gres_internal_flags_t) {
    guarded("task_set_env", [&] {
        set_env(step_env_ptr, gres_bit_alloc, xpart::EnvScope::Task, usable_gres);
        return 0;
    }, 0);
}

// The records as text, made once at node_config_load (every step launch sends them).
void gres_p_send_stepd(buf_t* buffer) {
    xpart::gres_plugin::send_devices(buffer, g_devices);
    packmem(const_cast<char*>(g_records_text.c_str()),
            static_cast<uint32_t>(g_records_text.size() + 1), buffer);
    pack32(static_cast<uint32_t>(g_amd_index_mode), buffer);
    pack32(g_node_cpus, buffer);
}

void gres_p_recv_stepd(buf_t* buffer) {
    xpart::gres_plugin::recv_devices(buffer, &g_devices);
    char* text = nullptr;
    uint32_t size = 0, mode = 0;
    if (unpackmem_xmalloc(&text, &size, buffer) != SLURM_SUCCESS ||
        unpack32(&mode, buffer) != SLURM_SUCCESS || unpack32(&g_node_cpus, buffer) != SLURM_SUCCESS) {
        error("gres/gpu: recv_stepd: short message from slurmd; no GPU will be bound");
        xfree(text);
        g_records.clear();
        return;
    }
    guarded("recv_stepd", [&] {
        // packmem's size counts the terminating NUL; the text must end there.
        auto records = xpart::parse_records(
            text && size > 0 ? std::string_view(text, size - 1) : std::string_view());
        if (!records) {
            error("gres/gpu: recv_stepd: %s; no GPU will be bound", records.error().message.c_str());
            g_records.clear();
        } else {
            g_records = std::move(*records);
        }
        g_amd_index_mode = mode == static_cast<uint32_t>(xpart::AmdIndexMode::Uuid)
                               ? xpart::AmdIndexMode::Uuid : xpart::AmdIndexMode::Index;
        return 0;
    }, 0);
    xfree(text);
}

struct xlist* gres_p_get_devices(void) { return g_devices; }

void gres_p_step_hardware_init(bitstr_t*, char* tres_freq) {
    if (tres_freq) info("gres/gpu: --gpu-freq is not supported on GPU partitions; ignored");
}

void gres_p_step_hardware_fini(void) {}

namespace xpart::gres_plugin {

void set_prep_env(char*** env, bitstr_t* node_alloc) {
    guarded("prep_set_env", [&] {
        apply(env, xpart::epilog_env(g_records, to_bits(node_alloc)));
        return 0;
    }, 0);
}

}  // namespace xpart::gres_plugin
