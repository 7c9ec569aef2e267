#include "binding/nic_env.hpp"

#include "libxpart/config_words.hpp"

namespace xpart::launch {

const char* to_string(NicBind n) {
    switch (n) {
    case NicBind::None: return "none";
    case NicBind::Closest: return "closest";
    case NicBind::ClosestOverride: return "closest-override";
    }
    return "none";
}

Result<NicBind> parse_nic_bind(const std::string& value) {
    return parse_word<NicBind>(value, {{"closest", NicBind::Closest},
                                       {"closest-override", NicBind::ClosestOverride},
                                       {"none", NicBind::None}});
}

void apply_nic_env(EnvMap& env, const Gpu& gpu, NicBind mode) {
    if (mode == NicBind::None || gpu.nics.empty()) return;
    const NicRoute& own = gpu.nics.front();
    const std::string device = own.nic + ":" + std::to_string(own.port);
    const bool override = mode == NicBind::ClosestOverride;
    const std::pair<const char*, std::string> vars[] = {
        {"NCCL_IB_HCA", "=" + device},
        {"UCX_NET_DEVICES", device},
    };
    for (const auto& [name, value] : vars)
        if (override || !env_get(env, name)) env[name] = value;
    env["XPART_NIC"] = device;
}

}  // namespace xpart::launch
