#include "reshape_request/reboot_program.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "libxpart/defaults.hpp"
#include "libxpart/text.hpp"
#include "reshape_request/sibling_units.hpp"

namespace xpart::reshape_request {

namespace {

std::string one_line(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
}

// Registered and in no state of a reboot or a power change: it answers.
bool answers(const SlurmNode& node) {
    if (node.state.empty()) return false;
    return std::none_of(node.state.begin(), node.state.end(), [](const std::string& word) {
        return word.find("NOT_RESPONDING") != std::string::npos || word.find("REBOOT") != std::string::npos ||
               word.find("POWER") != std::string::npos;
    });
}

}  // namespace

RebootPlan plan_reboot(SlurmClient& slurm, const Request& request, const Reshape& reshape) {
    const std::string& me = request.active;
    const std::string& target = request.target;
    auto wanted = target_wanted(slurm, target);
    if (wanted && !*wanted)
        return {me, target, "xpart-reshape withdrawn: no job waits for " + target, true,
                me + " -> " + target + " withdrawn: no job waits for " + target};
    const ReshapeAttempt attempt = reshape(target);
    if (attempt.done)
        return {target, me, "xpart-reshape: host is " + target + " now", false,
                me + " -> " + target + ": " + one_line(attempt.output)};
    return refused_plan(request, first_line(attempt.output));
}

RebootPlan refused_plan(const Request& request, const std::string& why) {
    return {request.active, request.target, "xpart-reshape refused: " + why, true,
            request.active + " -> " + request.target + " refused: " + why};
}

void finish_reboot(SlurmClient& slurm, const RebootPlan& plan, const RebootFinish& how, const Pacing& pacing) {
    using std::chrono::milliseconds;
    auto since_signal = pacing.now();
    auto waited = milliseconds(0);
    while (how.slurmd_running()) {
        pacing.sleep(milliseconds(100));
        waited += milliseconds(100);
        if (pacing.now() - since_signal >= how.resignal_every) {
            how.log("slurmd still runs " + std::to_string(waited.count() / 1000) +
                    " s after its reboot: SIGTERM again");
            how.signal_slurmd();
            since_signal = pacing.now();
        }
    }
    // A node whose slurmd does not start is DOWN with the line that says why, not resumed.
    std::string down;
    if (const Status made = how.make_geometry(plan.next); !made)
        down = "xpart-reshape: " + plan.next + "'s geometry not made: " + first_line(made.error().message) +
               ": slurmd not started";
    else if (Status started = how.start_slurmd(plan.next); !started)
        down = "xpart-reshape: slurmd not started as " + plan.next + ": " + first_line(started.error().message);
    if (!down.empty()) {
        how.log(down + ", " + plan.next + " set DOWN");
        if (Status st = slurm.scontrol({"update", "nodename=" + plan.next, "state=DOWN", "reason=" + down}); !st)
            how.log("setting " + plan.next + " DOWN failed: " + st.error().message);
    }
    // A refusal, a withdrawal or a killed reshape that outlasted ResumeTimeout: slurmctld has set
    // the sibling asked for DOWN meanwhile, and DOWN it would stay, powered down, never asked
    // for again. It is this attempt's doing: the sibling is returned to service first (which
    // clears its reason), then powered down with the reason, as any refusal leaves it.
    if (plan.refused)
        if (auto asked = slurm.nodes(plan.down); asked && asked->size() == 1 && asked->front().resume_timed_out()) {
            const Status st = slurm.scontrol({"update", "nodename=" + plan.down, "state=RESUME"});
            how.log(plan.down + " was DOWN at ResumeTimeout while this reshape was undone: " +
                    (st ? std::string("resumed") : "resuming it failed: " + st.error().message));
        }
    if (Status st = slurm.scontrol({"update", "nodename=" + plan.down, "state=POWER_DOWN_FORCE", "reason=" + plan.reason});
        !st)
        how.log("powering " + plan.down + " down failed: " + st.error().message);
    if (!down.empty() || !plan.refused) return;
    const auto deadline = pacing.now() + how.resume_within;
    for (milliseconds pause{0};;) {
        auto node = slurm.nodes(plan.next);
        if (node && node->size() == 1 && answers(node->front())) {
            // Registered in service already (Slurm did not hold it DOWN): RESUME would be refused.
            if (!node->front().has("DOWN") && !node->front().has("DRAIN")) return;
            break;
        }
        pause = next_pause(pause);
        if (pacing.now() + pause > deadline) break;  // resumed anyway: Slurm says why if it cannot
        pacing.sleep(pause);
    }
    if (Status st = slurm.scontrol({"update", "nodename=" + plan.next, "state=RESUME"}); !st)
        how.log("resuming " + plan.next + " failed: " + st.error().message);
}

namespace {

// Each `%n` in the words replaced with the NodeName (not expanded again in it); false if none.
bool name_node(std::vector<std::string>& words, const std::string& node) {
    bool named = false;
    for (auto& word : words)
        for (std::size_t at = word.find("%n"); at != std::string::npos; at = word.find("%n", at + node.size())) {
            word.replace(at, 2, node);
            named = true;
        }
    return named;
}

}  // namespace

std::vector<std::string> slurmd_start_command(const std::string& setting, const std::string& node) {
    std::vector<std::string> argv = split_words(setting);
    if (!name_node(argv, node)) argv.push_back(node);
    return argv;
}

std::optional<std::string> slurmd_unit_name(const std::string& setting, const std::string& node) {
    std::vector<std::string> words{setting};
    if (split_words(setting).size() != 1 || node.empty() || node.find('/') != std::string::npos ||
        !name_node(words, node))
        return std::nullopt;
    return words.front();
}

std::vector<std::vector<std::string>> slurmd_unit_commands(const std::string& unit, const RebootPlan& plan) {
    const bool leaves = !plan.refused && plan.down != plan.next;
    const auto next = slurmd_unit_name(unit, plan.next);
    const auto left = leaves ? slurmd_unit_name(unit, plan.down) : next;
    if (!next || !left) return {};
    if (!leaves) return {{"systemctl", "enable", "--now", "--quiet", *next}};
    return {{"systemctl", "enable", "--quiet", *next},
            {"systemctl", "disable", "--quiet", *left},
            {"systemctl", "start", *next}};
}

std::string leave_unit_scope(long pid) { return "xpart-reboot-" + std::to_string(pid) + ".scope"; }

std::vector<std::string> leave_unit_command(long pid) {
    // StartTransientUnit(name, mode, properties a(sv), auxiliary units a(sa(sv))).
    return {"busctl", "call", "--quiet", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))",
            leave_unit_scope(pid), "fail",
            "2", "PIDs", "au", "1", std::to_string(pid), "CollectMode", "s", "inactive-or-failed",
            "0"};
}

