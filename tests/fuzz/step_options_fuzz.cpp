// SPANK options: plugstack.conf arguments (whitespace-separated words), then user options as
// "name=value" lines (--xpart-bind, --xpart-nic, --xpart-rank-map...).
#include "binding/mapping.hpp"
#include "binding/nic_env.hpp"
#include "spank_plugin/step_options.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(step_options) {
    const std::string text = xpart::fuzz::text_of(data, size);
    const std::size_t split = text.find("\n\n");
    auto options = xpart::spank::parse_site_args(xpart::fuzz::words_of(text.substr(0, split)));
    if (!options || split == std::string::npos) return;
    for (const auto& [name, value] : xpart::fuzz::env_of(text.substr(split + 2))) {
        (void)xpart::spank::apply_user_option(*options, name, value);
        (void)xpart::binding::parse_nic_bind(value);
        (void)xpart::binding::parse_rank_map(value);
    }
}
