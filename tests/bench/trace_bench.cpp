// Trace bench of geometry on demand (issue 47): a mixed queue of MIG jobs on simulated A100
// 80GB hosts, with the reshape flow against every static geometry on the same trace.
//
// The flow's decisions are xpart's own: the simulated slurmctld below is a SlurmClient, and
// each hook calls the real functions of reshape_request/requests.hpp at the moment Slurm
// would run it: the ResumeProgram `resume` for the siblings a scheduling pass gave jobs, the
// RebootProgram `reboot_request` and `target_wanted` once an asked host is idle, the
// PrologSlurmctld `prolog_wait` (then `ask_queued`) as a sibling registers, the
// EpilogSlurmctld `withdraw_unwanted` as each job ends. Only Slurm is simulated:
//   - each host is one NodeName per geometry (7x1g, 2x3g, 1x7g; every GPU of the host the
//     same), one up, the others powered down, in host order as `xpart discover --siblings`
//     writes them;
//   - first-fit backfill in job order: a job starts on an up, undrained sibling with a free
//     partition of its type; else it joins a sibling already powering up for its type; else
//     it is given a powered-down sibling of its type, the first in node order (Slurm gives
//     powered-down nodes a higher weight, node_scheduler.c, so only when no up node can run
//     it now). "unasked hosts first" is the other choice: a powered-down sibling of a host
//     asked for nothing, else the first as before;
//   - an asked host reboots once it has no job, and the reshape with slurmd's start as the
//     sibling takes kReshapeSeconds (90 s; a real H100 reshape takes 1-2.4 s and the whole
//     request about 4 s in reshape_soak_test, docs/performance.md: 90 s leaves room for a
//     slow GPU and slurmd); the jobs waiting for the sibling start when it registers;
//   - no job is cancelled, and ResumeTimeout is taken as long enough (a site sets it over its
//     longest job); the jobs that waited longer than etc/slurm.conf.reshape's 600 s for a
//     sibling are counted: with that setting Slurm would requeue them.
// A static geometry is the same simulation with one NodeName per host; every mix of the three
// over the hosts is run, a mix lacking a type the trace asks for left out. The flow starts from
// the best static mix of the trace. GPU-slice utilisation counts a 1g partition as 1/7 of a
// GPU, a 3g one 3/7, a 7g one 7/7 (a 2x3g GPU leaves 1/7 unused), busy within the trace's
// arrival span.
// Run: tests/bench/trace_bench (a few seconds; no Google Benchmark, no Slurm).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "libxpart/text.hpp"
#include "reshape_request/requests.hpp"

