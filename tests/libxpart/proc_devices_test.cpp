#include <gtest/gtest.h>

#include "libxpart/proc_devices.hpp"

namespace xpart {
namespace {

constexpr const char* kProcDevices =
    "Character devices:\n  1 mem\n195 nvidia-frontend\n226 drm\n508 nvidia-caps\n"
    "509 nvidia-uvm\n\nBlock devices:\n  8 sd\n";

TEST(CharMajors, ReadsCharacterSectionOnly) {
    auto m = CharMajors::parse(kProcDevices, "/proc/devices");
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->find("nvidia-frontend"), 195u);
    EXPECT_EQ(m->find("nvidia-caps"), 508u);
    EXPECT_EQ(m->find("drm"), 226u);
    EXPECT_FALSE(m->find("sd"));  // block device
}

TEST(CharMajors, MissingDriverNamesFile) {
    auto m = CharMajors::parse(kProcDevices, "/r/proc/devices");
    ASSERT_TRUE(m.ok());
    auto kfd = m->require("kfd");
    ASSERT_FALSE(kfd.ok());
    EXPECT_EQ(kfd.error().message, "/r/proc/devices: no character device driver 'kfd'");
}

TEST(CharMajors, MalformedLineIsAnError) {
    auto m = CharMajors::parse("Character devices:\nxyz nvidia\n", "/proc/devices");
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message, "/proc/devices:2: expected '<major> <driver>', got 'xyz nvidia'");
}

}  // namespace
}  // namespace xpart
