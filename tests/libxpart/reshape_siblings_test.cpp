// The reshape flow's sibling NodeNames of a host (libxpart/slurm_text/reshape_siblings): their names,
// slurm.conf lines (the current geometry first and up, the others powered down, each GPU's
// share counted for the host) and gres.conf lines; and that `xpart reshape --slurm-node` reads
// back from a generated line the geometry it was made from (node_gpu_geometry).
#include <gtest/gtest.h>

#include <algorithm>

#include "libxpart/slurm_text/gpu_request.hpp"
#include "libxpart/slurm_text/reshape_siblings.hpp"

namespace xpart {
namespace {

using Types = std::vector<std::string>;

const Types kMixed{"3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"};
const Types kTwo3g{"3g.40gb", "3g.40gb"};
const Types kCpx(8, "cpx");

TEST(SiblingNodeName, NamedOrByItsTypes) {
    struct Case {
        HostGeometry geometry;
        const char* name;
    };
    const Case cases[] = {
        {{"a100-7x1g", Types(7, "1g.10gb"), false}, "gpu1-a100-7x1g"},
        {{"", kTwo3g, false}, "gpu1-2x3g40gb"},
        {{"", kMixed, true}, "gpu1-3g40gb_2g20gb_2x1g10gb"},
        {{"", {"7g.80gb"}, false}, "gpu1-7g80gb"},
        {{"cpx", kCpx, false}, "gpu1-cpx"},
        {{"", kCpx, false}, "gpu1-8xcpx"},
    };
    for (const auto& c : cases) EXPECT_EQ(sibling_node_name("gpu1", c.geometry), c.name);
}

TEST(SiblingFiles, TheFilesEveryPartitionOfTheGpuShares) {
    Gpu nvidia;
    nvidia.minor = 3;
    EXPECT_EQ(sibling_files(nvidia, RootFs("/sim")), (Types{"/sim/dev/nvidia3", "/sim/dev/nvidiactl"}));
    Gpu amd;
    amd.vendor = Vendor::Amd;
    amd.minor = 129;
    EXPECT_EQ(sibling_files(amd, RootFs("/")), (Types{"/dev/kfd", "/dev/dri/renderD129"}));
}

TEST(SiblingNodes, CurrentFirstAndUpTheOthersPoweredDown) {
    const std::vector<HostGeometry> geometries{{"", kTwo3g, false}, {"mixed", kMixed, true}};
    const SiblingOptions options{"gpu1", 7000, "CPUs=64 RealMemory=500000"};
    EXPECT_EQ(render_sibling_nodes(geometries, 2, options),
              "NodeName=gpu1-mixed NodeHostname=gpu1 Port=7000 Gres=gpu:3g.40gb:2,gpu:2g.20gb:2,gpu:1g.10gb:4 "
              "Features=xpart_host_gpu1 CPUs=64 RealMemory=500000\n"
              "NodeName=gpu1-2x3g40gb NodeHostname=gpu1 Port=7001 Gres=gpu:3g.40gb:4 Features=xpart_host_gpu1 "
              "CPUs=64 RealMemory=500000 State=CLOUD\n");
}

// What the reshape reads from a sibling's record is the geometry the line was made from.
TEST(SiblingNodes, ReshapeReadsBackEachGeometry) {
    for (const Types& types : {kMixed, kTwo3g, kCpx, Types(7, "1g.10gb")})
        for (std::size_t gpus : {1u, 2u, 8u}) {
            const std::string line = render_sibling_nodes({{"", types, true}}, gpus, {"h", 6818, ""});
            auto read = node_gpu_geometry(line, static_cast<unsigned>(gpus));
            ASSERT_TRUE(read) << line << read.error().message;
            Types want = types, got = *read;
            std::sort(want.begin(), want.end());
            std::sort(got.begin(), got.end());
            EXPECT_EQ(got, want) << line;
        }
}

TEST(SiblingGres, OneLinePerPartitionOfEachGpuNamedBySharedFiles) {
    const std::vector<HostGeometry> geometries{{"", kTwo3g, false}, {"", {"7g.80gb"}, true}};
    const std::vector<Types> files{{"/dev/nvidia0", "/dev/nvidiactl"}, {"/dev/nvidia1", "/dev/nvidiactl"}};
    EXPECT_EQ(render_sibling_gres(geometries, files, {"gpu1", 6818, ""}),
              "NodeName=gpu1-7g80gb Name=gpu Type=7g.80gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"
              "NodeName=gpu1-7g80gb Name=gpu Type=7g.80gb MultipleFiles=/dev/nvidia1,/dev/nvidiactl\n"
              "NodeName=gpu1-2x3g40gb Name=gpu Type=3g.40gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"
              "NodeName=gpu1-2x3g40gb Name=gpu Type=3g.40gb MultipleFiles=/dev/nvidia0,/dev/nvidiactl\n"
              "NodeName=gpu1-2x3g40gb Name=gpu Type=3g.40gb MultipleFiles=/dev/nvidia1,/dev/nvidiactl\n"
              "NodeName=gpu1-2x3g40gb Name=gpu Type=3g.40gb MultipleFiles=/dev/nvidia1,/dev/nvidiactl\n");
}

}  // namespace
}  // namespace xpart
