// xpart.conf, beside slurm.conf.
#include "libxpart/gres/xpart_conf.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(xpart_conf) {
    auto conf = xpart::parse_xpart_conf(xpart::fuzz::text_of(data, size), "xpart.conf");
    if (conf) (void)xpart::discovery_options(*conf);
}