namespace {

using xpart::Error;
using xpart::Result;
using xpart::Status;
using xpart::reshape_request::SlurmClient;
using xpart::reshape_request::SlurmNode;

constexpr unsigned kSeed = 20261206;
constexpr int kHosts = 8;
constexpr double kReshapeSeconds = 90;
constexpr double kShippedResumeTimeout = 600;  // etc/slurm.conf.reshape
constexpr int kTypes = 3;

struct Geometry {
    const char* name;
    int per_gpu;  // partitions of its one type per GPU
    int slices;   // a partition's share of a GPU, in sevenths
};
// Geometry i offers partition type i.
constexpr Geometry kGeometries[kTypes] = {{"7x1g", 7, 1}, {"2x3g", 2, 3}, {"1x7g", 1, 7}};
const char* const kTypeNames[kTypes] = {"1g", "3g", "7g"};

struct Job {
    int id = 0;  // Slurm's job id: submit order
    int type = 0;
    double submit = 0, duration = 0;
    double start = -1, given_sibling = -1;  // -1: not (yet)
    int host = -1, sibling = -1;
    bool done = false;
};

// A stretch of the trace: how long, which share of jobs asks for each type, and the load it
// offers (slice-time asked over the cluster's).
struct Phase {
    double hours;
    double mix[kTypes];
    double load;
};

struct TraceShape {
    const char* name;
    int gpus_per_host;  // every host's GPUs take its geometry: a reshape drains them all
    std::vector<Phase> phases;
};

// Durations: log-normal, median an hour, most between 20 min and 3 h, cut to [2 min, 12 h].
constexpr double kMedianSeconds = 3600, kSigma = 1.0, kShortest = 120, kLongest = 12 * 3600;

double mean_slices(const Phase& p) {
    double s = 0;
    for (int t = 0; t < kTypes; ++t) s += p.mix[t] * kGeometries[t].slices;
    return s;
}

std::vector<Job> make_trace(const TraceShape& shape, std::mt19937& rng) {
    const double capacity = 7.0 * shape.gpus_per_host * kHosts;
    const double mean_duration = kMedianSeconds * std::exp(kSigma * kSigma / 2);
    std::lognormal_distribution<double> duration(std::log(kMedianSeconds), kSigma);
    std::vector<Job> jobs;
    double phase_start = 0;
    for (const Phase& p : shape.phases) {
        const double rate = p.load * capacity / (mean_slices(p) * mean_duration);
        std::exponential_distribution<double> gap(rate);
        std::discrete_distribution<int> type(p.mix, p.mix + kTypes);
        for (double t = phase_start + gap(rng); t < phase_start + p.hours * 3600; t += gap(rng)) {
            Job job;
            job.id = static_cast<int>(jobs.size()) + 1;
            job.type = type(rng);
            job.submit = t;
            job.duration = std::clamp(duration(rng), kShortest, kLongest);
            jobs.push_back(job);
        }
        phase_start += p.hours * 3600;
    }
    return jobs;
}

double span_seconds(const TraceShape& shape) {
    double s = 0;
    for (const Phase& p : shape.phases) s += p.hours * 3600;
    return s;
}

enum class Power { Up, PoweringUp, Down };
enum class Pick { NodeOrder, UnaskedHostsFirst };

struct Sibling {
    std::string name;
    int geometry = 0;
    Power power = Power::Down;
    std::vector<int> jobs;  // allocated: running (up) or configuring (powering up)
    bool reboot_requested = false, reboot_issued = false;
    std::string reshape_target;
    int capacity = 0;  // partitions
};

struct Host {
    std::string name;
    std::vector<Sibling> siblings;  // in node order
};

struct Figures {
    double utilisation = 0, mean_wait = 0, p95_wait = 0, reshapes_per_hour = 0;
    int jobs = 0, unstarted = 0, given_sibling = 0, over_resume_timeout = 0, queued = 0, requeued = 0;
};

// A node list as the hooks pass it ("a,b"); "" names every node.
std::vector<std::string> node_names(const std::string& list) {
    std::vector<std::string> names;
    for (auto& name : xpart::split(list, ','))
        if (!name.empty()) names.push_back(std::move(name));
    return names;
}

[[noreturn]] void fail(const std::string& what, const Error& e) {
    std::fprintf(stderr, "trace_bench: %s: %s\n", what.c_str(), e.message.c_str());
    std::exit(1);
}

// slurmctld, its scheduler, and the hosts' slurmd, on a simulated clock.
class TraceSim final : public SlurmClient {
public:
    // `geometries`: each host's up sibling; with `flow`, every geometry is a sibling of it.
    TraceSim(std::vector<Job> jobs, int gpus_per_host, const std::vector<int>& geometries, bool flow, Pick pick)
        : jobs_(std::move(jobs)), gpus_(gpus_per_host), pick_(pick) {
        for (int h = 0; h < static_cast<int>(geometries.size()); ++h) add_host(h, geometries[h], flow);
    }

    Figures run(double span);

    Result<std::vector<SlurmNode>> nodes(const std::string& nodelist) override;
    Result<std::vector<std::string>> configuring_jobs(const std::string& node) override;
    Result<std::string> job_state(const std::string& job) override;
    Result<std::vector<std::string>> hostnames(const std::string& nodelist) override { return node_names(nodelist); }
    Status scontrol(const std::vector<std::string>& args) override;

private:
    enum class Kind { Arrival, End, Registered };
    struct Event {
        double at;
        long seq;  // ties in the order they were made
        Kind kind;
        int a, b;
        bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };

