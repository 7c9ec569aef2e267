#include "reshape_request/requests.hpp"

#include <algorithm>
#include <thread>

namespace xpart::reshape_request {

namespace {

constexpr std::chrono::milliseconds kFirstPause{250};
constexpr std::chrono::milliseconds kLongestPause{2000};
constexpr int kJobCheckEvery = 5;  // polls
constexpr std::chrono::milliseconds kTurnLook{100};
constexpr std::chrono::milliseconds kFirstWatchPause{2000};
constexpr std::chrono::milliseconds kLongestWatchPause{5000};

const SlurmNode* find_node(const std::vector<SlurmNode>& cluster, const std::string& name) {
    auto it = std::find_if(cluster.begin(), cluster.end(), [&](const SlurmNode& n) { return n.name == name; });
    return it == cluster.end() ? nullptr : &*it;
}

bool asked(const SlurmNode& node) {
    return node.has("REBOOT_REQUESTED") || node.has("REBOOT_ISSUED");
}

// The job that came first: the lowest id ("123" and an array's "123_4" by their number).
unsigned long long job_number(const std::string& id) {
    unsigned long long n = 0;
    for (char c : id) {
        if (c < '0' || c > '9') break;
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    return n;
}

Status ask(SlurmClient& slurm, const std::string& active, const std::string& target) {
    return slurm.scontrol({"reboot", "ASAP", "nextstate=DOWN", "reason=xpart-reshape:" + target, active});
}

// Withdraws one request: its line.
std::string withdraw(SlurmClient& slurm, const Request& request, const std::string& why) {
    const std::string what = request.active + " -> " + request.target;
    // Cancelled first: the host takes jobs again at once. Slurm refuses once the reboot is
    // issued; the RebootProgram then asks target_wanted itself.
    if (auto s = slurm.scontrol({"cancel_reboot", request.active}); !s)
        return what + ": not withdrawn (" + s.error().message + ")";
    // Slurm 22.05's cancel_reboot undrains the node but leaves it out of scheduling (its
    // _undo_reboot_asap does not make it available; 26.05's does): UNDRAIN has it register
    // again, which does. Harmless on a series without the slip.
    std::string also;
    if (auto u = slurm.scontrol({"update", "nodename=" + request.active, "state=UNDRAIN"}); !u)
        also = " (" + request.active + " not undrained: " + u.error().message + ")";
    auto s = slurm.scontrol({"update", "nodename=" + request.target, "state=POWER_DOWN_FORCE",
                             "reason=xpart-reshape withdrawn: no job waits for it"});
    return what + ": withdrawn, " + why + also +
           (s ? "" : " (" + request.target + " not powered down: " + s.error().message + ")");
}

}  // namespace

const SlurmNode* up_sibling(const std::vector<SlurmNode>& cluster, const std::string& group) {
    const SlurmNode* up = nullptr;
    for (const auto& node : cluster)
        if (node.group == group && !node.powered_down() && !node.has("POWERING_UP")) {
            up = &node;
            break;
        }
    // A sibling that gave the host up for one that has registered since: the host is that
    // one's (the RebootProgram powers the old one down a moment after the new slurmd starts).
    if (up && asked(*up))
        if (const SlurmNode* now = find_node(cluster, up->reshape_target);
            now && now != up && now->group == group && !now->waiting_to_register())
            return now;
    return up;
}

Result<Outcome> resume(SlurmClient& slurm, const std::string& nodelist) {
    auto targets = slurm.hostnames(nodelist);
    if (!targets) return targets.error();
    auto cluster = slurm.nodes("");
    if (!cluster) return cluster.error();
    Outcome out;
    for (const auto& name : *targets) {
        const SlurmNode* target = find_node(*cluster, name);
        const SlurmNode* active = target ? up_sibling(*cluster, target->group) : nullptr;
        if (!target) {
            out.lines.push_back(name + ": no such node");
            out.all_made = false;
        } else if (!active) {
            // The host's slurmd is down (a host off, a slurmd that did not start): Slurm marks
            // the target DOWN after ResumeTimeout and requeues its job.
            out.lines.push_back(name + ": no sibling of " + target->group + " is up to reshape from");
            out.all_made = false;
        } else if (asked(*active) && active->reshape_target == name) {
            out.lines.push_back(name + ": " + active->name + " is asked for it already");
        } else if (asked(*active)) {
            out.lines.push_back(name + ": queued, " + active->name + " reshapes for " +
                                (active->reshape_target.empty() ? std::string("a reboot") : active->reshape_target) +
                                " first");
        } else if (auto s = ask(slurm, active->name, name); !s) {
            out.lines.push_back(name + ": scontrol reboot " + active->name + " failed: " + s.error().message);
            out.all_made = false;
        } else {
            out.lines.push_back(name + ": asked " + active->name + " (" + target->group + ") to reshape");
        }
    }
    return out;
}

Result<Outcome> ask_queued(SlurmClient& slurm, const std::vector<std::string>& nodes) {
    auto cluster = slurm.nodes("");
    if (!cluster) return cluster.error();
    std::vector<std::string> groups;
    for (const auto& name : nodes)
        if (const SlurmNode* n = find_node(*cluster, name);
            n && std::find(groups.begin(), groups.end(), n->group) == groups.end())
            groups.push_back(n->group);
    Outcome out;
    for (const auto& group : groups) {
        const SlurmNode* active = up_sibling(*cluster, group);
        if (!active || asked(*active)) continue;
        std::string next;
        unsigned long long first = 0;
        for (const auto& node : *cluster) {
            if (node.group != group || !node.has("POWERING_UP")) continue;
            auto waiting = slurm.configuring_jobs(node.name);
            if (!waiting) return waiting.error();
            for (const auto& job : *waiting)
                if (next.empty() || job_number(job) < first) {
                    next = node.name;
                    first = job_number(job);
                }
        }
        if (next.empty()) continue;
        if (auto s = ask(slurm, active->name, next); !s) {
            out.lines.push_back(next + ": scontrol reboot " + active->name + " failed: " + s.error().message);
            out.all_made = false;
        } else {
            out.lines.push_back(next + ": its turn, asked " + active->name + " to reshape (job " +
                                std::to_string(first) + " waits longest)");
        }
    }
    return out;
}

std::vector<Request> pending_requests(const std::vector<SlurmNode>& cluster,
                                      const std::vector<std::string>& job_nodes) {
    std::vector<Request> requests;
    for (const auto& name : job_nodes) {
        const SlurmNode* target = find_node(cluster, name);
        if (!target || !target->has("POWERING_UP")) continue;
        for (const auto& node : cluster)
            if (node.group == target->group && node.name != name && node.reshape_target == name &&
                node.has("REBOOT_REQUESTED") && !node.has("REBOOT_ISSUED") && !node.powered_down())
                requests.push_back({node.name, name});
    }
    return requests;
}

Result<std::vector<std::string>> withdraw_unwanted(SlurmClient& slurm, const std::string& job,
                                                   const std::string& nodelist) {
    auto job_nodes = slurm.hostnames(nodelist);
    if (!job_nodes) return job_nodes.error();
    auto cluster = slurm.nodes("");
    if (!cluster) return cluster.error();
    std::vector<std::string> lines;
    for (const auto& request : pending_requests(*cluster, *job_nodes)) {
        const std::string what = request.active + " -> " + request.target;
        auto waiting = slurm.configuring_jobs(request.target);
        if (!waiting) {
            lines.push_back(what + ": kept (" + waiting.error().message + ")");
            continue;
        }
        waiting->erase(std::remove(waiting->begin(), waiting->end(), job), waiting->end());
        if (!waiting->empty()) {
            lines.push_back(what + ": kept, job " + waiting->front() + " waits for " + request.target);
            continue;
        }
        lines.push_back(withdraw(slurm, request, "job " + job + " left and no job waits for " + request.target));
    }
    // A host no longer asked for anything may have a request queued behind the one withdrawn.
    if (std::none_of(cluster->begin(), cluster->end(), [](const SlurmNode& n) { return n.has("POWERING_UP"); }))
        return lines;
    auto queued = ask_queued(slurm, *job_nodes);
    if (!queued) {
        lines.push_back("queued requests not asked: " + queued.error().message);
        return lines;
    }
    lines.insert(lines.end(), queued->lines.begin(), queued->lines.end());
    return lines;
}

std::optional<Request> reboot_request(const std::vector<SlurmNode>& cluster, const std::string& own,
                                      const std::vector<std::string>& host_names) {
    for (const auto& node : cluster) {
        if (node.reshape_target.empty() || !asked(node)) continue;
        const bool mine = own.empty() ? std::find(host_names.begin(), host_names.end(), node.host) != host_names.end()
                                      : node.name == own;
        if (mine) return Request{node.name, node.reshape_target};
    }
    return std::nullopt;
}

Result<bool> target_wanted(SlurmClient& slurm, const std::string& target) {
    auto waiting = slurm.configuring_jobs(target);
    if (!waiting) return waiting.error();
    return !waiting->empty();
}

Pacing real_pacing() {
    return {[] { return std::chrono::steady_clock::now(); },
            [](std::chrono::milliseconds pause) { std::this_thread::sleep_for(pause); }};
}

std::chrono::milliseconds next_pause(std::chrono::milliseconds previous) {
    if (previous.count() <= 0) return kFirstPause;
    return std::min(kLongestPause, std::chrono::milliseconds(previous.count() * 3 / 2));
}

Result<WaitEnd> wait_registered(SlurmClient& slurm, const std::string& job, const std::string& nodelist,
                                std::chrono::seconds timeout, const Pacing& pacing, PollTurn* turn) {
    const auto deadline = pacing.now() + timeout;
    std::chrono::milliseconds pause{0};
    for (int poll = 1;; ++poll) {
        while (turn && !turn->take()) {
            const auto now = pacing.now();
            if (now >= deadline) return WaitEnd::TimedOut;
            pacing.sleep(std::min(kTurnLook, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)));
        }
        auto nodes = slurm.nodes(nodelist);
        if (!nodes) return nodes.error();
        const bool waiting = std::any_of(nodes->begin(), nodes->end(),
                                         [](const SlurmNode& n) { return n.waiting_to_register(); });
        if (!waiting) return WaitEnd::Registered;
        const bool request_over = std::any_of(nodes->begin(), nodes->end(), [](const SlurmNode& n) {
            return n.powered_down() && !n.has("POWERING_UP");
        });
        if (request_over || poll % kJobCheckEvery == 0) {
            auto state = slurm.job_state(job);
            if (!state) return state.error();
            if (*state != "CONFIGURING") return WaitEnd::JobGone;
        }
        pause = next_pause(pause);
        const auto now = pacing.now();
        if (now >= deadline) return WaitEnd::TimedOut;
        pacing.sleep(std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)));
    }
}

}  // namespace xpart::reshape_request

