#include "binding/topology.hpp"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xpart::binding {

struct Topology::Impl {
    hwloc_topology_t topo = nullptr;
    ~Impl() {
        if (topo) hwloc_topology_destroy(topo);
    }
};

namespace {

std::vector<unsigned> to_cpus(hwloc_const_bitmap_t set) {
    std::vector<unsigned> cpus;
    int i;
    hwloc_bitmap_foreach_begin(i, set) { cpus.push_back(static_cast<unsigned>(i)); }
    hwloc_bitmap_foreach_end();
    return cpus;
}


}  // namespace

template <class Setup>
Result<std::unique_ptr<Topology::Impl>> make_impl(const std::string& what, Setup setup) {
    auto impl = std::make_unique<Topology::Impl>();
    if (hwloc_topology_init(&impl->topo) != 0) return Error{"hwloc: cannot initialize"};
    hwloc_topology_set_io_types_filter(impl->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!setup(impl->topo))
        return Error{what + ": hwloc cannot use it: " + std::strerror(errno)};
    if (hwloc_topology_load(impl->topo) != 0)
        return Error{what + ": hwloc cannot load the topology: " + std::strerror(errno)};
    return impl;
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

Result<Topology> Topology::load(const std::string& xml_file, const std::string& fsroot) {
    Result<std::unique_ptr<Impl>> impl = Error{""};
    if (!xml_file.empty()) {
        impl = make_impl(xml_file, [&](hwloc_topology_t t) {
            return hwloc_topology_set_xml(t, xml_file.c_str()) == 0;
        });
    } else if (fsroot.empty() || fsroot == "/") {
        impl = make_impl("this machine", [](hwloc_topology_t) { return true; });
    } else {
        // hwloc 2 takes a foreign root only from HWLOC_FSROOT, read during load; it then
        // reads that tree's /sys and /proc and marks the topology as not this system. The
        // root needs the sysfs CPU topology a real node has (xpart-sim writes it). The x86
        // backend would add this machine's CPUID caches to the other machine's CPUs: off.
        const char* old = std::getenv("HWLOC_FSROOT");
        std::string saved = old ? old : "";
        setenv("HWLOC_FSROOT", fsroot.c_str(), 1);
        impl = make_impl(fsroot, [](hwloc_topology_t t) {
            return hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86") == 0;
        });
        if (old)
            setenv("HWLOC_FSROOT", saved.c_str(), 1);
        else
            unsetenv("HWLOC_FSROOT");
    }
    if (!impl) return impl.error();
    return Topology(std::move(*impl));
}

Result<Topology> Topology::load_xml_buffer(const std::string& xml) {
    auto impl = make_impl("XML buffer", [&](hwloc_topology_t t) {
        return hwloc_topology_set_xmlbuffer(t, xml.data(), static_cast<int>(xml.size() + 1)) == 0;
    });
    if (!impl) return impl.error();
    return Topology(std::move(*impl));
}

Result<Locality> Topology::locality_of(const std::string& pci_bus_id) const {
    unsigned domain = 0, bus = 0, dev = 0, func = 0;
    char tail = 0;
    if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &func, &tail) != 4)
        return Error{"PCI bus id '" + pci_bus_id + "' is not of the form dddd:bb:dd.f"};
    hwloc_obj_t pci = hwloc_get_pcidev_by_busid(impl_->topo, domain, bus, dev, func);
    if (!pci) return Error{"hwloc topology has no PCI device " + pci_bus_id};
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(impl_->topo, pci);
    Locality loc;
    if (!anc || !anc->cpuset) return loc;
    loc.cpus = to_cpus(anc->cpuset);
    if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) >= 1)
        loc.numa_node = hwloc_bitmap_first(anc->nodeset);
    return loc;
}

std::vector<unsigned> Topology::allowed_cpus() const {
    return to_cpus(hwloc_topology_get_allowed_cpuset(impl_->topo));
}

bool Topology::is_this_system() const { return hwloc_topology_is_thissystem(impl_->topo) != 0; }

}  // namespace xpart::binding
