// gres.conf: the admin's file, read by the plugin at every slurmd start.
#include "libxpart/slurm_text/gres_conf.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(gres_conf) {
    auto conf = xpart::parse_gres_conf(xpart::fuzz::text_of(data, size), "gres.conf");
    if (!conf) return;
    (void)xpart::records_for_node(*conf, "n1");
    for (const auto& r : conf->records) (void)r.effective_count();
}
