// The NVIDIA tree the simulator writes: files in the driver's formats, real device nodes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdlib>

#include "libxpart/text.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart::sim {
namespace {

using nlohmann::json;
using testing::SimRoot;

struct NodeInfo {
    bool exists = false;
    unsigned major = 0, minor = 0, mode = 0;
};
NodeInfo char_node(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return {};
    return {true, ::major(st.st_rdev), ::minor(st.st_rdev), st.st_mode & 07777u};
}

TEST(NvidiaTree, MigMinorsIsTheFullStaticTableInDriverOrder) {
    SimRoot r(testing::spec_json("h100-80gb"));
    ASSERT_EQ(r.error(), "");
    auto lines = split(testing::read_text(r.host("/proc/driver/nvidia-caps/mig-minors")), '\n');
    ASSERT_EQ(lines.back(), "");  // ends with a newline
    lines.pop_back();
    ASSERT_EQ(lines.size(), 2u + 32 * 15 * 9);
    EXPECT_EQ(lines[0], "config 1");
    EXPECT_EQ(lines[1], "monitor 2");
    std::size_t i = 2;
    for (unsigned g = 0; g < 32; ++g)
        for (unsigned gi = 0; gi < 15; ++gi) {
            const std::string base = "gpu" + std::to_string(g) + "/gi" + std::to_string(gi);
            EXPECT_EQ(lines[i++], base + "/access " + std::to_string(3 + 135 * g + 9 * gi));
            for (unsigned ci = 0; ci < 8; ++ci)
                EXPECT_EQ(lines[i++], base + "/ci" + std::to_string(ci) + "/access " +
                                          std::to_string(4 + 135 * g + 9 * gi + ci));
        }
    EXPECT_EQ(lines.back(), "gpu31/gi14/ci7/access 4322");
}

TEST(NvidiaTree, InformationFileHasTheDriverKeys) {
    const json spec = testing::spec_json("a100-guide");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    for (const json& g : spec["nvidia"]["gpus"]) {
        const std::string file = r.host("/proc/driver/nvidia/gpus/" + g["pci_bus_id"].get<std::string>() +
                                        "/information");
        auto kv = parse_colon_lines(testing::read_text(file), file);
        ASSERT_TRUE(kv.ok()) << kv.error().message;
        std::vector<std::string> keys;
        std::map<std::string, std::string> values;
        for (const auto& l : *kv) keys.push_back(l.key), values[l.key] = l.value;
        EXPECT_EQ(keys, (std::vector<std::string>{"Model", "IRQ", "GPU UUID", "Video BIOS", "Bus Type",
                                                  "DMA Size", "DMA Mask", "Bus Location",
                                                  "Device Minor", "GPU Excluded"}));
        EXPECT_EQ(values["GPU UUID"], g["uuid"]);
        EXPECT_EQ(values["Bus Location"], g["pci_bus_id"]);
        EXPECT_EQ(values["Device Minor"], std::to_string(g["minor"].get<unsigned>()));
        EXPECT_EQ(values["Model"], g["name"]);
        EXPECT_NE(testing::read_text(file).find("Device Minor: \t "), std::string::npos);
    }
}

TEST(NvidiaTree, DeviceNodesAndCapabilitiesOnlyForExistingInstances) {
    const json spec = testing::spec_json("a100-guide");
    SimRoot r(spec);
    ASSERT_EQ(r.error(), "");
    struct Expect {
        const char* path;
        unsigned major, minor, mode;
    };
    for (const Expect& e : {Expect{"/dev/nvidiactl", 195, 255, 0666}, Expect{"/dev/nvidia-modeset", 195, 254, 0666},
                            Expect{"/dev/nvidia-uvm", 509, 0, 0666}, Expect{"/dev/nvidia-uvm-tools", 509, 1, 0666},
                            Expect{"/dev/nvidia-caps/nvidia-cap1", 508, 1, 0400},
                            Expect{"/dev/nvidia-caps/nvidia-cap2", 508, 2, 0444}}) {
        NodeInfo n = char_node(r.host(e.path));
        EXPECT_TRUE(n.exists) << e.path;
        EXPECT_EQ(n.major, e.major) << e.path;
        EXPECT_EQ(n.minor, e.minor) << e.path;
        EXPECT_EQ(n.mode, e.mode) << e.path;
    }
    std::size_t cap_nodes = 0;
    for (const json& g : spec["nvidia"]["gpus"]) {
        const unsigned G = g["minor"];
        NodeInfo gpu = char_node(r.host("/dev/nvidia" + std::to_string(G)));
        EXPECT_TRUE(gpu.exists && gpu.major == 195 && gpu.minor == G && gpu.mode == 0666);
        const std::string pci = "/sys/bus/pci/devices/" + g["pci_bus_id"].get<std::string>();
        EXPECT_EQ(testing::read_text(r.host(pci + "/numa_node")), std::to_string(g["numa_node"].get<int>()) + "\n");
        // What lspci shows for a data-center GPU: NVIDIA's vendor id, a 3D controller.
        EXPECT_EQ(testing::read_text(r.host(pci + "/vendor")), "0x10de\n");
        EXPECT_EQ(testing::read_text(r.host(pci + "/class")), "0x030200\n");
        EXPECT_EQ(testing::read_text(r.host(pci + "/device")), "0x20b0\n");  // A100-SXM4-40GB
        EXPECT_EQ(testing::read_text(r.host(pci + "/local_cpulist")),
                  spec["numa"][g["numa_node"].get<int>()]["cpus"].get<std::string>() + "\n");
        // Each instance's GI (derived from its placement) and CI capability files and nodes.
        for (unsigned gi = 0; gi < 15; ++gi) {
            const std::string cap = "/proc/driver/nvidia/capabilities/gpu" + std::to_string(G) + "/mig/gi" +
                                    std::to_string(gi) + "/access";
            const bool present = ::access(r.host(cap).c_str(), F_OK) == 0;
            NodeInfo node = char_node(r.host("/dev/nvidia-caps/nvidia-cap" + std::to_string(3 + 135 * G + 9 * gi)));
            EXPECT_EQ(present, node.exists) << cap;
            if (!present) continue;
            ++cap_nodes;
            EXPECT_EQ(testing::read_text(r.host(cap)),
                      "DeviceFileMinor: " + std::to_string(3 + 135 * G + 9 * gi) +
                          "\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
            EXPECT_EQ(node.mode, 0444u);
            EXPECT_EQ(node.major, 508u);
        }
    }
    // 7 + 3 + 2 + 1 + 2 + 1 + 1 + 3 GPU instances in the guide's node.
    EXPECT_EQ(cap_nodes, 20u);
    EXPECT_FALSE(char_node(r.host("/dev/nvidia-caps/nvidia-cap" + std::to_string(3 + 135 * 2 + 9 * 1))).exists)
        << "GPU minor 2 has no GI 1";
    EXPECT_EQ(testing::read_text(r.host("/proc/driver/nvidia/capabilities/mig/config")),
              "DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n");
    EXPECT_EQ(testing::read_text(r.host("/proc/driver/nvidia/capabilities/mig/monitor")),
              "DeviceFileMinor: 2\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
}

TEST(NvidiaTree, ProcDevicesNamesTheDrivers) {
    SimRoot plain(testing::spec_json("h100-80gb"));
    ASSERT_EQ(plain.error(), "");
    const std::string devices = testing::read_text(plain.host("/proc/devices"));
    EXPECT_NE(devices.find("195 nvidia\n"), std::string::npos);
    EXPECT_NE(devices.find("509 nvidia-uvm\n"), std::string::npos);
    EXPECT_NE(devices.find("508 nvidia-caps\n"), std::string::npos);
    SimRoot frontend(testing::spec_json("mixed-mig-full"));
    ASSERT_EQ(frontend.error(), "");
    const std::string f = testing::read_text(frontend.host("/proc/devices"));
    EXPECT_NE(f.find("195 nvidia-frontend\n"), std::string::npos);
    EXPECT_NE(f.find("235 nvidia-uvm\n"), std::string::npos);
    EXPECT_NE(f.find("236 nvidia-caps\n"), std::string::npos);
    EXPECT_NE(testing::read_text(frontend.host("/proc/driver/nvidia/version")).find(" 470.239.06 "),
              std::string::npos);
}

TEST(NvidiaTree, RebuildOnlyOverAMarkedRoot) {
    SimRoot r(testing::spec_json("h200-141gb"));
    ASSERT_EQ(r.error(), "");
    auto spec = load_spec(testing::spec_file("h100-80gb"));
    ASSERT_TRUE(spec.ok());
    testing::write_text(r.host("/stale-file"), "x");
    ASSERT_TRUE(build_tree(*spec, r.root()).ok());
    EXPECT_NE(::access(r.host("/stale-file").c_str(), F_OK), 0) << "the old tree was removed";
    EXPECT_NE(testing::read_text(r.host("/proc/driver/nvidia/gpus/0000:1b:00.0/information")), "");
    ::remove(r.host("/.xpart-sim-root").c_str());
    auto refused = build_tree(*spec, r.root());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, r.root() + ": not empty and not an xpart-sim root (no .xpart-sim-root)");
}

TEST(NvidiaTree, XpartSimBuildInstallsTheFakeNvml) {
    char tmpl[] = "/tmp/xpart-nvidia-cli-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string root = std::string(tmpl) + "/root";
    const std::string cmd = std::string(XPART_TEST_BUILDDIR) + "/xpart-sim build " +
                            testing::spec_file("h100-80gb") + " " + root;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(testing::read_text(root + "/usr/lib/xpart-sim/nvml-spec.json"),
              testing::read_text(testing::spec_file("h100-80gb")));
    struct stat st {};
    EXPECT_EQ(::stat((root + "/usr/lib/xpart-sim/libnvidia-ml.so.1").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777u, 0755u);
    ::nftw(tmpl, [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
           FTW_DEPTH | FTW_PHYS);
}

}  // namespace
}  // namespace xpart::sim