    void add_host(int h, int up_geometry, bool flow);
    void post(double at, Kind kind, int a, int b = 0) { events_.push({at, seq_++, kind, a, b}); }
    void schedule_pass();
    bool place(Job& job);
    bool powered_down_sibling(int type, bool unasked_only, int& host, int& sibling) const;
    void allocate(Job& job, int h, int s);
    void start(Job& job);
    void requeue(Job& job);
    void on_end(Job& job);
    void on_registered(int h, int s);
    void reboot_idle_hosts();
    void reboot_program(int h);
    void power_down(Sibling& s);
    Sibling& up(int h);
    Sibling* find(const std::string& name);
    SlurmNode node_of(const Host& host, const Sibling& s) const;
    Figures figures(double span) const;

    std::vector<Job> jobs_;
    std::vector<Host> hosts_;
    int gpus_;  // per host
    Pick pick_;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
    long seq_ = 0;
    double now_ = 0;
    std::deque<int> pending_[kTypes];  // job indices, in job order
    std::vector<std::string> to_resume_;
    int reshapes_ = 0, queued_ = 0, requeued_ = 0;
};

void TraceSim::add_host(int h, int up_geometry, bool flow) {
    Host host{"gpu" + std::to_string(h + 1), {}};
    for (int g = 0; g < kTypes; ++g) {
        if (!flow && g != up_geometry) continue;
        Sibling s;
        s.name = host.name + "-" + kGeometries[g].name;
        s.geometry = g;
        s.capacity = kGeometries[g].per_gpu * gpus_;
        s.power = g == up_geometry ? Power::Up : Power::Down;
        host.siblings.push_back(s);
    }
    hosts_.push_back(std::move(host));
}

Figures TraceSim::run(double span) {
    for (int j = 0; j < static_cast<int>(jobs_.size()); ++j) post(jobs_[j].submit, Kind::Arrival, j);
    while (!events_.empty()) {
        const Event e = events_.top();
        events_.pop();
        now_ = e.at;
        if (e.kind == Kind::Arrival) pending_[jobs_[e.a].type].push_back(e.a);
        if (e.kind == Kind::End) on_end(jobs_[e.a]);
        if (e.kind == Kind::Registered) on_registered(e.a, e.b);
        schedule_pass();
        reboot_idle_hosts();
    }
    return figures(span);
}

// First-fit backfill: the first waiting job of each type in job order, until each type's
// first job fits nowhere (every job of a type asks for the same).
void TraceSim::schedule_pass() {
    bool blocked[kTypes] = {};
    for (;;) {
        int next = -1;
        for (int t = 0; t < kTypes; ++t)
            if (!blocked[t] && !pending_[t].empty() &&
                (next < 0 || pending_[t].front() < pending_[next].front()))
                next = t;
        if (next < 0) break;
        if (place(jobs_[pending_[next].front()])) pending_[next].pop_front();
        else blocked[next] = true;
    }
    if (to_resume_.empty()) return;
    // Slurm's power saving pass: one ResumeProgram for the siblings it powers up.
    std::string list;
    for (const auto& name : to_resume_) list += (list.empty() ? "" : ",") + name;
    to_resume_.clear();
    auto out = xpart::reshape_request::resume(*this, list);
    if (!out) fail("resume " + list, out.error());
    for (const auto& line : out->lines) queued_ += line.find(": queued,") != std::string::npos;
}

bool TraceSim::place(Job& job) {
    for (int h = 0; h < kHosts; ++h) {
        const Sibling& s = up(h);
        if (s.geometry == job.type && !s.reboot_requested && static_cast<int>(s.jobs.size()) < s.capacity) {
            allocate(job, h, static_cast<int>(&s - hosts_[h].siblings.data()));
            return true;
        }
    }
    for (int h = 0; h < kHosts; ++h)
        for (int s = 0; s < static_cast<int>(hosts_[h].siblings.size()); ++s) {
            const Sibling& sib = hosts_[h].siblings[s];
            if (sib.power == Power::PoweringUp && sib.geometry == job.type &&
                static_cast<int>(sib.jobs.size()) < sib.capacity) {
                allocate(job, h, s);
                return true;
            }
        }
    int h = -1, s = -1;
    if ((pick_ == Pick::UnaskedHostsFirst && powered_down_sibling(job.type, true, h, s)) ||
        powered_down_sibling(job.type, false, h, s)) {
        hosts_[h].siblings[s].power = Power::PoweringUp;
        to_resume_.push_back(hosts_[h].siblings[s].name);
        allocate(job, h, s);
        return true;
    }
    return false;
}

// A powered-down sibling offering `type`, the first in node order (`unasked_only`: of a host
// whose siblings are asked for nothing and power up for nothing).
bool TraceSim::powered_down_sibling(int type, bool unasked_only, int& host, int& sibling) const {
    for (int h = 0; h < kHosts; ++h) {
        const auto& sibs = hosts_[h].siblings;
        const bool busy = std::any_of(sibs.begin(), sibs.end(), [](const Sibling& s) {
            return s.power == Power::PoweringUp || s.reboot_requested;
        });
        if (unasked_only && busy) continue;
        for (int s = 0; s < static_cast<int>(sibs.size()); ++s)
            if (sibs[s].power == Power::Down && sibs[s].geometry == type) {
                host = h;
                sibling = s;
                return true;
            }
    }
    return false;
}

void TraceSim::allocate(Job& job, int h, int s) {
    Sibling& sib = hosts_[h].siblings[s];
    sib.jobs.push_back(job.id - 1);
    job.host = h;
    job.sibling = s;
    if (sib.power == Power::Up) start(job);
    else job.given_sibling = now_;
}

void TraceSim::start(Job& job) {
    job.start = now_;
    post(now_ + job.duration, Kind::End, job.id - 1);
}

void TraceSim::requeue(Job& job) {
    ++requeued_;
    job.host = job.sibling = -1;
    job.given_sibling = -1;
    auto& q = pending_[job.type];
    q.insert(std::lower_bound(q.begin(), q.end(), job.id - 1), job.id - 1);
}

void TraceSim::on_end(Job& job) {
    Sibling& sib = hosts_[job.host].siblings[job.sibling];
    sib.jobs.erase(std::find(sib.jobs.begin(), sib.jobs.end(), job.id - 1));
    job.done = true;
    // EpilogSlurmctld: a job that ran withdraws nothing, but may let a queued request go.
    auto lines = xpart::reshape_request::withdraw_unwanted(*this, std::to_string(job.id), sib.name);
    if (!lines) fail("withdraw job " + std::to_string(job.id), lines.error());
}

// The asked sibling's slurmd has run the RebootProgram and the host is the target now.
void TraceSim::on_registered(int h, int s) {
    power_down(up(h));
    Sibling& target = hosts_[h].siblings[s];
    target.power = Power::Up;
    ++reshapes_;
    for (int j : target.jobs) start(jobs_[j]);
    // PrologSlurmctld of each job that waited: the node is up, so no wait and no sleep.
    double fake = 0;
    xpart::reshape_request::Pacing pacing{
        [&fake] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(static_cast<long>(fake))); },
        [&fake](std::chrono::milliseconds d) { fake += static_cast<double>(d.count()); }};
    for (int j : std::vector<int>(target.jobs)) {
        auto out = xpart::reshape_request::prolog_wait(*this, std::to_string(jobs_[j].id), target.name,
                                                       std::chrono::seconds(1), pacing, nullptr);
        if (!out) fail("prolog of job " + std::to_string(jobs_[j].id), out.error());
    }
}

