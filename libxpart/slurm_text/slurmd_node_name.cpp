#include "libxpart/slurm_text/slurmd_node_name.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "libxpart/root_fs.hpp"

namespace xpart {
namespace {

// slurmd's options that take a value (its getopt string "bcCd:Df:F::GhL:Mn:N:svVZ" and its
// long options, 22.05 to 26.05). -F's value is optional, so only ever attached.
constexpr std::string_view kShortWithValue = "dfLnN";
constexpr std::array<std::string_view, 8> kLongWithValue = {
    "authinfo", "ca-cert-file", "conf", "conf-server", "extra", "instance-id", "instance-type",
    "parameters"};

}  // namespace

std::optional<std::string> slurmd_node_name_arg(const std::vector<std::string>& argv) {
    std::optional<std::string> name;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        const std::string& arg = argv[i];
        if (arg == "--") break;
        if (arg.rfind("--", 0) == 0) {
            const std::string_view long_name = std::string_view(arg).substr(2);
            if (long_name.find('=') == std::string_view::npos &&
                std::find(kLongWithValue.begin(), kLongWithValue.end(), long_name) !=
                    kLongWithValue.end())
                ++i;
            continue;
        }
        if (arg.size() < 2 || arg[0] != '-') continue;
        for (std::size_t c = 1; c < arg.size(); ++c) {
            if (kShortWithValue.find(arg[c]) == std::string_view::npos) continue;
            std::string value = arg.substr(c + 1);
            if (value.empty()) {
                if (i + 1 == argv.size()) break;  // getopt: a missing value, no -N
                value = argv[++i];
            }
            if (arg[c] == 'N') name = value;  // the last -N wins, as with getopt
            break;
        }
    }
    return name;
}

std::vector<std::string> own_arguments() { return process_arguments("self"); }

std::vector<std::string> process_arguments(const std::string& pid) {
    // This host's own /proc (a process here, not the simulated node's), read with read(2): a
    // stream would link the C++ locale machinery into gres_gpu.so's front, relocated at each
    // load by every Slurm process (docs/performance.md).
    auto read = RootFs("/").read("/proc/" + pid + "/cmdline");
    const std::string all = read ? std::move(*read) : std::string();
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < all.size()) {
        const std::size_t end = all.find('\0', start);
        out.push_back(all.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::string short_hostname() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    const std::string name(buf);
    return name.substr(0, name.find('.'));
}

}  // namespace xpart
