// The simulator's node spec: one human-writable JSON file (comments allowed) that drives both
// the root tree (procfs/sysfs/dev of the node) and the fake libnvidia-ml.so.1.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libxpart/result.hpp"
#include "sim/spec_amd.hpp"
#include "sim/spec_nvidia.hpp"
#include "sim/spec_pcie.hpp"

namespace xpart::sim {

struct NumaSpec {
    int node = 0;
    std::vector<unsigned> cpus;
};

struct NodeSpec {
    std::string name;                 // "a100-guide"
    std::string file;                 // where it was read from (for messages)
    std::vector<unsigned> cpus;       // all CPUs of the node
    std::vector<NumaSpec> numa;       // NUMA nodes and their CPUs
    std::map<std::string, unsigned> majors;  // dynamic char majors: nvidia-uvm, nvidia-caps, kfd
    NvidiaSpec nvidia;
    AmdSpec amd;
    std::vector<PcieSwitchSpec> pcie_switches;
    std::vector<NicSpec> nics;
};

// Parses a spec file; every error names the file and the offending key and value.
Result<NodeSpec> load_spec(const std::string& path);
Result<NodeSpec> parse_spec(const std::string& text, const std::string& file);

// Fixed majors as on real nodes; the dynamic ones come from NodeSpec::majors (defaults below).
constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kDrmMajor = 226;
constexpr unsigned kDefaultNvidiaUvmMajor = 509;
constexpr unsigned kDefaultNvidiaCapsMajor = 508;
constexpr unsigned kDefaultKfdMajor = 511;

}  // namespace xpart::sim
