// Path classes between PCI devices, from sysfs device paths as real kernels show them.
#include <gtest/gtest.h>


#include "libxpart/pci_topology.hpp"
#include "tests/case_name.hpp"

namespace xpart {
namespace {

PciLocation at(const std::string& path, int numa, int socket) {
    PciLocation l;
    parse_pci_device_path(path, l);
    l.numa_node = numa;
    l.socket = socket;
    return l;
}

TEST(PciTopology, SplitsHostBridgeBridgesAndDevice) {
    PciLocation l;
    parse_pci_device_path("/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:07:00.0", l);
    EXPECT_EQ(l.host_bridge, "pci0000:00");
    EXPECT_EQ(l.bridges, (std::vector<std::string>{"0000:00:01.1", "0000:01:00.0", "0000:02:00.0"}));
    EXPECT_EQ(l.bdf, "0000:07:00.0");
    // Virtual machines put the host bridge below ACPI nodes.
    parse_pci_device_path("/sys/devices/LNXSYSTM:00/LNXSYBUS:00/pci0000:80/0000:80:02.0/0000:81:00.0", l);
    EXPECT_EQ(l.host_bridge, "pci0000:80");
    EXPECT_EQ(l.bridges, (std::vector<std::string>{"0000:80:02.0"}));
    EXPECT_EQ(l.bdf, "0000:81:00.0");
    // Not a PCI device path: nothing known.
    l = PciLocation{};
    parse_pci_device_path("/sys/devices/platform/amdgpu_xcp_1", l);
    EXPECT_EQ(l.host_bridge, "");
    EXPECT_TRUE(l.bridges.empty());
}

struct PathCase {
    const char* name;
    const char* a;
    int a_numa, a_socket;
    const char* b;
    int b_numa, b_socket;
    PciPath want;
};

class PathBetween : public ::testing::TestWithParam<PathCase> {};

TEST_P(PathBetween, Classifies) {
    const PathCase& c = GetParam();
    const PciLocation a = at(c.a, c.a_numa, c.a_socket), b = at(c.b, c.b_numa, c.b_socket);
    EXPECT_EQ(pci_path_between(a, b), c.want) << c.name;
    EXPECT_EQ(pci_path_between(b, a), c.want) << c.name << " (symmetric)";
}

const char* kGpu = "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:07:00.0";
const PathCase kPathCases[] = {
    {"one switch", kGpu, 0, 0,
     "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:01.0/0000:0c:00.0", 0, 0, PciPath::Switch},
    {"two switch levels", kGpu, 0, 0,
     "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:04.0/0000:05:00.0/0000:06:00.0/0000:0d:00.0",
     0, 0, PciPath::Switch},
    {"other root port, same host bridge", kGpu, 0, 0,
     "/sys/devices/pci0000:00/0000:00:03.1/0000:0e:00.0", 0, 0, PciPath::RootComplex},
    {"both right below one host bridge", "/sys/devices/pci0000:40/0000:41:00.0", 0, 0,
     "/sys/devices/pci0000:40/0000:42:00.0", 0, 0, PciPath::RootComplex},
    {"other host bridge, same socket", kGpu, 0, 0,
     "/sys/devices/pci0000:40/0000:40:01.1/0000:4b:00.0", 1, 0, PciPath::Socket},
    {"other socket", kGpu, 0, 0, "/sys/devices/pci0000:80/0000:80:01.1/0000:8d:00.0", 1, 1,
     PciPath::CrossSocket},
    {"sockets unknown, one NUMA node", kGpu, 0, -1, "/sys/devices/pci0000:40/0000:40:01.1/0000:4b:00.0",
     0, -1, PciPath::Socket},
    {"nothing known", "", -1, -1, "", -1, -1, PciPath::CrossSocket},
};

INSTANTIATE_TEST_SUITE_P(PathCases, PathBetween, ::testing::ValuesIn(kPathCases),
                         testing::SentenceCaseName());

}  // namespace
}  // namespace xpart
