#include "binding/nic_env.hpp"

#include "libxpart/config_words.hpp"
#include "libxpart/visibility.hpp"

namespace xpart::binding {

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
    if (mode == NicBind::None) return;
    apply_changes(env, nic_visibility(gpu, mode == NicBind::ClosestOverride, env));
}

}  // namespace xpart::binding
