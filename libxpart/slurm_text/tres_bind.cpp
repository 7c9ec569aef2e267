#include "libxpart/slurm_text/tres_bind.hpp"

#include <cstdlib>
#include <optional>

#include "libxpart/text.hpp"

namespace xpart {

namespace {

// The "gpu:" directive without its "verbose," prefix; nullopt without one.
std::optional<std::string> gpu_directive(const std::string& tres_bind) {
    auto gpu = tres_bind.find("gpu:");  // Slurm: the first "gpu:", case-sensitive
    if (gpu == std::string::npos) return std::nullopt;
    std::string rest = tres_bind.substr(gpu + 4);
    if (to_lower(rest.substr(0, 8)) == "verbose,") rest = rest.substr(8);
    return rest;
}

}  // namespace

bool tres_bind_is_none(const std::string& tres_bind) {
    auto rest = gpu_directive(tres_bind);
    return rest && to_lower(rest->substr(0, 4)) == "none";
}

GpuBind parse_tres_bind(const std::string& tres_bind) {
    GpuBind b;
    auto directive = gpu_directive(tres_bind);
    if (!directive) return b;
    const std::string rest = *directive;
    const std::string lower = to_lower(rest);
    auto starts = [&](const char* p) { return lower.rfind(p, 0) == 0; };
    if (starts("single:")) {
        // strtol base 0; out of 1..UINT32_MAX Slurm logs an error and takes 1.
        const long n = std::strtol(rest.c_str() + 7, nullptr, 0);
        b.kind = GpuBind::Kind::Closest;
        b.tasks_per_gpu = n <= 0 || n > 0xffffffffL ? 1 : static_cast<std::uint32_t>(n);
    } else if (starts("closest")) {
        b.kind = GpuBind::Kind::Closest;
    } else if (starts("map_gpu:")) {
        b.kind = GpuBind::Kind::Map;
        b.list = rest.substr(8);
    } else if (starts("mask_gpu:")) {
        b.kind = GpuBind::Kind::Mask;
        b.list = rest.substr(9);
    } else if (starts("per_task:")) {
        // slurm_atoul (strtoul base 10) into a uint32_t.
        b.gpus_per_task = static_cast<std::uint32_t>(std::strtoul(rest.c_str() + 9, nullptr, 10));
        if (b.gpus_per_task) b.kind = GpuBind::Kind::PerTask;
    }
    return b;
}

}  // namespace xpart
