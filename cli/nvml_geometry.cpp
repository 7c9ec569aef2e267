#include "cli/nvml_geometry.hpp"

#include "libxpart/nvidia/mig_geometry.hpp"

namespace xpart::cli {

Result<Nvml> open_nvml(const std::string& configured) {
    auto lib = nvml::NvmlLibrary::load(nvml::NvmlLibrary::resolve_path(configured));
    if (!lib) return lib.error();
    auto session = nvml::NvmlSession::open(*lib);
    if (!session) return session.error();
    auto control = nvml::MigControl::bind(*lib);
    if (!control) return control.error();
    Nvml n;
    n.lib = *lib;
    n.session = std::make_unique<nvml::NvmlSession>(std::move(*session));
    n.control = std::make_unique<nvml::MigControl>(std::move(*control));
    return n;
}

Result<std::vector<unsigned>> gpus_of(const Nvml& n, int wanted) {
    auto count = n.session->device_count();
    if (!count) return count.error();
    if (wanted >= static_cast<int>(*count))
        return Error{"--gpu " + std::to_string(wanted) + ": the node has " + std::to_string(*count) + " GPUs"};
    std::vector<unsigned> out;
    for (unsigned i = 0; i < *count; ++i)
        if (wanted < 0 || static_cast<int>(i) == wanted) out.push_back(i);
    return out;
}

std::vector<Candidate> candidates(const GpuGeometry& g, const XpartConf& conf) {
    std::vector<Candidate> out;
    for (const auto& named : conf.geometries) {
        auto names = parse_mig_geometry(named.profiles);
        if (names && plan_mig_geometry(g.profiles, *names)) out.push_back({named.name, *names});
    }
    for (auto& u : uniform_mig_geometries(g.profiles)) out.push_back({"", std::move(u)});
    return out;
}

}  // namespace xpart::cli
