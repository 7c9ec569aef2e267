// hwloc locality of a GPU: its PCI device's NUMA node and the CPUs close to it. The topology
// comes from the live machine, from a root prefix (hwloc's fsroot: recorded or simulated
// nodes), or from an hwloc XML file, so tests replay real machines.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart::binding {

struct Locality {
    int numa_node = -1;           // OS index; -1 when unknown
    std::vector<unsigned> cpus;   // OS indices of the PUs close to the device, ascending
};

class Topology {
public:
    // `xml_file` non-empty: load it; else `fsroot` ("/" = this machine).
    static Result<Topology> load(const std::string& xml_file, const std::string& fsroot);
    static Result<Topology> load_xml_buffer(const std::string& xml);

    Topology(Topology&&) noexcept;
    Topology& operator=(Topology&&) noexcept;
    ~Topology();

    // Locality of the PCI device "dddd:bb:dd.f"; Error when hwloc does not know the device.
    Result<Locality> locality_of(const std::string& pci_bus_id) const;
    // PUs this process may use (the cgroup cpuset when loaded from this machine).
    std::vector<unsigned> allowed_cpus() const;
    // True when the topology describes the machine this runs on (not XML, not a foreign root):
    // only then may its CPU numbers be used for binding.
    bool is_this_system() const;

    struct Impl;  // hwloc handle; public so the loader helper in topology.cpp can build one
    explicit Topology(std::unique_ptr<Impl> impl);

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace xpart::binding
