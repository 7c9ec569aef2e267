// `xpart discover` on the DGX-A100-like node: the NIC table and --check-nics (exit 0 when every
// GPU has a NIC nearer than across sockets, exit 3 and one line per GPU when not).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

// Builds the shipped spec, or the spec without the NICs named in `drop`, and runs discover.
CommandResult discover_dgx(const TempDir& dir, const std::vector<std::string>& drop,
                           const std::vector<std::string>& args) {
    auto spec = nlohmann::json::parse(read_text(source_dir() + "/sim/specs/dgx-a100-nic.json"),
                                      nullptr, true, true);
    auto& nics = spec["nics"];
    for (const std::string& name : drop)
        for (auto it = nics.begin(); it != nics.end(); ++it)
            if ((*it)["name"] == name) {
                nics.erase(it);
                break;
            }
    write_text(dir.path() + "/spec.json", spec.dump());
    const std::string root = dir.path() + "/root";
    auto built = run_command({build_dir() + "/xpart-sim", "build", dir.path() + "/spec.json", root});
    EXPECT_EQ(built.exit_code, 0) << built.err;
    std::vector<std::string> argv{build_dir() + "/xpart", "--root", root, "discover",
                                  "--nvml-library", root + "/usr/lib/xpart-sim/libnvidia-ml.so.1"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_command(argv);
}

TEST(DiscoverNics, TableShowsEachGpusOwnNic) {
    TempDir dir;
    auto r = discover_dgx(dir, {}, {});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("    mlx5_4   0000:61:00.0  0     1:active/Ethernet\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    GPU 0  0000:07:00.0  mlx5_0:1  switch  switch: mlx5_1; socket: "),
              std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    GPU 7  0000:bd:00.0  mlx5_9:1  switch  switch: mlx5_8; socket: "),
              std::string::npos) << r.out;
    auto ok = run_command({build_dir() + "/xpart", "--root", dir.path() + "/root", "discover",
                           "--nvml-library", dir.path() + "/root/usr/lib/xpart-sim/libnvidia-ml.so.1",
                           "--check-nics"});
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    EXPECT_EQ(ok.out, "");
}

TEST(DiscoverNics, CheckNicsNamesGpusAcrossSockets) {
    TempDir dir;
    auto r = discover_dgx(dir, {"mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_10"}, {"--check-nics"});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines[0],
              "GPU 4 (0000:87:00.0): no RDMA NIC nearer than across sockets: GPUDirect RDMA may be "
              "very slow or fail (nearest: mlx5_4)");
}

TEST(DiscoverNics, CheckNicsOnANodeWithoutNics) {
    TempDir dir;
    auto r = discover_dgx(dir, {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_6", "mlx5_7",
                                "mlx5_8", "mlx5_9", "mlx5_10"},
                          {"--check-nics"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "xpart discover: no RDMA NIC on this node\n");
}

}  // namespace
}  // namespace xpart::test
