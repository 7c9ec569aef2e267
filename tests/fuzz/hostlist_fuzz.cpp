// Slurm hostlists in gres.conf NodeName= and File=.
#include "libxpart/slurm_text/gres_conf.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(hostlist) { (void)xpart::expand_hostlist(xpart::fuzz::text_of(data, size)); }
