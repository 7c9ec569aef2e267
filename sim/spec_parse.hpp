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

// Vendor parts, called by parse_spec for the "nvidia" and "amd" objects.
Status parse_nvidia_spec(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);
Status parse_amd_spec(const nlohmann::json& j, const SpecPath& at, NodeSpec& spec);

}  // namespace xpart::sim
