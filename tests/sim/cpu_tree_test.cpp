// The CPU and NUMA topology the simulator writes: the sysfs files of a real node, in the
// kernel's formats (what hwloc reads through a root prefix; tests/binding/mapping_test
// loads a simulated root with hwloc itself).
#include <ftw.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/spec.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {
namespace {

namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(CpuMask, KernelFormat) {
    EXPECT_EQ(format_cpu_mask({0, 1}, 2), "3");
    EXPECT_EQ(format_cpu_mask({}, 4), "0");
    EXPECT_EQ(format_cpu_mask({0}, 32), "00000001");
    EXPECT_EQ(format_cpu_mask({31, 32}, 33), "1,80000000");
    // 112 CPUs: the top word is 16 bits wide (4 hex digits), as the kernel prints it.
    EXPECT_EQ(format_cpu_mask({0, 111}, 112), "8000,00000000,00000000,00000001");
    std::vector<unsigned> all;
    for (unsigned c = 0; c < 256; ++c) all.push_back(c);
    EXPECT_EQ(format_cpu_mask(all, 256), "ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff,ffffffff");
}

class CpuTreeTest : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xpart-cpu-tree-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    void build(const std::string& spec_text) {
        auto spec = parse_spec(spec_text, "node.json");
        ASSERT_TRUE(spec.ok()) << spec.error().message;
        auto st = build_tree(*spec, dir_ + "/root");
        ASSERT_TRUE(st.ok()) << st.error().message;
    }
    std::string sys(const std::string& path) { return read_text(dir_ + "/root/sys/devices/system/" + path); }
    std::string dir_;
};

// Two NUMA nodes, each one package; CPUs interleaved as on the A100 guide's node.
TEST_F(CpuTreeTest, PackagesCoresAndNumaNodesAsTheKernelShowsThem) {
    build(R"({"name":"n","cpus":"0-7","numa":[{"node":0,"cpus":"0-1,4-5"},{"node":1,"cpus":"2-3,6-7"}]})");
    for (const char* f : {"cpu/online", "cpu/possible", "cpu/present"}) EXPECT_EQ(sys(f), "0-7\n") << f;
    EXPECT_EQ(sys("node/online"), "0-1\n");
    EXPECT_EQ(sys("node/node0/cpumap"), "33\n");
    EXPECT_EQ(sys("node/node1/cpumap"), "cc\n");
    EXPECT_EQ(sys("node/node1/cpulist"), "2-3,6-7\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/physical_package_id"), "1\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/core_id"), "2\n");  // third CPU of its package
    EXPECT_EQ(sys("cpu/cpu6/topology/core_cpus"), "40\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/core_cpus_list"), "6\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/thread_siblings"), "40\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/package_cpus"), "cc\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/package_cpus_list"), "2-3,6-7\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/core_siblings"), "cc\n");
    EXPECT_EQ(sys("cpu/cpu6/topology/die_cpus"), "cc\n");
    const std::string base = dir_ + "/root/sys/devices/system/";
    EXPECT_EQ(fs::read_symlink(base + "cpu/cpu6/node1"), "../../node/node1");
    EXPECT_EQ(fs::canonical(base + "node/node1/cpu6"), fs::canonical(base + "cpu/cpu6"));
    EXPECT_FALSE(fs::exists(base + "cpu/cpu6/node0"));
}

// CPUs in no NUMA node of the spec form a package of their own, linked to no node.
TEST_F(CpuTreeTest, CpusOutsideEveryNumaNodeAreOnePackage) {
    build(R"({"name":"n","cpus":"0-3","numa":[{"node":0,"cpus":"0-1"}]})");
    EXPECT_EQ(sys("cpu/cpu3/topology/physical_package_id"), "1\n");
    EXPECT_EQ(sys("cpu/cpu3/topology/package_cpus_list"), "2-3\n");
    EXPECT_FALSE(fs::exists(dir_ + "/root/sys/devices/system/cpu/cpu3/node0"));
}

}  // namespace
}  // namespace xpart::sim
