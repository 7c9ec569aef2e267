// The fake libnvidia-ml.so.1 through its C API, as any NVML client sees it: real return codes
// for the misuse a client can make, and nothing but NVML symbols exported.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstring>

#include "libxpart/nvidia/nvml.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart::sim {
namespace {

using nlohmann::json;
using nvml::Device;

class FakeNvml : public ::testing::Test {
protected:
    void open(const json& spec) {
        root_ = std::make_unique<testing::SimRoot>(spec);
        ASSERT_EQ(root_->error(), "");
        lib_ = ::dlopen(root_->nvml_library().c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib_, nullptr) << ::dlerror();
    }
    template <class Fn>
    Fn sym(const char* name) {
        return reinterpret_cast<Fn>(::dlsym(lib_, name));
    }
    int init() { return sym<int (*)()>("nvmlInit_v2")(); }
    int shutdown() { return sym<int (*)()>("nvmlShutdown")(); }
    int count(unsigned* n) { return sym<int (*)(unsigned*)>("nvmlDeviceGetCount_v2")(n); }
    int handle(unsigned i, Device* d) {
        return sym<int (*)(unsigned, Device*)>("nvmlDeviceGetHandleByIndex_v2")(i, d);
    }
    int mig_handle(Device d, unsigned i, Device* m) {
        return sym<int (*)(Device, unsigned, Device*)>("nvmlDeviceGetMigDeviceHandleByIndex")(d, i, m);
    }
    int uuid(Device d, char* buf, unsigned len) {
        return sym<int (*)(Device, char*, unsigned)>("nvmlDeviceGetUUID")(d, buf, len);
    }
    int mig_mode(Device d, unsigned* cur, unsigned* pend) {
        return sym<int (*)(Device, unsigned*, unsigned*)>("nvmlDeviceGetMigMode")(d, cur, pend);
    }

