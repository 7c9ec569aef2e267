#include "binding/locality.hpp"

#include <sched.h>

namespace xpart::binding {

Result<std::optional<Topology>> load_locality(MapOptions& options, const std::string& xml_file,
                                              const std::string& fsroot) {
    if (options.bind != BindPolicy::Closest) return std::optional<Topology>();
    auto t = Topology::load(xml_file, fsroot);
    if (!t) return t.error();
    options.allowed_cpus = t->allowed_cpus();
    return std::optional<Topology>(std::move(*t));
}

Result<bool> pin_within_allocation(pid_t pid, const std::vector<unsigned>& cpus) {
    const std::string who = pid ? "pid " + std::to_string(pid) : std::string("this process");
    cpu_set_t current;
    if (sched_getaffinity(pid, sizeof(current), &current) != 0)
        return Error{"sched_getaffinity of " + who + " failed"};
    cpu_set_t want;
    CPU_ZERO(&want);
    for (unsigned c : cpus)
        if (c < CPU_SETSIZE && CPU_ISSET(c, &current)) CPU_SET(c, &want);
    if (CPU_COUNT(&want) == 0) return false;
    if (sched_setaffinity(pid, sizeof(want), &want) != 0)
        return Error{"sched_setaffinity of " + who + " failed"};
    return true;
}

}  // namespace xpart::binding