// Slurm issues a `reboot ASAP` once the node has no job.
void TraceSim::reboot_idle_hosts() {
    for (int h = 0; h < kHosts; ++h) {
        Sibling& s = up(h);
        if (!s.reboot_requested || s.reboot_issued || !s.jobs.empty()) continue;
        s.reboot_issued = true;
        reboot_program(h);
    }
}

// xpart-reboot.sh: which request this reboot serves, and whether a job still wants it.
void TraceSim::reboot_program(int h) {
    Sibling& active = up(h);
    auto cluster = nodes("");
    if (!cluster) fail("nodes", cluster.error());
    const auto request = xpart::reshape_request::reboot_request(*cluster, active.name, {});
    if (!request) fail(active.name + " rebooted", Error{"no reshape request"});
    auto wanted = xpart::reshape_request::target_wanted(*this, request->target);
    if (!wanted) fail("wanted " + request->target, wanted.error());
    Sibling* target = find(request->target);
    if (*wanted) {
        post(now_ + kReshapeSeconds, Kind::Registered, h, static_cast<int>(target - hosts_[h].siblings.data()));
        return;
    }
    // Comes back under its old name, returned to service; the target powered down.
    active.reboot_requested = active.reboot_issued = false;
    active.reshape_target.clear();
    power_down(*target);
}

