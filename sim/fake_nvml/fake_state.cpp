// The fake NVML's state: the node spec it loads (and where it finds it), the persistent state
// file nvml-state.json that reshaping calls share between processes (flock on
// nvml-state.lock, atomic rewrite), the processes that file says hold GPUs, the per-GPU
// devices and instance handles rebuilt from the instances, the simulated root's MIG
// capability files that follow them, and the configured faults.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sim/fake_nvml/fake_state.hpp"
#include "sim/nvidia_caps.hpp"
#include "sim/nvidia_install.hpp"

namespace xpart::sim::fake_nvml {

State& state() {
    static State* s = new State();  // never destroyed: callers may shut down during exit
    return *s;
}

std::string spec_path() {
    if (const char* env = std::getenv("XPART_SIM_SPEC"); env && *env) return env;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&state), &info) && info.dli_fname) {
        std::string lib = info.dli_fname;
        std::size_t slash = lib.rfind('/');
        return (slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) +
               "/nvml-spec.json";
    }
    return "nvml-spec.json";
}

void complain(const std::string& what) { std::fprintf(stderr, "fake NVML: %s\n", what.c_str()); }

std::string dir_of(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// ROOT when this library is ROOT/usr/lib/xpart-sim/libnvidia-ml.so.1 (nvidia_install.hpp).
std::string simulated_root() {
    Dl_info info{};
    if (!::dladdr(reinterpret_cast<void*>(&state), &info) || !info.dli_fname) return "";
    const std::string lib = info.dli_fname;
    const std::string suffix = std::string(kFakeNvmlDir) + "/libnvidia-ml.so.1";
    if (lib.size() <= suffix.size() || lib.compare(lib.size() - suffix.size(), suffix.size(), suffix))
        return "";
    return lib.substr(0, lib.size() - suffix.size());
}

// ---- persistent state (nvml-state.json) ----

using nlohmann::json;

const char* mig_text(MigState m) {
    switch (m) {
        case MigState::Unsupported: return "unsupported";
        case MigState::Enabled: return "enabled";
        case MigState::EnablePending: return "enable-pending";
        case MigState::DisablePending: return "disable-pending";
        default: return "disabled";
    }
}

MigState parse_mig_text(const std::string& t) {
    for (MigState m : {MigState::Unsupported, MigState::Disabled, MigState::Enabled,
                       MigState::EnablePending, MigState::DisablePending})
        if (t == mig_text(m)) return m;
    throw std::runtime_error("bad mig state '" + t + "'");
}

json instances_json(const NvidiaGpuSpec& g) {
    json out = json::array();
    for (const GpuInstanceSpec& gi : g.instances) {
        json cis = json::array();
        for (const ComputeInstanceSpec& ci : gi.compute_instances)
            cis.push_back({{"ci", ci.ci}, {"slices", ci.slices}, {"uuid", ci.uuid}});
        out.push_back({{"profile", gi.profile}, {"start", gi.start}, {"compute_instances", cis}});
    }
    return out;
}

// An flock on nvml-state.lock for the object's life. Without create, an absent lock file
// (nothing was ever written) gives no lock, which a reader does not need then.
class StateLock {
public:
    StateLock(const std::string& dir, bool exclusive, bool create) {
        fd_ = ::open((dir + "/nvml-state.lock").c_str(),
                     O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644);
        if (fd_ >= 0)
            while (::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0 && errno == EINTR) {
            }
    }
    ~StateLock() {
        if (fd_ >= 0) ::close(fd_);
    }
    StateLock(const StateLock&) = delete;
    StateLock& operator=(const StateLock&) = delete;
    bool locked() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

std::string state_file(const State& s) { return s.state_dir + "/nvml-state.json"; }

// The state file as JSON; null when there is none. Throws on a malformed one.
json read_state_file(const State& s) {
    std::FILE* f = std::fopen(state_file(s).c_str(), "re");
    if (!f) {
        if (errno == ENOENT) return json();
        throw std::runtime_error(state_file(s) + ": cannot read");
    }
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    json j = json::parse(text);
    if (j.value("format", "") != "xpart-sim-nvml-state")
        throw std::runtime_error(state_file(s) + ": not an xpart-sim-nvml-state file");
    return j;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH); }

std::vector<HeldProcess> parse_processes(const json& j) {
    std::vector<HeldProcess> out;
    for (const json& p : j.value("processes", json::array())) {
        HeldProcess h;
        h.pid = p.at("pid").get<long>();
        h.gpu = p.at("gpu").get<std::string>();
        h.mig = p.contains("gi");
        if (h.mig) {
            h.gi = p.at("gi").get<unsigned>();
            h.ci = p.value("ci", 0u);
        }
        out.push_back(h);
    }
    return out;
}

void rebuild_gpu(State& s, unsigned i);

// Takes each GPU's mig state and instances from the state file (by uuid); rebuilds only the
// GPUs that differ so that other handles stay valid.
void apply_state(State& s, const json& j) {
    s.uuid_counter = j.value("uuid_counter", 0ULL);
    s.processes = parse_processes(j);
    for (const json& jg : j.value("gpus", json::array())) {
        const std::string uuid = jg.at("uuid").get<std::string>();
        for (unsigned i = 0; i < s.gpus.size(); ++i) {
            NvidiaGpuSpec& g = s.spec.nvidia.gpus[i];
            if (g.uuid != uuid || !s.gpus[i]->product) continue;
            const MigState mig = parse_mig_text(jg.at("mig").get<std::string>());
            const json inst = jg.value("instances", json::array());
            if (mig == g.mig && inst == instances_json(g)) continue;
            std::vector<GpuInstanceSpec> gis;
            for (const json& ji : inst) {
                GpuInstanceSpec gi;
                gi.profile = ji.at("profile").get<std::string>();
                gi.start = ji.at("start").get<unsigned>();
                const MigProfileSpec* p = s.gpus[i]->product->find_profile(gi.profile);
                if (!p) throw std::runtime_error("state file: no MIG profile '" + gi.profile + "'");
                gi.gi = p->gi_base + gi.start / p->memory_slices;
                for (const json& jc : ji.value("compute_instances", json::array()))
                    gi.compute_instances.push_back({jc.at("ci").get<unsigned>(),
                                                    jc.at("slices").get<unsigned>(),
                                                    jc.at("uuid").get<std::string>()});
                gis.push_back(std::move(gi));
            }
            g.mig = mig;
            g.instances = std::move(gis);
            g.mig_index_holes.clear();  // a reshaped GPU numbers its MIG devices contiguously
            rebuild_gpu(s, i);
        }
    }
}

// Writes the whole state atomically (temp file + rename); the caller holds the lock.
int write_state(const State& s, const json& processes) {
    json gpus = json::array();
    for (const NvidiaGpuSpec& g : s.spec.nvidia.gpus)
        gpus.push_back({{"uuid", g.uuid}, {"mig", mig_text(g.mig)}, {"instances", instances_json(g)}});
    const json j = {{"format", "xpart-sim-nvml-state"}, {"version", 1},
                    {"uuid_counter", s.uuid_counter}, {"gpus", gpus}, {"processes", processes}};
    const std::string tmp = state_file(s) + ".tmp." + std::to_string(::getpid());
    std::FILE* f = std::fopen(tmp.c_str(), "we");
    if (!f) {
        complain(tmp + ": cannot write the state");
        return kUnknown;
    }
    const std::string text = j.dump(1) + "\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !ok || ::rename(tmp.c_str(), state_file(s).c_str()) != 0) {
        ::unlink(tmp.c_str());
        complain(state_file(s) + ": cannot write the state");
        return kUnknown;
    }
    return kSuccess;
}

