// The gres record transport (slurmd -> slurmstepd, discovery module -> plugin).
#include "libxpart/gres_record.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(gres_records) {
    auto records = xpart::parse_records(xpart::fuzz::text_of(data, size));
    if (!records) return;
    // What was accepted serializes to text that parses back to the same records.
    auto again = xpart::parse_records(xpart::serialize_records(*records));
    XPART_FUZZ_CHECK(again && *again == *records);
}
