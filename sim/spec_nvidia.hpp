// NVIDIA part of the simulator spec (owned by the NVIDIA simulator work).
#pragma once

#include <string>
#include <vector>

namespace xpart::sim {

struct NvidiaSpec {
    std::vector<std::string> placeholder;  // replaced by the NVIDIA GPU model
    bool empty() const { return true; }
};

}  // namespace xpart::sim