// The simulated root's capability files and nodes of GPU i, made to match its instances.
void sync_tree(const State& s, unsigned i) {
    if (s.root.empty()) return;
    auto major = s.spec.majors.find("nvidia-caps");
    if (major == s.spec.majors.end()) return;
    const TreeWriter tree(s.root);
    const NvidiaGpuSpec& g = s.spec.nvidia.gpus[i];
    if (auto st = remove_mig_capabilities(g, tree); !st) complain(st.error().message);
    if (auto st = write_mig_capabilities(g, major->second, tree, true); !st)
        complain(st.error().message);
}
// A reshaping call on GPU i: exclusive lock, re-read what another process may have written,
// apply(), and when it succeeds write the state back and update handles and the tree.
int mutate(State& s, unsigned i, const std::function<int()>& apply) {
    StateLock lock(s.state_dir, true, true);
    if (!lock.locked()) {
        complain(s.state_dir + "/nvml-state.lock: cannot lock");
        return kUnknown;
    }
    json current = read_state_file(s);
    if (!current.is_null()) apply_state(s, current);
    if (int rc = apply()) return rc;
    if (int rc = write_state(s, current.is_null() ? json::array()
                                                  : current.value("processes", json::array())))
        return rc;
    rebuild_gpu(s, i);
    sync_tree(s, i);
    return kSuccess;
}

// Re-reads only the held processes (a read call must not move any handle).
void refresh_processes(State& s) {
    StateLock lock(s.state_dir, false, false);
    json j = read_state_file(s);
    if (!j.is_null()) s.processes = parse_processes(j);
}

