// The node cache (/run/xpart/node.json) and `xpart launch --node-json`: JSON to a Node.
#include <nlohmann/json.hpp>

#include "libxpart/node_json.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(node_json) {
    const auto j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) return;
    auto node = xpart::node_from_json(j);
    if (!node) return;
    // What was accepted is written back and read again to the same JSON.
    const nlohmann::json out = xpart::to_json(*node);
    auto again = xpart::node_from_json(out);
    XPART_FUZZ_CHECK(again && xpart::to_json(*again) == out);
}
