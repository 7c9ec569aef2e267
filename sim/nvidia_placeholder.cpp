// PLACEHOLDER until the NVIDIA simulator lands.
#include "sim/spec_parse.hpp"
#include "sim/tree.hpp"
namespace xpart::sim {
Status parse_nvidia_spec(const nlohmann::json&, const SpecPath& at, NodeSpec&) {
    return at.error("NVIDIA GPUs are not simulated yet");
}
Status write_nvidia_tree(const NodeSpec&, TreeWriter&) { return ok_status(); }
}  // namespace xpart::sim
