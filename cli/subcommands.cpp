#include "cli/subcommands.hpp"

namespace xpart::cli {

const std::vector<Subcommand>& all_subcommands() {
    static const std::vector<Subcommand> table = {
        {"discover", add_discover_command},
        {"cgroup", add_cgroup_command},
        {"launch", add_launch_command},
        {"mps", add_mps_command},
        {"node", add_node_command},
        {"geometry", add_geometry_command},
        {"reshape", add_reshape_command},
        {"reshape-request", add_reshape_request_command},
    };
    return table;
}

std::vector<Subcommand> subcommands_for(int argc, const char* const* argv) {
    for (int i = 1; i < argc; ++i) {
        std::string_view word = argv[i];
        if (word == "--root") {  // the only global option that takes a value
            ++i;
            continue;
        }
        if (word.rfind("--root=", 0) == 0) continue;
        if (word.empty() || word[0] == '-') break;  // --help, --version, a typo: whole tree
        for (const auto& s : all_subcommands())
            if (s.name == word) return {s};
        break;
    }
    return all_subcommands();
}

}  // namespace xpart::cli
