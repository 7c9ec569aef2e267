// Pure AMD helpers: KFD properties parsing, mode inference, type names, render-link ownership.
#include <gtest/gtest.h>

#include "libxpart/amd/amd_kfd.hpp"
#include "libxpart/amd/amd_models.hpp"
#include "libxpart/amd/amd_partition.hpp"

namespace xpart {
namespace {

TEST(KfdProperties, ParsesDecimalKeyValues) {
    auto p = KfdProperties::parse("simd_count 152\n\nunique_id 16404946649897475633\n", "f");
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->find("simd_count"), 152u);
    EXPECT_EQ(p->find("unique_id"), 16404946649897475633ull);
    EXPECT_FALSE(p->find("num_xcc").has_value());
    EXPECT_EQ(p->get_or("num_xcc", 7), 7u);
}

struct BadProperties {
    const char* text;
    const char* message;
};
class KfdPropertiesErrorTest : public ::testing::TestWithParam<BadProperties> {};
TEST_P(KfdPropertiesErrorTest, NamesFileAndLine) {
    auto p = KfdProperties::parse(GetParam().text, "props");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().message, GetParam().message);
}
INSTANTIATE_TEST_SUITE_P(Amd, KfdPropertiesErrorTest, ::testing::Values(
    BadProperties{"a 1\nsimd_count\n", "props:2: expected 'key value', got 'simd_count'"},
    BadProperties{"a 1\nb 2\nc 1.5\n", "props:3: c: expected a decimal number, got '1.5'"},
    BadProperties{"a -3\n", "props:1: a: expected a decimal number, got '-3'"},
    BadProperties{"a 18446744073709551616\n",
                  "props:1: a: expected a decimal number, got '18446744073709551616'"},
    BadProperties{"a 1 2\n", "props:1: a: expected a decimal number, got '1 2'"}));

struct ModeCase {
    const char* model;  // nullptr: unknown model
    unsigned num_xcc;
    std::size_t nodes;
    PartitionMode mode;
};
class InferModeTest : public ::testing::TestWithParam<ModeCase> {};
TEST_P(InferModeTest, FromXccCount) {
    const AmdModel* m = GetParam().model ? find_amd_model(std::string(GetParam().model)) : nullptr;
    if (GetParam().model) {
        ASSERT_NE(m, nullptr) << GetParam().model;
    }
    auto mode = infer_amd_mode(m, GetParam().num_xcc, GetParam().nodes);
    ASSERT_TRUE(mode.ok()) << mode.error().message;
    EXPECT_EQ(to_string(*mode), std::string(to_string(GetParam().mode)));
}
INSTANTIATE_TEST_SUITE_P(Amd, InferModeTest, ::testing::Values(
    ModeCase{"MI300X", 8, 1, PartitionMode::Spx}, ModeCase{"MI300X", 4, 2, PartitionMode::Dpx},
    ModeCase{"MI300X", 2, 4, PartitionMode::Qpx}, ModeCase{"MI300X", 1, 8, PartitionMode::Cpx},
    ModeCase{"MI300X", 1, 7, PartitionMode::Cpx},  // a lost partition does not change the mode
    ModeCase{"MI300A", 6, 1, PartitionMode::Spx}, ModeCase{"MI300A", 2, 3, PartitionMode::Tpx},
    ModeCase{"MI300A", 1, 6, PartitionMode::Cpx}, ModeCase{"MI325X", 1, 8, PartitionMode::Cpx},
    ModeCase{"MI308X", 2, 2, PartitionMode::Dpx}, ModeCase{"MI308X", 1, 4, PartitionMode::Cpx},
    ModeCase{"MI210", 1, 1, PartitionMode::Full},
    ModeCase{"MI300X", 0, 4, PartitionMode::Qpx},  // no num_xcc: by node count
    ModeCase{nullptr, 1, 1, PartitionMode::Full}, ModeCase{nullptr, 1, 2, PartitionMode::Dpx},
    ModeCase{nullptr, 1, 6, PartitionMode::Cpx}));

TEST(InferMode, XccCountThatCannotBe) {
    for (unsigned xcc : {3u, 5u, 9u, 16u}) {
        auto mode = infer_amd_mode(find_amd_model(0x74a1), xcc, 1);
        ASSERT_FALSE(mode.ok()) << xcc;
        EXPECT_EQ(mode.error().message, "num_xcc " + std::to_string(xcc) +
                                            " does not divide the 8 XCCs of an MI300X");
    }
}

