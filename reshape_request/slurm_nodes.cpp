#include "reshape_request/slurm_nodes.hpp"

#include <algorithm>

#include "libxpart/text.hpp"

namespace xpart::reshape_request {

namespace {

constexpr std::string_view kReshapeReason = "Reason=xpart-reshape:";
constexpr std::string_view kReasonField = " Reason=";
constexpr std::string_view kHostFeature = "xpart_host_";
// What slurmctld's power_save.c sets, the same on 22.05 to 26.05.
constexpr std::string_view kResumeTimeoutReason = "ResumeTimeout reached";

// The value of " Key=" in a one-line record, up to the next space ("" when absent).
std::string field(std::string_view line, std::string_view key) {
    for (std::size_t at = 0; (at = line.find(key, at)) != std::string_view::npos; at += key.size()) {
        if (at != 0 && line[at - 1] != ' ') continue;  // "ActiveFeatures=" is not "Features="
        const auto start = at + key.size();
        return std::string(line.substr(start, line.find(' ', start) - start));
    }
    return {};
}

SlurmNode parse_node(std::string_view line) {
    SlurmNode node;
    node.name = field(line, "NodeName=");
    for (auto& word : split(field(line, "State="), '+')) {
        // scontrol marks a not-responding base state with '*' (IDLE*): the flag says it too.
        word.erase(std::remove(word.begin(), word.end(), '*'), word.end());
        if (!word.empty()) node.state.push_back(word);
    }
    for (const auto& feature : split(field(line, "AvailableFeatures="), ','))
        if (feature.rfind(kHostFeature, 0) == 0) node.group = feature;
    node.host = field(line, "NodeHostName=");
    if (node.group.empty()) node.group = "host:" + node.host;
    // The reason runs to the end of its field: "xpart-reshape:gpu1-3g [slurm@2026-12-04T03:00:00]".
    if (auto at = line.find(kReasonField); at != std::string_view::npos) {
        const auto start = at + kReasonField.size();
        node.reason = std::string(line.substr(start, line.find(" [", start) - start));
    }
    if (auto at = line.find(kReshapeReason); at != std::string_view::npos && (at == 0 || line[at - 1] == ' ')) {
        const auto start = at + kReshapeReason.size();
        const auto end = line.find_first_of(" [", start);
        node.reshape_target = std::string(line.substr(start, end - start));
    }
    return node;
}

}  // namespace

bool SlurmNode::has(std::string_view word) const {
    return std::find(state.begin(), state.end(), word) != state.end();
}

bool SlurmNode::powered_down() const {
    return has("POWERED_DOWN") || has("POWER_DOWN") || has("POWERING_DOWN");
}

bool SlurmNode::waiting_to_register() const {
    return has("POWERING_UP") || has("NOT_RESPONDING") || powered_down();
}

bool SlurmNode::resume_timed_out() const { return has("DOWN") && reason == kResumeTimeoutReason; }

std::vector<SlurmNode> parse_nodes(std::string_view text) {
    std::vector<SlurmNode> nodes;
    for (const auto& line : split(text, '\n'))
        if (line.rfind("NodeName=", 0) == 0) nodes.push_back(parse_node(line));
    return nodes;
}

}  // namespace xpart::reshape_request
