// The MPS daemon records ("<instance> <uuid> <pid> <start time> <uid>" lines; ranks read root's
// and the user's own file) and one process identity ("pid start_time uid").
#include "mps/mps.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(mps_records) {
    const std::string text = xpart::fuzz::text_of(data, size);
    (void)xpart::process::parse_identity(text);
    auto records = xpart::mps::parse_records(text, "records");
    if (!records) return;
    const std::string out = xpart::mps::format_records(*records);
    auto again = xpart::mps::parse_records(out, "records");
    XPART_FUZZ_CHECK(again && xpart::mps::format_records(*again) == out);
}