namespace xpart::reshape_request {

Result<Outcome> prolog_wait(SlurmClient& slurm, const std::string& job, const std::string& nodelist,
                            std::chrono::seconds timeout, const Pacing& pacing, PollTurn* turn) {
    auto end = wait_registered(slurm, job, nodelist, timeout, pacing, turn);
    if (!end) return end.error();
    if (*end == WaitEnd::TimedOut)
        return Outcome{{"job " + job + ": " + nodelist + " not registered after " + std::to_string(timeout.count()) + " s"}};
    if (*end == WaitEnd::JobGone) return Outcome{};
    // The sibling is up: a request queued behind the one that made it may go now.
    auto names = slurm.hostnames(nodelist);
    if (!names) return names.error();
    return ask_queued(slurm, *names);
}

}  // namespace xpart::reshape_request

namespace xpart::reshape_request {

Status watch_host(SlurmClient& slurm, const std::string& node, std::chrono::seconds timeout, const Pacing& pacing,
                  PollTurn* turn, const LineSink& tell) {
    const auto tell_all = [&tell](const Outcome& outcome) {
        for (const auto& line : outcome.lines) tell(line);
    };
    if (turn && !turn->take()) return ok_status();  // another watcher has the host
    const auto deadline = pacing.now() + timeout;
    std::chrono::milliseconds pause{0};
    int unwanted = 0;
    for (;;) {
        auto cluster = slurm.nodes("");
        if (!cluster) return cluster.error();
        const SlurmNode* self = find_node(*cluster, node);
        if (!self) return Error{node + ": no such node"};
        std::vector<std::string> powering_up;
        for (const auto& n : *cluster)
            if (n.group == self->group && n.has("POWERING_UP")) powering_up.push_back(n.name);
        if (powering_up.empty()) return ok_status();
        const auto pending = pending_requests(*cluster, powering_up);
        if (pending.empty()) {
            unwanted = 0;
            auto queued = ask_queued(slurm, powering_up);  // nothing when the host is asked already
            if (!queued) return queued.error();
            tell_all(*queued);
        }
        for (const auto& request : pending) {
            auto waiting = slurm.configuring_jobs(request.target);
            if (!waiting) return waiting.error();
            // Two polls in a row: a job given the target between them is not left behind.
            unwanted = waiting->empty() ? unwanted + 1 : 0;
            if (unwanted < 2) continue;
            tell(withdraw(slurm, request, "no job waited for " + request.target + " at two polls"));
            auto queued = ask_queued(slurm, powering_up);
            if (queued) tell_all(*queued);
            unwanted = 0;
        }
        pause = pause.count() <= 0 ? kFirstWatchPause
                                   : std::min(kLongestWatchPause, std::chrono::milliseconds(pause.count() * 3 / 2));
        const auto now = pacing.now();
        if (now >= deadline) return ok_status();
        pacing.sleep(std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)));
    }
}

}  // namespace xpart::reshape_request
