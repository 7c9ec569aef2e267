#include <gtest/gtest.h>

#include "libxpart/nvidia/mig_naming.hpp"
#include "sim/nvidia_profiles.hpp"

namespace xpart {
namespace {

// Every product of mig-profiles.md: the parent's total MiB as NVML reports it, and each GI
// shape (slices, memory eighths, media extensions) with the name the guide prints. The GI
// memory fed in is a little below the nominal fraction, as drivers report it.
struct NamedShape {
    const char* product;
    std::uint64_t total_mb;
    unsigned gi_slices;
    unsigned eighths;
    bool media;
    const char* expected;
};

class MigNameTest : public ::testing::TestWithParam<NamedShape> {};

TEST_P(MigNameTest, NameAsTheGuidePrintsIt) {
    const NamedShape& s = GetParam();
    const std::uint64_t gi_mb = s.total_mb * s.eighths / 8 * 97 / 100;
    EXPECT_EQ(mig_profile_name({s.gi_slices, s.gi_slices, gi_mb, s.media ? 1u : 0u}, s.total_mb),
              s.expected)
        << s.product;
}

INSTANTIATE_TEST_SUITE_P(GuideProducts, MigNameTest, ::testing::Values(
    NamedShape{"A30-24GB", 24576, 1, 2, false, "1g.6gb"},
    NamedShape{"A30-24GB", 24576, 1, 2, true, "1g.6gb+me"},
    NamedShape{"A30-24GB", 24576, 2, 4, false, "2g.12gb"},
    NamedShape{"A30-24GB", 24576, 2, 4, true, "2g.12gb+me"},
    NamedShape{"A30-24GB", 24576, 4, 8, true, "4g.24gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 1, 1, false, "1g.5gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 1, 1, true, "1g.5gb+me"},
    NamedShape{"A100-SXM4-40GB", 40960, 1, 2, false, "1g.10gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 2, 2, false, "2g.10gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 3, 4, false, "3g.20gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 4, 4, false, "4g.20gb"},
    NamedShape{"A100-SXM4-40GB", 40960, 7, 8, true, "7g.40gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 1, 1, false, "1g.10gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 1, 1, true, "1g.10gb+me"},
    NamedShape{"A100-SXM4-80GB", 81920, 1, 2, false, "1g.20gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 2, 2, false, "2g.20gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 3, 4, false, "3g.40gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 4, 4, false, "4g.40gb"},
    NamedShape{"A100-SXM4-80GB", 81920, 7, 8, true, "7g.80gb"},
    NamedShape{"H100 80GB", 81559, 1, 1, false, "1g.10gb"},
    NamedShape{"H100 80GB", 81559, 1, 1, true, "1g.10gb+me"},
    NamedShape{"H100 80GB", 81559, 1, 2, false, "1g.20gb"},
    NamedShape{"H100 80GB", 81559, 2, 2, false, "2g.20gb"},
    NamedShape{"H100 80GB", 81559, 3, 4, false, "3g.40gb"},
    NamedShape{"H100 80GB", 81559, 4, 4, false, "4g.40gb"},
    NamedShape{"H100 80GB", 81559, 7, 8, true, "7g.80gb"},
    NamedShape{"H100 94GB", 95830, 1, 1, false, "1g.12gb"},
    NamedShape{"H100 94GB", 95830, 1, 1, true, "1g.12gb+me"},
    NamedShape{"H100 94GB", 95830, 1, 2, false, "1g.24gb"},
    NamedShape{"H100 94GB", 95830, 2, 2, false, "2g.24gb"},
    NamedShape{"H100 94GB", 95830, 3, 4, false, "3g.47gb"},
    NamedShape{"H100 94GB", 95830, 4, 4, false, "4g.47gb"},
    NamedShape{"H100 94GB", 95830, 7, 8, false, "7g.94gb"},
    NamedShape{"H100 96GB", 97871, 1, 1, false, "1g.12gb"},
    NamedShape{"H100 96GB", 97871, 1, 2, false, "1g.24gb"},
    NamedShape{"H100 96GB", 97871, 3, 4, false, "3g.48gb"},
    NamedShape{"H100 96GB", 97871, 7, 8, false, "7g.96gb"},
    NamedShape{"H200 141GB", 143771, 1, 1, false, "1g.18gb"},
    NamedShape{"H200 141GB", 143771, 1, 1, true, "1g.18gb+me"},
    NamedShape{"H200 141GB", 143771, 1, 2, false, "1g.35gb"},
    NamedShape{"H200 141GB", 143771, 2, 2, false, "2g.35gb"},
    NamedShape{"H200 141GB", 143771, 3, 4, false, "3g.71gb"},
    NamedShape{"H200 141GB", 143771, 4, 4, false, "4g.71gb"},
    NamedShape{"H200 141GB", 143771, 7, 8, true, "7g.141gb"},
    NamedShape{"B200 180GB", 183359, 1, 1, false, "1g.23gb"},
    NamedShape{"B200 180GB", 183359, 1, 1, true, "1g.23gb+me"},
    NamedShape{"B200 180GB", 183359, 1, 2, false, "1g.45gb"},
    NamedShape{"B200 180GB", 183359, 2, 2, false, "2g.45gb"},
    NamedShape{"B200 180GB", 183359, 3, 4, false, "3g.90gb"},
    NamedShape{"B200 180GB", 183359, 4, 4, false, "4g.90gb"},
    NamedShape{"B200 180GB", 183359, 7, 8, false, "7g.180gb"}));

// The simulator's profile tables feed the fake NVML: each profile's attributes must name it.
TEST(MigName, EverySimulatedProfileNamesItself) {
    for (const auto& product : sim::gpu_products())
        for (const auto& p : product.profiles)
            EXPECT_EQ(mig_profile_name({p.slices, p.slices, p.memory_mib, p.ofas}, product.memory_mib),
                      p.name)
                << product.key;
}

TEST(MigName, ComputeInstancePrefixOnlyWhenSmallerThanItsGpuInstance) {
    EXPECT_EQ(mig_profile_name({3, 1, 19968, 0}, 40960), "1c.3g.20gb");
    EXPECT_EQ(mig_profile_name({7, 3, 40192, 1}, 40960), "3c.7g.40gb");
    EXPECT_EQ(mig_profile_name({3, 1, 40448, 0}, 81559), "1c.3g.40gb");
    EXPECT_EQ(mig_profile_name({3, 3, 19968, 0}, 40960), "3g.20gb");
}

TEST(MigName, TinyInstanceIsAtLeastOneEighth) {
    EXPECT_EQ(mig_profile_name({1, 1, 100, 0}, 40960), "1g.5gb");
}

struct TypePair {
    const char* configured;
    const char* discovered;
    bool match;
};
class MigTypesMatchTest : public ::testing::TestWithParam<TypePair> {};
TEST_P(MigTypesMatchTest, ToleratesDriverDriftOnly) {
    EXPECT_EQ(mig_types_match(GetParam().configured, GetParam().discovered), GetParam().match)
        << GetParam().configured << " vs " << GetParam().discovered;
}
INSTANTIATE_TEST_SUITE_P(Drift, MigTypesMatchTest, ::testing::Values(
    TypePair{"3g.40gb", "3g.40gb", true},
    TypePair{"3g.40gb", "3g.39gb", true},
    TypePair{"3G.40GB", "3g.40gb", true},
    TypePair{"7g.141gb", "7g.135gb", true},    // 5% of 141 = 7
    TypePair{"7g.141gb", "7g.133gb", false},
    TypePair{"1g.5gb", "1g.6gb", true},        // at least 1 GB
    TypePair{"1g.5gb", "1g.7gb", false},
    TypePair{"1g.10gb", "2g.10gb", false},
    TypePair{"1g.10gb", "1g.10gb+me", false},
    TypePair{"1g.10gb+me", "1g.10gb+me", true},
    TypePair{"1c.3g.40gb", "3g.40gb", false},
    TypePair{"1c.3g.40gb", "1c.3g.39gb", true},
    TypePair{"2c.3g.40gb", "1c.3g.40gb", false},
    TypePair{"3g", "3g.40gb", false},
    TypePair{"", "3g.40gb", false},
    TypePair{"xg.40gb", "3g.40gb", false},
    TypePair{"3g.40gbx", "3g.40gb", false},
    TypePair{"a100-sxm4-40gb", "a100-sxm4-40gb", false}));

TEST(FullGpuTypeName, LowerCaseWithoutVendorDashesForSpaces) {
    EXPECT_EQ(full_gpu_type_name("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3");
    EXPECT_EQ(full_gpu_type_name("A100-SXM4-40GB"), "a100-sxm4-40gb");
    EXPECT_EQ(full_gpu_type_name("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
    EXPECT_EQ(full_gpu_type_name("Tesla V100-SXM2-32GB"), "tesla-v100-sxm2-32gb");
}

}  // namespace
}  // namespace xpart
