// /proc/self/mountinfo and /proc/self/cgroup (split at the first empty line), read to find the
// device controller of the job's cgroup.
#include "cgroup/layout.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(cgroup_layout) {
    const std::string text = xpart::fuzz::text_of(data, size);
    const std::size_t split = text.find("\n\n");
    const std::string self = split == std::string::npos ? std::string() : text.substr(split + 2);
    (void)xpart::cgroup::parse_cgroup_layout(text.substr(0, split), self);
}