struct TypeCase {
    AmdTypeNaming naming;
    PartitionMode mode;
    const char* memory;
    const char* model;
    const char* type;
};
class AmdTypeTest : public ::testing::TestWithParam<TypeCase> {};
TEST_P(AmdTypeTest, Names) {
    const auto& c = GetParam();
    EXPECT_EQ(amd_partition_type(c.naming, c.mode, c.memory, c.model), c.type);
}
INSTANTIATE_TEST_SUITE_P(Amd, AmdTypeTest, ::testing::Values(
    TypeCase{AmdTypeNaming::Mode, PartitionMode::Cpx, "NPS4", "MI300X", "cpx"},
    TypeCase{AmdTypeNaming::ModeMemory, PartitionMode::Cpx, "NPS4", "MI300X", "cpx.nps4"},
    TypeCase{AmdTypeNaming::ModeMemory, PartitionMode::Cpx, "", "MI300X", "cpx"},
    TypeCase{AmdTypeNaming::ModelModeMemory, PartitionMode::Cpx, "NPS4", "MI300X", "mi300x.cpx.nps4"},
    TypeCase{AmdTypeNaming::ModelModeMemory, PartitionMode::Tpx, "", "MI300A", "mi300a.tpx"},
    TypeCase{AmdTypeNaming::Mode, PartitionMode::Spx, "NPS1", "MI300X", "spx"},
    TypeCase{AmdTypeNaming::ModelModeMemory, PartitionMode::Full, "", "MI210", "mi210"},
    TypeCase{AmdTypeNaming::Mode, PartitionMode::Full, "", "gfx90010", "gfx90010"}));

struct LinkCase {
    const char* target;
    int partition;
    bool ok;
};
class RenderLinkTest : public ::testing::TestWithParam<LinkCase> {};
TEST_P(RenderLinkTest, OwnerIsThePciDeviceOrAnXcp) {
    auto st = check_amd_render_link(GetParam().target, "0000:05:00.0", GetParam().partition, "L");
    EXPECT_EQ(st.ok(), GetParam().ok) << GetParam().target;
    if (!st.ok()) {
        EXPECT_EQ(st.error().message.rfind("L: points to '", 0), 0u);
    }
}
INSTANTIATE_TEST_SUITE_P(Amd, RenderLinkTest, ::testing::Values(
    LinkCase{"../../../0000:05:00.0", 0, true},
    LinkCase{"/sys/devices/pci0000:00/0000:00:01.1/0000:05:00.0", 0, true},
    LinkCase{"../../../amdgpu_xcp.0", 1, true},     // older kernels
    LinkCase{"../../../amdgpu_xcp_17", 3, true},    // newer kernels
    LinkCase{"../../../amdgpu_xcp.0", 0, false},    // partition 0 is the PCI device's
    LinkCase{"../../../0000:05:00.0", 1, false},
    LinkCase{"../../../0000:26:00.0", 0, false},
    LinkCase{"../../../amdgpu_xcp", 1, false},
    LinkCase{"../../../amdgpu_xcp.x", 1, false},
    LinkCase{"../../../amdgpu_xcp-3", 1, false},
    LinkCase{"../../../simple-framebuffer.0", 1, false}));

TEST(AmdPartitionAttribute, ParsesExactModes) {
    EXPECT_EQ(parse_amd_compute_partition("CPX\n"), PartitionMode::Cpx);
    EXPECT_EQ(parse_amd_compute_partition("SPX"), PartitionMode::Spx);
    EXPECT_FALSE(parse_amd_compute_partition("cpx").has_value());
    EXPECT_FALSE(parse_amd_compute_partition("").has_value());
    EXPECT_EQ(parse_amd_memory_partition("NPS4\n"), "NPS4");
    EXPECT_FALSE(parse_amd_memory_partition("NPS3").has_value());
}

TEST(AmdModels, TableLookups) {
    ASSERT_NE(find_amd_model(29857u), nullptr);
    EXPECT_STREQ(find_amd_model(29857u)->name, "MI300X");
    EXPECT_STREQ(find_amd_model(29711u)->name, "MI210");
    EXPECT_STREQ(find_amd_model(std::string("mi300a"))->name, "MI300A");
    EXPECT_EQ(find_amd_model(0x1234u), nullptr);
    for (const auto& m : amd_models())
        EXPECT_EQ(amd_mode_partition_count(PartitionMode::Cpx, m), m.total_xcc) << m.name;
}

}  // namespace
}  // namespace xpart
