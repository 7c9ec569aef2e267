// AMD part of the simulator spec (owned by the AMD simulator work).
#pragma once

#include <string>
#include <vector>

namespace xpart::sim {

struct AmdSpec {
    std::vector<std::string> placeholder;  // replaced by the AMD GPU model
    bool empty() const { return true; }
};

}  // namespace xpart::sim