bool held(const State& s, const std::string& gpu, int gi, int ci) {
    for (const HeldProcess& p : s.processes)
        if (p.gpu == gpu && (gi < 0 || (p.mig && p.gi == unsigned(gi))) &&
            (ci < 0 || (p.mig && p.ci == unsigned(ci))) && alive(p.pid))
            return true;
    return false;
}

// Loads spec and faults into s (mutex held). Returns an nvmlReturn_t.
int load(State& s) {
    const std::string path = spec_path();
    if (::access(path.c_str(), R_OK) != 0) {
        complain(path + ": cannot read the node spec");
        return kDriverNotLoaded;
    }
    auto spec = load_spec(path);
    if (!spec) {
        complain(spec.error().message);
        return kUnknown;
    }
    std::map<std::string, int> faults = spec->nvidia.faults;
    if (const char* env = std::getenv("XPART_SIM_NVML_FAULTS"); env && *env) {
        auto more = parse_nvml_fault_list(env);
        if (!more) {
            complain("XPART_SIM_NVML_FAULTS: " + more.error().message);
            return kUnknown;
        }
        for (const auto& [k, v] : *more) faults[k] = v;
    }
    s.spec = std::move(*spec);
    s.faults = std::move(faults);
    s.gpus.clear();
    s.valid.clear();
    s.valid_gi.clear();
    s.valid_ci.clear();
    s.ci_profiles_known.clear();
    s.processes.clear();
    s.uuid_counter = 0;
    s.state_dir = dir_of(path);
    s.root = simulated_root();
    for (std::size_t i = 0; i < s.spec.nvidia.gpus.size(); ++i) {
        auto d = std::make_unique<FakeDevice>();
        d->gpu = static_cast<unsigned>(i);
        d->spec = &s.spec.nvidia.gpus[i];
        d->product = find_gpu_product(d->spec->product);
        s.valid.insert(d.get());
        s.gpus.push_back(std::move(d));
        rebuild_gpu(s, static_cast<unsigned>(i));
    }
    try {
        StateLock lock(s.state_dir, false, false);
        json j = read_state_file(s);
        if (!j.is_null()) apply_state(s, j);
    } catch (const std::exception& e) {
        complain(state_file(s) + ": " + e.what());
        return kUnknown;
    }
    return kSuccess;
}

// GPU i's MIG devices and instance handles, from its current instances.
void rebuild_gpu(State& s, unsigned i) {
    FakeDevice& d = *s.gpus[i];
    for (const auto& m : d.migs) s.valid.erase(m.get());
    d.migs.clear();
    for (const SimMigDevice& m : sim_mig_devices(*d.spec)) {
        auto md = std::make_unique<FakeDevice>();
        md->gpu = d.gpu;
        md->spec = d.spec;
        md->product = d.product;
        md->is_mig = true;
        md->mig = m;
        s.valid.insert(md.get());
        d.migs.push_back(std::move(md));
    }
    for (const auto& [key, h] : s.gi_handles)
        if (key.first == i) s.valid_gi.erase(h.get());
    for (const auto& [key, h] : s.ci_handles)
        if (std::get<0>(key) == i) s.valid_ci.erase(h.get());
    if (!mig_on(*d.spec)) return;
    for (const GpuInstanceSpec& gi : d.spec->instances) {
        auto& h = s.gi_handles[{i, gi.gi}];
        if (!h) h = std::make_unique<FakeGi>(FakeGi{i, gi.gi});
        s.valid_gi.insert(h.get());
        for (const ComputeInstanceSpec& ci : gi.compute_instances) {
            auto& c = s.ci_handles[{i, gi.gi, ci.ci}];
            if (!c) c = std::make_unique<FakeCi>(FakeCi{i, gi.gi, ci.ci});
            s.valid_ci.insert(c.get());
        }
    }
}

int fault(const State& s, const char* call, int gpu) {
    const std::string nth = "#" + std::to_string(++s.calls_seen[call]);
    const std::string at = gpu >= 0 ? std::string(call) + "@" + std::to_string(gpu) : "";
    for (const std::string& key : {at.empty() ? at : at + nth, std::string(call) + nth, at, std::string(call)}) {
        if (key.empty()) continue;
        auto it = s.faults.find(key);
        if (it == s.faults.end()) continue;
        if (it->second == kNvmlFaultKill) ::kill(::getpid(), SIGKILL);
        // Continued (SIGCONT) rather than killed, the call goes on as if no fault were set.
        if (it->second == kNvmlFaultStop) return ::kill(::getpid(), SIGSTOP), kSuccess;
        return it->second;
    }
    return kSuccess;
}

}  // namespace xpart::sim::fake_nvml
