// xpart_node_discovery.so: slurmd's discovery behind the C seam of node_discovery.h. It
// translates and delegates to the core (load_node_gres); nothing of Slurm is used here.
#include "gres_plugin/node_discovery.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "libxpart/gres/gres_node.hpp"
#include "libxpart/gres_record.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace {

char* copy(const std::string& s) {
    char* out = static_cast<char*>(std::malloc(s.size() + 1));
    if (out) std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

std::string lines(const std::vector<std::string>& all) {
    std::string out;
    for (const auto& l : all) out += l + '\n';
    return out;
}

}  // namespace

extern "C" int xpart_node_discovery(uint32_t abi, const char* conf_path,
                                    const char* gres_conf_path, const char* node_name,
                                    uint32_t series, xpart_node_answer* answer) {
    if (abi != XPART_NODE_DISCOVERY_ABI || !answer) return -1;
    *answer = {};
    try {
        xpart::XpartConf conf;
        xpart::NodeGres found = xpart::load_node_gres(
            conf_path ? conf_path : "", gres_conf_path ? gres_conf_path : "",
            node_name ? node_name : "", &conf,
            xpart::slurm_series_from_number(series).value_or(xpart::SlurmSeries::S22_05));
        answer->records = copy(xpart::serialize_records(found.records));
        answer->warnings = copy(lines(found.warnings));
        answer->errors = copy(lines(found.errors));
        answer->amd_index_mode = static_cast<uint32_t>(conf.amd_index_mode);
    } catch (const std::exception& e) {
        xpart_node_discovery_free(answer);
        answer->errors = copy(std::string("internal error, registering no GPU: ") +
                              e.what() + "\n");
    } catch (...) {
        xpart_node_discovery_free(answer);
        answer->errors = copy("internal error, registering no GPU\n");
    }
    return 0;
}

extern "C" void xpart_node_discovery_free(xpart_node_answer* answer) {
    if (!answer) return;
    std::free(answer->records);
    std::free(answer->warnings);
    std::free(answer->errors);
    *answer = {};
}
