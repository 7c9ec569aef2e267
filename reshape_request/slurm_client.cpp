#include "reshape_request/slurm_client.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "libxpart/text.hpp"
#include "process/spawn.hpp"

namespace xpart::reshape_request {

namespace {

// slurmctld answers in milliseconds; MessageTimeout's default is 10 s.
constexpr std::chrono::seconds kCommandTimeout{30};

class CommandClient final : public SlurmClient {
public:
    explicit CommandClient(EnvMap env) : env_(std::move(env)) {}

    Result<std::vector<SlurmNode>> nodes(const std::string& nodelist) override {
        std::vector<std::string> argv = {"scontrol", "show", "node", "-o"};
        if (!nodelist.empty()) argv.push_back(nodelist);
        auto out = run(argv);
        if (!out) return out.error();
        return parse_nodes(*out);
    }

    Result<std::vector<std::string>> configuring_jobs(const std::string& node) override {
        auto out = run({"squeue", "-h", "-t", "CONFIGURING", "-w", node, "-o", "%i"});
        if (!out) return out.error();
        // stdout and stderr come together: a job id starts with a digit ("123", "123_4").
        std::vector<std::string> jobs;
        for (auto& w : words(*out))
            if (std::isdigit(static_cast<unsigned char>(w[0]))) jobs.push_back(w);
        return jobs;
    }

    Result<std::string> job_state(const std::string& job) override {
        // A job slurmctld has purged is an error to squeue: its state is "" then, not a failure.
        auto out = run({"squeue", "-h", "-j", job, "-o", "%T"}, true);
        if (!out) return out.error();
        for (auto& w : words(*out))
            if (std::all_of(w.begin(), w.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }))
                return w;
        return std::string();
    }

    Result<std::vector<std::string>> hostnames(const std::string& nodelist) override {
        auto out = run({"scontrol", "show", "hostnames", nodelist});
        if (!out) return out.error();
        return words(*out);
    }

    Status scontrol(const std::vector<std::string>& args) override {
        std::vector<std::string> argv = {"scontrol"};
        argv.insert(argv.end(), args.begin(), args.end());
        auto out = run(argv);
        if (!out) return out.error();
        return ok_status();
    }

private:
    // The command's output; Error naming it with its first line when it fails.
    Result<std::string> run(const std::vector<std::string>& argv, bool failure_is_empty = false) {
        auto done = process::run_with_input(argv, env_, "", kCommandTimeout);
        if (!done) return done.error();
        if (done->exit_status == 0) return done->output;
        if (failure_is_empty) return std::string();
        std::string command;
        for (const auto& a : argv) command += (command.empty() ? "" : " ") + a;
        const auto first = trim(done->output.substr(0, done->output.find('\n')));
        return Error{command + ": exit " + std::to_string(done->exit_status) + (first.empty() ? "" : ": " + first)};
    }

    static std::vector<std::string> words(const std::string& text) {
        std::vector<std::string> out;
        for (auto& line : split(text, '\n'))
            if (auto word = trim(line); !word.empty()) out.push_back(word);
        return out;
    }

    EnvMap env_;
};

}  // namespace

std::unique_ptr<SlurmClient> command_client(EnvMap env) {
    return std::make_unique<CommandClient>(std::move(env));
}

}  // namespace xpart::reshape_request
