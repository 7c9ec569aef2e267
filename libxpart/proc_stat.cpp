#include "libxpart/proc_stat.hpp"

#include <sstream>

namespace xpart {

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
        close + 2 >= text.size() || text[close + 1] != ' ')
        return std::nullopt;
    ProcStat out;
    out.comm = std::string(text.substr(open + 1, close - open - 1));
    out.state = text[close + 2];
    std::istringstream fields{std::string(text.substr(close + 3))};
    long parent = 0;
    if (fields >> parent && parent > 0) out.ppid = static_cast<pid_t>(parent);
    std::string skip;
    for (int field = 5; field < 22; ++field) fields >> skip;
    unsigned long long start = 0;
    if (fields >> start) out.start_time = start;
    return out;
}

std::optional<ProcStat> read_proc_stat(const RootFs& proc, pid_t pid) {
    if (pid <= 0) return std::nullopt;
    auto text = proc.read("/proc/" + std::to_string(pid) + "/stat");
    if (!text) return std::nullopt;
    return parse_proc_stat(*text);
}

}  // namespace xpart