void TraceSim::power_down(Sibling& s) {
    for (int j : s.jobs) requeue(jobs_[j]);
    s.jobs.clear();
    s.power = Power::Down;
    s.reboot_requested = s.reboot_issued = false;
    s.reshape_target.clear();
}

Sibling& TraceSim::up(int h) {
    for (auto& s : hosts_[h].siblings)
        if (s.power == Power::Up) return s;
    fail(hosts_[h].name, Error{"no sibling up"});
}

Sibling* TraceSim::find(const std::string& name) {
    for (auto& host : hosts_)
        for (auto& s : host.siblings)
            if (s.name == name) return &s;
    return nullptr;
}

// As `scontrol show node -o` would show it, parsed.
SlurmNode TraceSim::node_of(const Host& host, const Sibling& s) const {
    SlurmNode n;
    n.name = s.name;
    n.group = "xpart_host_" + host.name;
    n.host = host.name;
    n.reshape_target = s.reshape_target;
    n.state.push_back(s.jobs.empty() ? "IDLE" : "MIXED");
    if (s.power == Power::Down) n.state.insert(n.state.end(), {"CLOUD", "POWERED_DOWN"});
    if (s.power == Power::PoweringUp) n.state.insert(n.state.end(), {"CLOUD", "POWERING_UP"});
    if (s.reboot_requested) n.state.insert(n.state.end(), {"DRAIN", s.reboot_issued ? "REBOOT_ISSUED" : "REBOOT_REQUESTED"});
    return n;
}

Result<std::vector<SlurmNode>> TraceSim::nodes(const std::string& nodelist) {
    const auto names = node_names(nodelist);
    std::vector<SlurmNode> out;
    for (const auto& host : hosts_)
        for (const auto& s : host.siblings)
            if (names.empty() || std::find(names.begin(), names.end(), s.name) != names.end())
                out.push_back(node_of(host, s));
    return out;
}

Result<std::vector<std::string>> TraceSim::configuring_jobs(const std::string& node) {
    std::vector<std::string> ids;
    if (const Sibling* s = find(node); s && s->power == Power::PoweringUp)
        for (int j : s->jobs) ids.push_back(std::to_string(jobs_[j].id));
    return ids;
}

Result<std::string> TraceSim::job_state(const std::string& job) {
    const Job& j = jobs_.at(std::stoul(job) - 1);
    if (j.done) return std::string();
    if (j.start >= 0) return std::string("RUNNING");
    return std::string(j.host >= 0 ? "CONFIGURING" : "PENDING");
}

