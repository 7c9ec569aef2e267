// A recorded cluster for the reshape flow's tests: a SlurmClient that answers from `scontrol
// show node -o` lines and records what it is told (scontrol verbs in `refuse` fail), and a
// clock the waits' sleeps advance.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "reshape_request/requests.hpp"

namespace xpart::reshape_request {

class FakeSlurm : public SlurmClient {
public:
    std::string cluster;
    std::map<std::string, std::vector<std::string>> configuring;  // node -> jobs
    std::vector<std::string> states = {"CONFIGURING"};            // job_state answers, the last repeats
    std::vector<std::string> refuse;                              // scontrol verbs that fail
    std::vector<std::string> told;                                // scontrol calls, joined
    int node_rpcs = 0, job_rpcs = 0;
    bool jobs_unreadable = false;                                 // configuring_jobs fails
    std::function<std::string(int)> cluster_at;                   // per node RPC, when set

    Result<std::vector<SlurmNode>> nodes(const std::string& nodelist) override {
        ++node_rpcs;
        auto all = parse_nodes(cluster_at ? cluster_at(node_rpcs) : cluster);
        if (nodelist.empty()) return all;
        std::vector<SlurmNode> some;
        for (auto& n : all)
            if (n.name == nodelist) some.push_back(n);
        return some;
    }
    Result<std::vector<std::string>> configuring_jobs(const std::string& node) override {
        ++job_rpcs;
        if (jobs_unreadable) return Error{"squeue: error: Unable to contact slurm controller"};
        return configuring[node];
    }
    Result<std::string> job_state(const std::string&) override {
        ++job_rpcs;
        auto s = states.front();
        if (states.size() > 1) states.erase(states.begin());
        return s;
    }
    Result<std::vector<std::string>> hostnames(const std::string& nodelist) override {
        if (nodelist == "small,big") return std::vector<std::string>{"small", "big"};
        return std::vector<std::string>{nodelist};
    }
    Status scontrol(const std::vector<std::string>& args) override {
        std::string call;
        for (const auto& a : args) call += (call.empty() ? "" : " ") + a;
        told.push_back(call);
        for (const auto& verb : refuse)
            if (args.front() == verb) return Error{"scontrol " + verb + ": REBOOT on node in progress"};
        return ok_status();
    }
};

// A clock the sleeps advance.
struct FakeTime {
    std::chrono::steady_clock::time_point t{};
    std::vector<long> slept;
    Pacing pacing() {
        return {[this] { return t; }, [this](std::chrono::milliseconds d) {
                    slept.push_back(d.count());
                    t += d;
                }};
    }
};

}  // namespace xpart::reshape_request