std::vector<std::string> host_watch_command(const std::string& xpart, const std::string& node,
                                            const std::vector<std::string>& env) {
    const bool nameable = !node.empty() && std::all_of(node.begin(), node.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    if (!nameable) return {};
    std::vector<std::string> argv{"systemd-run", "--quiet", "--collect", "--no-block",
                                  "--unit=xpart-reshape-watch-" + node + ".service"};
    for (const auto& pair : env) argv.push_back("--setenv=" + pair);
    argv.insert(argv.end(), {"--", xpart, "reshape-request", "watch", node});
    return argv;
}

bool sibling_powers_up(const std::vector<SlurmNode>& cluster, const std::string& node) {
    const auto siblings = siblings_of(cluster, node);
    return std::any_of(cluster.begin(), cluster.end(), [&](const SlurmNode& n) {
        return n.has("POWERING_UP") && std::find(siblings.begin(), siblings.end(), n.name) != siblings.end();
    });
}

bool start_reports_reboot(const SlurmNode& node) {
    return node.has("REBOOT_ISSUED") || node.has("POWERING_UP");
}

std::string slurmd_reboot_flag_text(bool reboot) {
    return std::string(defaults::kSlurmdRebootVariable) + "=" + (reboot ? "-b" : "") + "\n";
}

}  // namespace xpart::reshape_request
