// Helpers for reading spec JSON with errors that name the file, the key path and the value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "libxpart/result.hpp"
#include "sim/spec.hpp"

namespace xpart::sim {

// A position in the spec for messages: "<file>: gpus[2].mig".
struct SpecPath {
    std::string file;
    std::string key;
    SpecPath child(const std::string& name) const;
    SpecPath item(std::size_t i) const;
    Error error(const std::string& what) const;  // "<file>: <key>: <what>"
};

Result<std::string> get_string(const nlohmann::json& obj, const SpecPath& at, const char* key);
std::string get_string_or(const nlohmann::json& obj, const char* key, const std::string& dflt);
Result<std::uint64_t> get_uint(const nlohmann::json& obj, const SpecPath& at, const char* key);
Result<std::uint64_t> get_uint_or(const nlohmann::json& obj, const SpecPath& at, const char* key,
                                  std::uint64_t dflt);
Result<bool> get_bool_or(const nlohmann::json& obj, const SpecPath& at, const char* key, bool dflt);
// Rejects keys not in `allowed` (typos in a spec must not be silently ignored).
Status check_keys(const nlohmann::json& obj, const SpecPath& at,
                  const std::vector<std::string>& allowed);

// A PCI bus id ("0000:07:00.0", lower-case).
Result<std::string> get_pci_bus_id(const nlohmann::json& obj, const SpecPath& at, const char* key);
// "numa_node": one of the spec's NUMA nodes; the first one when absent.
Result<int> get_numa_node(const nlohmann::json& obj, const SpecPath& at, const NodeSpec& spec);
// "switch": the name of a switch of spec.pcie_switches (parsed first); "" when absent.
Result<std::string> get_switch(const nlohmann::json& obj, const SpecPath& at, const NodeSpec& spec);

// Parts called by parse_spec, in this order: "pcie_switches", "nics", "nvidia", "amd", then
// check_pcie_tree over all the PCI devices (before the AMD GPUs are sorted into PCI order).
Status parse_pcie_switches(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);
Status parse_nics(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);
Status parse_nvidia_spec(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);
Status parse_amd_spec(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);
Status check_pcie_tree(const NodeSpec& spec);
// KFD lists GPUs in PCI order on the simulated node.
void sort_amd_gpus(NodeSpec& spec);

}  // namespace xpart::sim