    std::unique_ptr<testing::SimRoot> root_;
    void* lib_ = nullptr;  // never closed: a test process may keep several fakes loaded
};

TEST_F(FakeNvml, UninitializedBeforeInitAndAfterLastShutdown) {
    open(testing::spec_json("h100-80gb"));
    unsigned n = 0;
    EXPECT_EQ(count(&n), nvml::kErrorUninitialized);
    ASSERT_EQ(init(), nvml::kSuccess);
    ASSERT_EQ(init(), nvml::kSuccess);  // reference counted like the real library
    EXPECT_EQ(count(&n), nvml::kSuccess);
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(shutdown(), nvml::kSuccess);
    EXPECT_EQ(count(&n), nvml::kSuccess);
    EXPECT_EQ(shutdown(), nvml::kSuccess);
    EXPECT_EQ(count(&n), nvml::kErrorUninitialized);
    EXPECT_EQ(shutdown(), nvml::kErrorUninitialized);
}

TEST_F(FakeNvml, BufferSizesHandlesAndIndices) {
    open(testing::spec_json("h100-80gb"));
    ASSERT_EQ(init(), nvml::kSuccess);
    Device d = nullptr, m = nullptr;
    EXPECT_EQ(handle(1, &d), nvml::kErrorInvalidArgument);
    ASSERT_EQ(handle(0, &d), nvml::kSuccess);
    char buf[96];
    EXPECT_EQ(uuid(d, buf, 40), nvml::kErrorInsufficientSize);  // 40 chars need 41 bytes
    ASSERT_EQ(uuid(d, buf, 41), nvml::kSuccess);
    EXPECT_STREQ(buf, "GPU-c08d91cb-e324-655c-71ba-7570956445bc");
    auto name = sym<int (*)(Device, char*, unsigned)>("nvmlDeviceGetName");
    EXPECT_EQ(name(d, buf, 4), nvml::kErrorInsufficientSize);
    int bogus = 0;
    EXPECT_EQ(uuid(reinterpret_cast<Device>(&bogus), buf, sizeof buf), nvml::kErrorInvalidArgument);
    EXPECT_EQ(uuid(nullptr, buf, sizeof buf), nvml::kErrorInvalidArgument);
    // MIG indices: 0..4 exist, 5 and 6 are unused (NOT_FOUND), 7 is out of range.
    EXPECT_EQ(mig_handle(d, 4, &m), nvml::kSuccess);
    EXPECT_EQ(mig_handle(d, 5, &m), nvml::kErrorNotFound);
    EXPECT_EQ(mig_handle(d, 7, &m), nvml::kErrorInvalidArgument);
    ASSERT_EQ(mig_handle(d, 0, &m), nvml::kSuccess);
    unsigned id = 0;
    auto gi_id = sym<int (*)(Device, unsigned*)>("nvmlDeviceGetGpuInstanceId");
    EXPECT_EQ(gi_id(d, &id), nvml::kErrorNotSupported);  // the parent is not a MIG device
    EXPECT_EQ(gi_id(m, &id), nvml::kSuccess);
    EXPECT_EQ(id, 1u);
    unsigned cur = 9, pend = 9;
    EXPECT_EQ(mig_mode(m, &cur, &pend), nvml::kErrorNotSupported);
    nvml::PciInfo pci{};
    auto pci_info = sym<int (*)(Device, nvml::PciInfo*)>("nvmlDeviceGetPciInfo_v3");
    ASSERT_EQ(pci_info(d, &pci), nvml::kSuccess);
    EXPECT_STREQ(pci.busId, "00000000:1B:00.0");
    EXPECT_STREQ(pci.busIdLegacy, "0000:1B:00.0");
    EXPECT_EQ(pci.bus, 0x1bu);
    EXPECT_EQ(shutdown(), nvml::kSuccess);
}

// A MIG handle is named "<GPU name> MIG <profile>" as the driver names it, with the compute
// instance prefix when the CI is smaller than its GPU instance (Slurm 24.11 reads this).
TEST_F(FakeNvml, MigDeviceNamesCarryTheProfile) {
    const nlohmann::json spec = testing::spec_json("h100-80gb");
    open(spec);
    ASSERT_EQ(init(), nvml::kSuccess);
    Device d = nullptr, m = nullptr;
    ASSERT_EQ(handle(0, &d), nvml::kSuccess);
    auto name = sym<int (*)(Device, char*, unsigned)>("nvmlDeviceGetName");
    char gpu[96], buf[96];
    ASSERT_EQ(name(d, gpu, sizeof gpu), nvml::kSuccess);
    // h100-80gb: MIG indices 0..2 are the 1c CIs of the 3g.40gb GI, 3..4 the two 1g.10gb.
    const nlohmann::json& gis = spec["nvidia"]["gpus"][0]["instances"];
    ASSERT_EQ(mig_handle(d, 0, &m), nvml::kSuccess);
    ASSERT_EQ(name(m, buf, sizeof buf), nvml::kSuccess);
    EXPECT_EQ(std::string(buf), std::string(gpu) + " MIG 1c." + gis[0]["profile"].get<std::string>());
    ASSERT_EQ(mig_handle(d, 4, &m), nvml::kSuccess);
    ASSERT_EQ(name(m, buf, sizeof buf), nvml::kSuccess);
    EXPECT_EQ(std::string(buf), std::string(gpu) + " MIG " + gis[1]["profile"].get<std::string>());
    // Too short a buffer: INSUFFICIENT_SIZE, as for every string.
    EXPECT_EQ(name(m, buf, static_cast<unsigned>(std::strlen(buf))), nvml::kErrorInsufficientSize);
    // The calls Slurm's gpu/nvml makes besides: the driver version of the spec, no NVLink.
    auto driver = sym<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
    ASSERT_NE(driver, nullptr);
    ASSERT_EQ(driver(buf, sizeof buf), nvml::kSuccess);
    EXPECT_EQ(std::string(buf), spec["nvidia"].value("driver_version", std::string("535.104.05")));
    auto link = sym<int (*)(Device, unsigned, unsigned*)>("nvmlDeviceGetNvLinkState");
    unsigned active = 7;
    EXPECT_EQ(link(d, 0, &active), nvml::kErrorNotSupported);
    EXPECT_EQ(shutdown(), nvml::kSuccess);
    EXPECT_EQ(driver(buf, sizeof buf), nvml::kErrorUninitialized);
}

TEST_F(FakeNvml, MigModesOfTheMixedNode) {
    open(testing::spec_json("mixed-mig-full"));
    ASSERT_EQ(init(), nvml::kSuccess);
    struct Want {
        unsigned gpu;
        int rc;
        unsigned cur, pend;
    };
    for (const Want& w : {Want{0, 0, 1, 1}, Want{1, 0, 0, 0}, Want{2, nvml::kErrorNotSupported, 9, 9},
                          Want{3, 0, 0, 1}}) {
        Device d = nullptr;
        ASSERT_EQ(handle(w.gpu, &d), nvml::kSuccess);
        unsigned cur = 9, pend = 9;
        EXPECT_EQ(mig_mode(d, &cur, &pend), w.rc) << "gpu " << w.gpu;
        EXPECT_EQ(cur, w.cur) << "gpu " << w.gpu;
        EXPECT_EQ(pend, w.pend) << "gpu " << w.gpu;
    }
    EXPECT_EQ(shutdown(), nvml::kSuccess);
}

TEST_F(FakeNvml, InvalidEnvironmentFaultsFailInit) {
    open(testing::spec_json("h100-80gb"));
    testing::ScopedEnv env("XPART_SIM_NVML_FAULTS", "nvmlDeviceGetUUID");
    EXPECT_EQ(init(), nvml::kErrorUnknown);
}

TEST_F(FakeNvml, SpecFromEnvironmentWinsOverTheOneBesideTheLibrary) {
    open(testing::spec_json("h100-80gb"));
    testing::ScopedEnv env("XPART_SIM_SPEC", testing::spec_file("a100-guide"));
    ASSERT_EQ(init(), nvml::kSuccess);
    unsigned n = 0;
    EXPECT_EQ(count(&n), nvml::kSuccess);
    EXPECT_EQ(n, testing::spec_json("a100-guide")["nvidia"]["gpus"].size());
    EXPECT_EQ(shutdown(), nvml::kSuccess);
}

TEST_F(FakeNvml, ExportsOnlyNvmlSymbols) {
    open(testing::spec_json("h100-80gb"));
    EXPECT_NE(::dlsym(lib_, "nvmlInit_v2"), nullptr);
    EXPECT_NE(::dlsym(lib_, "nvmlErrorString"), nullptr);
    EXPECT_EQ(::dlsym(lib_, "_ZN5xpart3sim9load_specERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
              nullptr);
    EXPECT_EQ(::dlsym(lib_, "_ZN5xpart3sim16find_gpu_productERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
              nullptr);
}

}  // namespace
}  // namespace xpart::sim
