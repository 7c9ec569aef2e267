// PLACEHOLDER until the AMD simulator lands.
#include "sim/spec_parse.hpp"
#include "sim/tree.hpp"
namespace xpart::sim {
Status parse_amd_spec(const nlohmann::json&, const SpecPath& at, NodeSpec&) {
    return at.error("AMD GPUs are not simulated yet");
}
Status write_amd_tree(const NodeSpec&, TreeWriter&) { return ok_status(); }
}  // namespace xpart::sim