Status TraceSim::scontrol(const std::vector<std::string>& args) {
    const std::string reason = "reason=xpart-reshape:";
    Sibling* node = find(args.back());
    if (args[0] == "reboot" && node) {
        node->reboot_requested = true;
        for (const auto& a : args)
            if (a.rfind(reason, 0) == 0) node->reshape_target = a.substr(reason.size());
        return xpart::ok_status();
    }
    if (args[0] == "cancel_reboot" && node) {
        if (node->reboot_issued) return Error{"Reboot already issued"};
        node->reboot_requested = false;
        node->reshape_target.clear();
        return xpart::ok_status();
    }
    // update nodename=<name> state=UNDRAIN | state=POWER_DOWN_FORCE reason=...
    if (args[0] == "update" && args.size() >= 3) {
        Sibling* target = find(args[1].substr(args[1].find('=') + 1));
        if (target && args[2] == "state=POWER_DOWN_FORCE") power_down(*target);
        if (target) return xpart::ok_status();
    }
    return Error{"scontrol: this simulation does not know that request"};
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    const auto at = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(at), v.end());
    return v[at];
}

Figures TraceSim::figures(double span) const {
    Figures f;
    std::vector<double> waits;
    double busy = 0;
    for (const Job& j : jobs_) {
        if (j.start < 0) {
            ++f.unstarted;
            continue;
        }
        waits.push_back(j.start - j.submit);
        busy += kGeometries[j.type].slices * std::max(0.0, std::min(j.start + j.duration, span) - std::min(j.start, span));
        f.given_sibling += j.given_sibling >= 0;
        f.over_resume_timeout += j.given_sibling >= 0 && j.start - j.given_sibling > kShippedResumeTimeout;
    }
    double total = 0;
    for (double w : waits) total += w;
    f.jobs = static_cast<int>(waits.size());
    f.mean_wait = waits.empty() ? 0 : total / static_cast<double>(waits.size());
    f.p95_wait = percentile(waits, 0.95);
    f.utilisation = busy / (7.0 * gpus_ * kHosts * span);
    f.reshapes_per_hour = reshapes_ / (span / 3600);
    f.queued = queued_;
    f.requeued = requeued_;
    return f;
}

// Each host's geometry for `counts` (how many hosts take each).
std::vector<int> hosts_of(const int counts[kTypes]) {
    std::vector<int> g;
    for (int t = 0; t < kTypes; ++t) g.insert(g.end(), counts[t], t);
    return g;
}

std::string mix_name(const std::vector<int>& geometries) {
    std::string name;
    for (int t = 0; t < kTypes; ++t) {
        const auto n = std::count(geometries.begin(), geometries.end(), t);
        if (n) name += (name.empty() ? "" : " ") + std::string(kGeometries[t].name) + ":" + std::to_string(n);
    }
    return name;
}

struct Row {
    std::string what, mix;
    std::vector<int> geometries;  // each host's (up) geometry
    Figures f;
};

void print_row(const Row& r) {
    std::printf("| %s | %s | %.1f%% | %.0f | %.0f | %.2f | %d |\n", r.what.c_str(), r.mix.c_str(),
                100 * r.f.utilisation, r.f.mean_wait / 60, r.f.p95_wait / 60, r.f.reshapes_per_hour, r.f.jobs);
}

// Every static mix that offers each type the trace asks for: (best, worst) by mean wait.
std::pair<Row, Row> static_extremes(const std::vector<Job>& jobs, int gpus, double span) {
    bool asked[kTypes] = {};
    for (const Job& j : jobs) asked[j.type] = true;
    Row best, worst;
    bool any = false;
    for (int a = 0; a <= kHosts; ++a)
        for (int b = 0; a + b <= kHosts; ++b) {
            const int counts[kTypes] = {a, b, kHosts - a - b};
            bool offered = true;
            for (int t = 0; t < kTypes; ++t) offered = offered && (!asked[t] || counts[t] > 0);
            if (!offered) continue;
            const auto geometries = hosts_of(counts);
            Row row{"static", mix_name(geometries), geometries,
                    TraceSim(jobs, gpus, geometries, false, Pick::NodeOrder).run(span)};
            if (row.f.unstarted) continue;
            if (!any || row.f.mean_wait < best.f.mean_wait) best = row;
            if (!any || row.f.mean_wait > worst.f.mean_wait) worst = row;
            any = true;
        }
    best.what = "best static";
    worst.what = "worst static";
    return {best, worst};
}

