#include "libxpart/env_map.hpp"

namespace xpart {

EnvMap env_from_environ(char** envp) {
    EnvMap env;
    for (char** e = envp; e && *e; ++e) {
        std::string kv(*e);
        auto eq = kv.find('=');
        if (eq == std::string::npos) continue;
        env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return env;
}

std::vector<std::string> env_to_strings(const EnvMap& env) {
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

const std::string* env_get(const EnvMap& env, const std::string& key) {
    auto it = env.find(key);
    return it == env.end() ? nullptr : &it->second;
}

}  // namespace xpart
