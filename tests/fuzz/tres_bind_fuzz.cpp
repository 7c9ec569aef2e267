// SLURMD_TRES_BIND, as slurmd hands it to the plugin and the launcher.
#include "libxpart/slurm_text/tres_bind.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(tres_bind) {
    const std::string text = xpart::fuzz::text_of(data, size);
    auto b = xpart::parse_tres_bind(text);
    XPART_FUZZ_CHECK(b.kind != xpart::GpuBind::Kind::PerTask || b.gpus_per_task != 0);
    (void)xpart::tres_bind_is_none(text);
}
