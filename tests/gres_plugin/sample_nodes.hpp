// Hand-made nodes for the plugin core's tests (discovery's output shape, no files needed).
#pragma once

#include "libxpart/node.hpp"

namespace xpart::test {

// GPU 0 (minor 0): A100 in MIG mode with 3g.40gb (gi 1) and two 1g.10gb (gi 9, gi 10);
// GPU 1 (minor 1): a whole A100, MIG off. CPUs 0-7 and 8-15.
Node mig_node();
// One MI300X in CPX: 8 XCPs, KFD nodes 2..9 listed in discovery in the REVERSE order, so
// tests see that ROCm's KFD order wins; render minors 128.., /dev/kfd shared.
Node amd_cpx_node(int xcps = 8);
// Both of the above on one node (NVIDIA first).
Node mixed_node();

}  // namespace xpart::test