void print_flow_notes(const char* what, const Figures& f) {
    std::printf("  %s: %d requests queued behind another, %d jobs requeued, %d never started; "
                "%d jobs given a powered-down sibling, %d of them waited over %.0f s for it\n",
                what, f.queued, f.requeued, f.unstarted, f.given_sibling, f.over_resume_timeout,
                kShippedResumeTimeout);
}

void bench_trace(const TraceShape& shape, unsigned seed) {
    std::mt19937 rng(seed);
    const auto jobs = make_trace(shape, rng);
    const double span = span_seconds(shape);
    int per_type[kTypes] = {};
    for (const Job& j : jobs) ++per_type[j.type];
    std::printf("\n== %s: %d hosts x %d A100 80GB, %.0f h, %zu jobs (%d %s, %d %s, %d %s), seed %u\n\n", shape.name,
                kHosts, shape.gpus_per_host, span / 3600, jobs.size(), per_type[0], kTypeNames[0], per_type[1], kTypeNames[1],
                per_type[2], kTypeNames[2], seed);
    const int gpus = shape.gpus_per_host;
    const auto [best, worst] = static_extremes(jobs, gpus, span);
    const Row flow{"flow, node order", "from best static", best.geometries,
                   TraceSim(jobs, gpus, best.geometries, true, Pick::NodeOrder).run(span)};
    const Row unasked{"flow, unasked hosts first", "from best static", best.geometries,
                      TraceSim(jobs, gpus, best.geometries, true, Pick::UnaskedHostsFirst).run(span)};
    std::printf("| run | geometries (hosts) | GPU-slice use | mean wait (min) | p95 wait (min) | reshapes/h | jobs |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const Row& r : {flow, unasked, best, worst}) print_row(r);
    std::printf("\n");
    print_flow_notes(flow.what.c_str(), flow.f);
    print_flow_notes(unasked.what.c_str(), unasked.f);
}

// The mix turning every 6 h for a week: 1g-heavy, 3g-heavy, 7g-heavy.
TraceShape mixed_phases() {
    TraceShape shape{"mixes turning every 6 h (85/10/5, 15/75/10, 20/20/60), load 0.7", 4, {}};
    const Phase heavy[kTypes] = {{6, {0.85, 0.1, 0.05}, 0.7}, {6, {0.15, 0.75, 0.1}, 0.7}, {6, {0.2, 0.2, 0.6}, 0.7}};
    for (int i = 0; i < 28; ++i) shape.phases.push_back(heavy[i % kTypes]);
    return shape;
}

// A day of (almost) one type, then the next, for a week: the case geometry on demand is for.
TraceShape day_phases(const char* name, int gpus_per_host) {
    TraceShape shape{name, gpus_per_host, {}};
    const Phase day[kTypes] = {{24, {0.9, 0.1, 0}, 0.5}, {24, {0, 1, 0}, 0.5}, {24, {0, 0, 1}, 0.5}};
    for (int i = 0; i < 7; ++i) shape.phases.push_back(day[i % kTypes]);
    return shape;
}

}  // namespace

int main() {
    std::printf("trace_bench: seed %u, reshape %.0f s, durations log-normal (median %.0f min, sigma %.1f, "
                "%.0f min to %.0f h)\n",
                kSeed, kReshapeSeconds, kMedianSeconds / 60, kSigma, kShortest / 60, kLongest / 3600);
    const TraceShape steady{"steady 60/30/10, load 0.7", 4, {{168, {0.6, 0.3, 0.1}, 0.7}}};
    for (const auto& shape : {steady, mixed_phases(), day_phases("a type a day (90/10/0, 0/100/0, 0/0/100), load 0.5", 4),
                              day_phases("a type a day, load 0.5, one GPU a host", 1)})
        bench_trace(shape, kSeed);
    return 0;
}
