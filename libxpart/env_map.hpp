// A process environment as a map, so rank detection and narrowing are pure functions that
// tests drive with tables instead of setenv().
#pragma once

#include <map>
#include <string>
#include <vector>

namespace xpart {

using EnvMap = std::map<std::string, std::string>;

EnvMap env_from_environ(char** envp);
// "KEY=value" strings for execve.
std::vector<std::string> env_to_strings(const EnvMap& env);
// The value of `key`, or nullptr when unset.
const std::string* env_get(const EnvMap& env, const std::string& key);

}  // namespace xpart
