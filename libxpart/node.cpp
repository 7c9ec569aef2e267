#include "libxpart/node.hpp"

#include <algorithm>
#include <cctype>

namespace xpart {

std::size_t Node::partition_count() const {
    std::size_t n = 0;
    for (const auto& g : gpus) n += g.partitions.size();
    return n;
}

const Partition* Node::find_partition(const std::string& uuid) const {
    for (const auto& g : gpus)
        for (const auto& p : g.partitions)
            if (p.uuid == uuid) return &p;
    return nullptr;
}

const Gpu* Node::gpu_of(const Partition& part) const {
    for (const auto& g : gpus)
        for (const auto& p : g.partitions)
            if (&p == &part) return &g;
    return nullptr;
}

const char* to_string(Vendor v) { return v == Vendor::Nvidia ? "nvidia" : "amd"; }

namespace {
struct ModeName {
    PartitionMode mode;
    const char* name;
};
constexpr ModeName kModeNames[] = {
    {PartitionMode::Full, "full"}, {PartitionMode::Mig, "mig"},
    {PartitionMode::MigPending, "mig-pending"}, {PartitionMode::Spx, "spx"},
    {PartitionMode::Dpx, "dpx"}, {PartitionMode::Tpx, "tpx"},
    {PartitionMode::Qpx, "qpx"}, {PartitionMode::Cpx, "cpx"},
};
}  // namespace

std::vector<std::string> partition_types(const Gpu& gpu) {
    std::vector<std::string> types;
    for (const auto& p : gpu.partitions) types.push_back(p.type);
    std::sort(types.begin(), types.end());
    return types;
}

const char* to_string(PartitionMode m) {
    for (const auto& e : kModeNames)
        if (e.mode == m) return e.name;
    return "unknown";
}

std::optional<PartitionMode> parse_partition_mode(const std::string& s) {
    std::string lower(s);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& e : kModeNames)
        if (lower == e.name) return e.mode;
    return std::nullopt;
}

namespace {
struct PathName {
    PciPath path;
    const char* name;
};
constexpr PathName kPathNames[] = {
    {PciPath::Switch, "switch"}, {PciPath::RootComplex, "root-complex"},
    {PciPath::Socket, "socket"}, {PciPath::CrossSocket, "cross-socket"},
};
}  // namespace

const char* to_string(PciPath p) {
    for (const auto& e : kPathNames)
        if (e.path == p) return e.name;
    return "unknown";
}

std::optional<PciPath> parse_pci_path(const std::string& s) {
    for (const auto& e : kPathNames)
        if (s == e.name) return e.path;
    return std::nullopt;
}

unsigned RdmaNic::active_port() const {
    for (const RdmaPort& p : ports)
        if (p.active()) return p.number;
    return 0;
}

}  // namespace xpart
