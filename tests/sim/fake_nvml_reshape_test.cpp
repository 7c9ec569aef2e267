// The fake NVML reshaping a GPU through NVML's C API as the real driver does (the trial of the
// H100 r580 record replayed), its state shared with the next process through nvml-state.json,
// the simulated root's MIG capability files in step, and held processes blocking destroys.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include "sim/nvidia_profiles.hpp"
#include "tests/nvidia_sim_root.hpp"

namespace xpart::sim {
namespace {

using nlohmann::json;
using Handle = void*;

enum : int {
    kOk = 0, kUninitialized = 1, kInvalid = 2, kNotSupported = 3, kNotFound = 6,
    kInsufficientSize = 7, kInUse = 19, kNoResources = 23, kVersionMismatch = 25,
};

// nvml.h's layouts (r580).
struct Placement {
    unsigned start, size;
};
struct GiProfile {
    unsigned id, p2p, slices, count, sms, ce, dec, enc, jpeg, ofa;
    unsigned long long mib;
};
struct GiProfileV2 {
    unsigned version, id, p2p, slices, count, sms, ce, dec, enc, jpeg, ofa;
    unsigned long long mib;
    char name[96];
};
struct GiInfo {
    Handle device;
    unsigned id, profile;
    Placement placement;
};
struct CiProfile {
    unsigned id, slices, count, sms, ce, dec, enc, jpeg, ofa;
};
struct CiProfileV2 {
    unsigned version, id, slices, count, sms, ce, dec, enc, jpeg, ofa;
    char name[96];
};
struct CiInfo {
    Handle device, gpu_instance;
    unsigned id, profile;
    Placement placement;
};
struct ProcessInfo {
    unsigned pid;
    unsigned long long used;
    unsigned gi, ci;
};
constexpr unsigned kGiProfileV2 = (2u << 24) | sizeof(GiProfileV2);
constexpr unsigned kCiProfileV2 = (2u << 24) | sizeof(CiProfileV2);
constexpr unsigned kNoInstance = 0xFFFFFFFF;
const char* const kGpuUuid = "GPU-c08d91cb-e324-655c-71ba-7570956445bc";  // h100-80gb's GPU

json load_record(const std::string& name) {
    const char* dir = std::getenv("XPART_FIXTURES");
    std::ifstream in(std::string(dir ? dir : "") + "/nvml/" + name);
    return in ? json::parse(in) : json();
}

// The shipped H100 node, its GPU emptied (MIG on, no instance) or with MIG off.
json h100_spec(bool mig = true) {
    json j = testing::spec_json("h100-80gb");
    json& g = j["nvidia"]["gpus"][0];
    g.erase("instances");
    g["mig"] = mig ? "enabled" : "disabled";
    return j;
}

const GpuProductSpec& h100() { return *find_gpu_product("H100-SXM5-80GB"); }

// The driver's capability minors (nv-caps.c): per GPU minor 15 GIs x (1 + 8 CIs).
unsigned gi_minor(unsigned gi) { return 3 + 9 * gi; }

// A child that sleeps until killed: a live pid to hold instances with.
pid_t sleeper() {
    pid_t pid = ::fork();
    if (pid == 0) {
        for (;;) ::pause();
    }
    return pid;
}
void reap(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

class Reshape : public ::testing::Test {
protected:
    void open(const json& spec) {
        root_ = std::make_unique<testing::SimRoot>(spec);
        ASSERT_EQ(root_->error(), "");
        lib_ = ::dlopen(root_->nvml_library().c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(lib_, nullptr) << ::dlerror();
    }
    void TearDown() override {
        for (pid_t p : children_) reap(p);
    }
    template <class Fn>
    Fn sym(const char* name) {
        auto f = reinterpret_cast<Fn>(::dlsym(lib_, name));
        EXPECT_NE(f, nullptr) << name;
        return f;
    }
    int init() { return sym<int (*)()>("nvmlInit_v2")(); }
    int shutdown() { return sym<int (*)()>("nvmlShutdown")(); }
    Handle gpu() {
        Handle d = nullptr;
        EXPECT_EQ(sym<int (*)(unsigned, Handle*)>("nvmlDeviceGetHandleByIndex_v2")(0, &d), kOk);
        return d;
    }
    int create_gi(Handle d, unsigned id, unsigned start, unsigned size, Handle* gi) {
        const Placement p{start, size};
        return sym<int (*)(Handle, unsigned, const Placement*, Handle*)>(
            "nvmlDeviceCreateGpuInstanceWithPlacement")(d, id, &p, gi);
    }
    int create_gi(Handle d, const std::string& profile, unsigned start, Handle* gi) {
        const MigProfileSpec* p = h100().find_profile(profile);
        EXPECT_NE(p, nullptr) << profile;
        return p ? create_gi(d, p->id, start, p->memory_slices, gi) : -1;
    }
    int create_gi_anywhere(Handle d, const std::string& profile, Handle* gi) {
        return sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceCreateGpuInstance")(
            d, h100().find_profile(profile)->id, gi);
    }
    GiInfo gi_info(Handle gi) {
        GiInfo info{};
        EXPECT_EQ(sym<int (*)(Handle, GiInfo*)>("nvmlGpuInstanceGetInfo")(gi, &info), kOk);
        return info;
    }
    int create_ci(Handle gi, unsigned index, Handle* ci) {
        return sym<int (*)(Handle, unsigned, Handle*)>("nvmlGpuInstanceCreateComputeInstance")(
            gi, index, ci);
    }
    int destroy_gi(Handle gi) { return sym<int (*)(Handle)>("nvmlGpuInstanceDestroy")(gi); }
    int destroy_ci(Handle ci) { return sym<int (*)(Handle)>("nvmlComputeInstanceDestroy")(ci); }
    int ci_info(Handle ci, CiInfo* info) {
        return sym<int (*)(Handle, CiInfo*)>("nvmlComputeInstanceGetInfo_v2")(ci, info);
    }
    int gi_by_id(Handle d, unsigned id, Handle* gi) {
        return sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetGpuInstanceById")(d, id, gi);
    }
    int ci_profile(Handle gi, unsigned index, CiProfile* info) {
        return sym<int (*)(Handle, unsigned, unsigned, CiProfile*)>(
            "nvmlGpuInstanceGetComputeInstanceProfileInfo")(gi, index, 0, info);
    }
    int list_cis(Handle gi, unsigned index, Handle* out, unsigned* n) {
        return sym<int (*)(Handle, unsigned, Handle*, unsigned*)>(
            "nvmlGpuInstanceGetComputeInstances")(gi, index, out, n);
    }
    // Every compute instance of a GPU instance, all profiles (asking each profile's info
    // first, as the real driver needs).
    std::vector<Handle> cis_of(Handle gi) {
        std::vector<Handle> out;
        for (unsigned index = 0; index < 5; ++index) {
            CiProfile info{};
            Handle buf[8];
            unsigned n = 0;
            if (ci_profile(gi, index, &info) == kOk && list_cis(gi, index, buf, &n) == kOk)
                out.insert(out.end(), buf, buf + n);
        }
        return out;
    }
    Handle ci_by_id(Handle gi, unsigned id) {
        for (Handle ci : cis_of(gi)) {
            CiInfo info{};
            if (ci_info(ci, &info) == kOk && info.id == id) return ci;
        }
        return nullptr;
    }
    // Every GPU instance of the GPU, all profiles.
    std::vector<Handle> gis_of(Handle d) {
        std::vector<Handle> out;
        auto get = sym<int (*)(Handle, unsigned, Handle*, unsigned*)>("nvmlDeviceGetGpuInstances");
        for (const MigProfileSpec& p : h100().profiles) {
            Handle buf[8];
            unsigned n = 0;
            if (get(d, p.id, buf, &n) == kOk) out.insert(out.end(), buf, buf + n);
        }
        return out;
    }
    void destroy_all(Handle d) {
        for (Handle gi : gis_of(d)) {
            for (Handle ci : cis_of(gi)) EXPECT_EQ(destroy_ci(ci), kOk);
            EXPECT_EQ(destroy_gi(gi), kOk);
        }
    }
    int processes(Handle d, unsigned* count, ProcessInfo* infos) {
        return sym<int (*)(Handle, unsigned*, ProcessInfo*)>(
            "nvmlDeviceGetComputeRunningProcesses_v3")(d, count, infos);
    }
    std::string state_path() const {
        return root_->root() + kFakeNvmlDir + "/nvml-state.json";
    }
    json state() const { return json::parse(testing::read_text(state_path())); }
    // Holds a GPU (instance) as a running client would: a process entry in the state file.
    void hold(pid_t pid, const json& where) {
        json s = state();
        json p = where;
        p["pid"] = pid;
        p["gpu"] = kGpuUuid;
        s["processes"].push_back(p);
        testing::write_text(state_path(), s.dump());
    }
    pid_t child() {
        pid_t p = sleeper();
        children_.push_back(p);
        return p;
    }
    void release(pid_t pid) {
        reap(pid);
        children_.erase(std::find(children_.begin(), children_.end(), pid));
    }
    bool exists(const std::string& node_path) const {
        struct stat st{};
        return ::lstat(root_->host(node_path).c_str(), &st) == 0;
    }
    std::string cap_dir(unsigned gi) const {
        return "/proc/driver/nvidia/capabilities/gpu0/mig/gi" + std::to_string(gi);
    }

    std::unique_ptr<testing::SimRoot> root_;
    void* lib_ = nullptr;  // never closed: a test process may keep several fakes loaded
    std::vector<pid_t> children_;
};

// The record's trial log step by step, with the codes the real driver returned.
TEST_F(Reshape, ReplaysTheRecordedH100Trial) {
    const json rec = load_record("h100-80gb-hbm3-r580.json");
    ASSERT_TRUE(rec.is_object()) << "record missing: $XPART_FIXTURES/nvml/h100-80gb-hbm3-r580.json";
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    std::map<unsigned, Handle> gis;
    unsigned steps = 0;
    for (const json& step : rec.at("trial").at("log")) {
        SCOPED_TRACE(step.dump());
        ++steps;
        const json want = step.value("result", json::object());
        if (step.contains("create") || step.contains("create_overlapping") ||
            step.contains("create_eighth")) {
            const std::string name = step.value("create", step.value("create_overlapping",
                                                                     step.value("create_eighth", "")));
            Handle gi = nullptr;
            const int rc = step.contains("start")
                               ? create_gi(d, name, step.at("start").get<unsigned>(), &gi)
                               : create_gi_anywhere(d, name, &gi);
            if (want.contains("rc")) {
                EXPECT_EQ(rc, want.at("rc").get<int>());
                continue;
            }
            ASSERT_EQ(rc, kOk);
            const GiInfo info = gi_info(gi);
            EXPECT_EQ(info.id, want.at("gi").get<unsigned>());
            EXPECT_EQ(info.placement.start, want.at("placement").at(0).get<unsigned>());
            EXPECT_EQ(info.placement.size, want.at("placement").at(1).get<unsigned>());
            EXPECT_EQ(info.profile, h100().find_profile(name)->id);
            EXPECT_EQ(info.device, d);
            gis[info.id] = gi;
        } else if (step.contains("create_ci_in")) {
            const unsigned id = step.at("create_ci_in").get<unsigned>();
            Handle ci = nullptr;
            ASSERT_EQ(create_ci(gis.at(id), want.at("ci_profile_index").get<unsigned>(), &ci),
                      want.at("rc").get<int>());
        } else if (step.contains("destroy_gi") || step.contains("destroy_gi_with_ci")) {
            const unsigned id = step.value("destroy_gi", step.value("destroy_gi_with_ci", 0u));
            EXPECT_EQ(destroy_gi(gis.at(id)), step.at("rc").get<int>());
        } else if (step.contains("destroy_ci")) {
            Handle gi = gis.at(step.at("destroy_ci").at(0).get<unsigned>());
            Handle ci = ci_by_id(gi, step.at("destroy_ci").at(1).get<unsigned>());
            ASSERT_NE(ci, nullptr);
            EXPECT_EQ(destroy_ci(ci), step.at("rc").get<int>());
        } else {
            ADD_FAILURE() << "a trial step this test does not know";
        }
    }
    EXPECT_GT(steps, 30u);
    EXPECT_TRUE(gis_of(d).empty());
    EXPECT_EQ(shutdown(), kOk);
}

// The record's mixed shape (its MIG devices, NOT_FOUND beyond, its capability directories)
// and its holder: a process in the first MIG device makes both destroys fail as recorded and
// is listed; once it is gone, nothing is listed and the destroys succeed.
TEST_F(Reshape, RecordedMixedShapeAndHolder) {
    const json rec = load_record("h100-80gb-hbm3-r580.json");
    ASSERT_TRUE(rec.is_object()) << "record missing";
    const json& mixed = rec.at("trial").at("mixed");
    const json& holder = rec.at("trial").at("holder");
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    for (const json& g : mixed.at("gpu_instances")) {
        SCOPED_TRACE(g.dump());
        Handle gi = nullptr, ci = nullptr;
        ASSERT_EQ(create_gi(d, g.at("profile").get<unsigned>(), g.at("placement").at(0).get<unsigned>(),
                            g.at("placement").at(1).get<unsigned>(), &gi), kOk);
        EXPECT_EQ(gi_info(gi).id, g.at("gi").get<unsigned>());
        GiProfile p{};
        unsigned slices = 0;
        for (unsigned index : {0u, 1u, 2u, 3u, 4u})
            if (sym<int (*)(Handle, unsigned, GiProfile*)>("nvmlDeviceGetGpuInstanceProfileInfo")(
                    d, index, &p) == kOk && p.id == g.at("profile").get<unsigned>())
                slices = p.slices;
        ASSERT_GT(slices, 0u);
        ASSERT_EQ(create_ci(gi, slices == 7 ? 4 : slices - 1, &ci), kOk);  // the whole GI
    }
    auto mig = sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetMigDeviceHandleByIndex");
    auto gi_id = sym<int (*)(Handle, unsigned*)>("nvmlDeviceGetGpuInstanceId");
    auto ci_id = sym<int (*)(Handle, unsigned*)>("nvmlDeviceGetComputeInstanceId");
    for (const json& m : mixed.at("mig_devices")) {
        SCOPED_TRACE(m.dump());
        Handle h = nullptr;
        const int rc = mig(d, m.at("index").get<unsigned>(), &h);
        if (m.contains("error")) {
            EXPECT_EQ(rc, m.at("error").at("rc").get<int>());
            continue;
        }
        ASSERT_EQ(rc, kOk);
        unsigned g = 99, c = 99;
        EXPECT_EQ(gi_id(h, &g), kOk);
        EXPECT_EQ(ci_id(h, &c), kOk);
        EXPECT_EQ(g, m.at("gi").get<unsigned>());
        EXPECT_EQ(c, m.at("ci").get<unsigned>());
    }
    std::set<std::string> caps;
    for (const json& c : rec.at("trial").at("caps")) {
        caps.insert(c.get<std::string>());
        EXPECT_TRUE(exists("/proc/driver/nvidia/capabilities/gpu0/mig/" + c.get<std::string>() + "/access"));
    }
    EXPECT_EQ(caps.size(), mixed.at("gpu_instances").size());
    // The holder, in the first MIG device.
    Handle first = nullptr;
    ASSERT_EQ(mig(d, 0, &first), kOk);
    unsigned hg = 0, hc = 0;
    ASSERT_EQ(gi_id(first, &hg), kOk);
    ASSERT_EQ(ci_id(first, &hc), kOk);
    const pid_t pid = child();
    hold(pid, {{"gi", hg}, {"ci", hc}});
    ProcessInfo infos[4] = {};
    unsigned n = 4;
    ASSERT_EQ(processes(d, &n, infos), kOk);
    ASSERT_EQ(n, holder.at("processes").size());
    EXPECT_EQ(infos[0].gi, holder.at("processes").at(0).at("gi").get<unsigned>());
    EXPECT_EQ(infos[0].ci, holder.at("processes").at(0).at("ci").get<unsigned>());
    EXPECT_EQ(infos[0].pid, unsigned(pid));
    Handle gi = nullptr;
    ASSERT_EQ(gi_by_id(d, hg, &gi), kOk);
    Handle ci = ci_by_id(gi, hc);
    ASSERT_NE(ci, nullptr);
    EXPECT_EQ(destroy_ci(ci), holder.at("destroy_ci_rc").at("rc").get<int>());
    EXPECT_EQ(destroy_gi(gi), holder.at("destroy_gi_rc").at("rc").get<int>());
    release(pid);
    n = 4;
    ASSERT_EQ(processes(d, &n, infos), kOk);
    EXPECT_EQ(n, holder.at("processes_after").size());
    EXPECT_EQ(destroy_ci(ci), kOk);
    EXPECT_EQ(destroy_gi(gi), kOk);
    EXPECT_EQ(shutdown(), kOk);
}

// An empty H100 takes seven 1g.10gb, GI ids 7..13 by placement, and refuses an eighth.
TEST_F(Reshape, SevenOneSliceInstancesAndNoEighth) {
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    auto remaining = sym<int (*)(Handle, unsigned, unsigned*)>("nvmlDeviceGetGpuInstanceRemainingCapacity");
    unsigned left = 0;
    ASSERT_EQ(remaining(d, 19, &left), kOk);
    EXPECT_EQ(left, 7u);
    for (unsigned start = 0; start < 7; ++start) {
        Handle gi = nullptr;
        ASSERT_EQ(create_gi(d, "1g.10gb", start, &gi), kOk) << start;
        EXPECT_EQ(gi_info(gi).id, 7 + start);
        Handle ci = nullptr;
        EXPECT_EQ(create_ci(gi, 0, &ci), kOk);
    }
    ASSERT_EQ(remaining(d, 19, &left), kOk);
    EXPECT_EQ(left, 0u);
    Handle gi = nullptr;
    EXPECT_EQ(create_gi_anywhere(d, "1g.10gb", &gi), kNoResources);
    EXPECT_EQ(create_gi(d, "1g.10gb", 3, &gi), kNoResources);
    // Seven MIG devices, indices 0..6, each with its own uuid.
    auto mig = sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetMigDeviceHandleByIndex");
    auto uuid = sym<int (*)(Handle, char*, unsigned)>("nvmlDeviceGetUUID");
    std::set<std::string> uuids;
    for (unsigned i = 0; i < 7; ++i) {
        Handle m = nullptr;
        ASSERT_EQ(mig(d, i, &m), kOk) << i;
        char buf[96];
        ASSERT_EQ(uuid(m, buf, sizeof buf), kOk);
        uuids.insert(buf);
    }
    EXPECT_EQ(uuids.size(), 7u);
    EXPECT_EQ(shutdown(), kOk);
}

// Refusals as the driver's: INSUFFICIENT_RESOURCES for a placement the profile lacks, an
// overlap, or the profile's count reached; the fitting neighbours succeed.
TEST_F(Reshape, PlacementsThatDoNotFit) {
    struct Case {
        const char* what;
        std::vector<std::pair<const char*, unsigned>> before;
        const char* profile;
        unsigned start, size;  // size 0: the profile's own
        int rc;
    };
    const Case cases[] = {
        {"3g at a start of its own size only", {}, "3g.40gb", 2, 0, kNoResources},
        {"1g.20gb at an odd start", {}, "1g.20gb", 1, 0, kNoResources},
        {"a size not the profile's", {}, "2g.20gb", 0, 1, kNoResources},
        {"a 2g over a 4g", {{"4g.40gb", 0}}, "2g.20gb", 2, 0, kNoResources},
        {"a 1g.20gb over a 1g", {{"1g.10gb", 5}}, "1g.20gb", 4, 0, kNoResources},
        {"a 7g on a used GPU", {{"1g.10gb", 6}}, "7g.80gb", 0, 0, kNoResources},
        {"a second 1g+me", {{"1g.10gb+me", 0}}, "1g.10gb+me", 3, 0, kNoResources},
        {"a 1g beside the 1g+me", {{"1g.10gb+me", 0}}, "1g.10gb", 3, 0, kOk},
        {"a 3g beside a 3g", {{"3g.40gb", 0}}, "3g.40gb", 4, 0, kOk},
        {"a 2g beside a 3g", {{"3g.40gb", 0}}, "2g.20gb", 4, 0, kOk},
        {"a 4g beside a 3g", {{"3g.40gb", 4}}, "4g.40gb", 0, 0, kOk},
    };
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        for (const auto& [profile, start] : c.before) {
            Handle gi = nullptr;
            ASSERT_EQ(create_gi(d, profile, start, &gi), kOk);
        }
        const MigProfileSpec* p = h100().find_profile(c.profile);
        Handle gi = nullptr;
        EXPECT_EQ(create_gi(d, p->id, c.start, c.size ? c.size : p->memory_slices, &gi), c.rc);
        destroy_all(d);
    }
    Handle gi = nullptr;
    EXPECT_EQ(create_gi(d, 99, 0, 1, &gi), kInvalid);  // no such profile id
    EXPECT_EQ(create_gi(d, 19, 0, 1, nullptr), kInvalid);
    EXPECT_EQ(shutdown(), kOk);
}

// Every profile index the record's driver answered, with the same code and figures, which are
// also the product table's; placements: all of the profile's, free or not.
TEST_F(Reshape, ProfileInfoForEveryIndexAsRecorded) {
    const json rec = load_record("h100-80gb-hbm3-r580.json");
    ASSERT_TRUE(rec.is_object()) << "record missing";
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    Handle taken = nullptr;  // placements are listed whether free or not
    ASSERT_EQ(create_gi(d, "1g.10gb", 0, &taken), kOk);
    auto info_v1 = sym<int (*)(Handle, unsigned, GiProfile*)>("nvmlDeviceGetGpuInstanceProfileInfo");
    auto info_v2 = sym<int (*)(Handle, unsigned, GiProfileV2*)>("nvmlDeviceGetGpuInstanceProfileInfoV");
    auto placements = sym<int (*)(Handle, unsigned, Placement*, unsigned*)>(
        "nvmlDeviceGetGpuInstancePossiblePlacements_v2");
    unsigned listed = 0;
    for (const json& r : rec.at("gpu_instance_profiles")) {
        const unsigned index = r.at("index").get<unsigned>();
        SCOPED_TRACE("profile index " + std::to_string(index));
        GiProfile v1{};
        GiProfileV2 v2{};
        v2.version = kGiProfileV2;
        if (r.contains("error")) {
            EXPECT_EQ(info_v1(d, index, &v1), r.at("error").at("rc").get<int>());
            EXPECT_EQ(info_v2(d, index, &v2), r.at("error").at("rc").get<int>());
            continue;
        }
        ++listed;
        ASSERT_EQ(info_v1(d, index, &v1), kOk);
        ASSERT_EQ(info_v2(d, index, &v2), kOk);
        EXPECT_EQ(std::string(v2.name), r.at("name").get<std::string>());
        const MigProfileSpec* p = h100().find_profile(std::string(v2.name).substr(4));
        ASSERT_NE(p, nullptr);
        for (const auto& [got, want, table] :
             std::vector<std::tuple<unsigned long long, const char*, unsigned long long>>{
                 {v1.id, "id", p->id}, {v1.slices, "slices", p->slices},
                 {v1.count, "max_count", p->max_count}, {v1.sms, "sms", p->sms},
                 {v1.ce, "copy_engines", p->copy_engines}, {v1.dec, "decoders", p->decoders},
                 {v1.enc, "encoders", p->encoders}, {v1.jpeg, "jpegs", p->jpegs},
                 {v1.ofa, "ofas", p->ofas}, {v1.mib, "memory_mib", p->memory_mib},
                 {v1.p2p, "p2p", 0}}) {
            EXPECT_EQ(got, r.at(want).get<unsigned long long>()) << want;
            EXPECT_EQ(got, table) << want;
        }
        EXPECT_EQ(v2.id, v1.id);
        EXPECT_EQ(v2.mib, v1.mib);
        EXPECT_EQ(v2.ofa, v1.ofa);
        unsigned n = 0;
        ASSERT_EQ(placements(d, v1.id, nullptr, &n), kOk);
        ASSERT_EQ(n, r.at("placements").size());
        std::vector<Placement> got(n);
        unsigned small = n - 1;
        if (n > 1) {
            EXPECT_EQ(placements(d, v1.id, got.data(), &small), kInsufficientSize);
        }
        ASSERT_EQ(placements(d, v1.id, got.data(), &n), kOk);
        for (unsigned k = 0; k < n; ++k) {
            EXPECT_EQ(got[k].start, r.at("placements").at(k).at(0).get<unsigned>());
            EXPECT_EQ(got[k].size, r.at("placements").at(k).at(1).get<unsigned>());
        }
    }
    EXPECT_EQ(listed, 7u);
    GiProfileV2 v2{};
    v2.version = kGiProfileV2 + 1;
    EXPECT_EQ(info_v2(d, 0, &v2), kVersionMismatch);
    EXPECT_EQ(info_v1(d, 0, nullptr), kInvalid);
    EXPECT_EQ(shutdown(), kOk);
}

// Compute-instance profiles of a 3g.40gb as nvidia-smi -lcip showed them on the real H100
// (1c 16 SMs x3, 2c 32, 3g 60), and compute instances filling the GI.
TEST_F(Reshape, ComputeInstancesOfAThreeSliceInstance) {
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    Handle gi = nullptr;
    ASSERT_EQ(create_gi(d, "3g.40gb", 4, &gi), kOk);
    auto info_v1 = sym<int (*)(Handle, unsigned, unsigned, CiProfile*)>(
        "nvmlGpuInstanceGetComputeInstanceProfileInfo");
    auto info_v2 = sym<int (*)(Handle, unsigned, unsigned, CiProfileV2*)>(
        "nvmlGpuInstanceGetComputeInstanceProfileInfoV");
    struct Want {
        unsigned index;
        int rc;
        unsigned slices, count, sms;
        const char* name;
    };
    for (const Want& w : {Want{0, kOk, 1, 3, 16, "MIG 1c.3g.40gb"}, Want{1, kOk, 2, 1, 32, "MIG 2c.3g.40gb"},
                          Want{2, kOk, 3, 1, 60, "MIG 3g.40gb"}, Want{3, kNotSupported, 0, 0, 0, ""},
                          Want{4, kNotSupported, 0, 0, 0, ""}, Want{5, kNotSupported, 0, 0, 0, ""},
                          Want{8, kInvalid, 0, 0, 0, ""}}) {  // 8: as the real H100 answered
        SCOPED_TRACE("ci profile " + std::to_string(w.index));
        CiProfile v1{};
        CiProfileV2 v2{};
        v2.version = kCiProfileV2;
        ASSERT_EQ(info_v1(gi, w.index, 0, &v1), w.rc);
        ASSERT_EQ(info_v2(gi, w.index, 0, &v2), w.rc);
        if (w.rc) continue;
        EXPECT_EQ(v1.id, w.index);
        EXPECT_EQ(v1.slices, w.slices);
        EXPECT_EQ(v1.count, w.count);
        EXPECT_EQ(v1.sms, w.sms);
        EXPECT_EQ(v1.ce, 3u);
        EXPECT_EQ(v2.sms, w.sms);
        EXPECT_STREQ(v2.name, w.name);
    }
    CiProfile v1{};
    EXPECT_EQ(info_v1(gi, 0, 1, &v1), kInvalid);  // no such engine profile
    CiProfileV2 v2{};
    v2.version = 1;
    EXPECT_EQ(info_v2(gi, 0, 0, &v2), kVersionMismatch);
    // A new GI has no compute instance: no MIG device yet.
    auto mig = sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetMigDeviceHandleByIndex");
    Handle m = nullptr;
    EXPECT_EQ(mig(d, 0, &m), kNotFound);
    Handle ci[3] = {};
    for (unsigned k = 0; k < 3; ++k) ASSERT_EQ(create_ci(gi, 0, &ci[k]), kOk) << k;
    Handle more = nullptr;
    EXPECT_EQ(create_ci(gi, 0, &more), kNoResources);
    EXPECT_EQ(create_ci(gi, 3, &more), kNotSupported);
    for (unsigned k = 0; k < 3; ++k) {
        CiInfo info{};
        ASSERT_EQ(ci_info(ci[k], &info), kOk);
        EXPECT_EQ(info.id, k);
        EXPECT_EQ(info.profile, 0u);
        EXPECT_EQ(info.placement.start, k);
        EXPECT_EQ(info.gpu_instance, gi);
        EXPECT_EQ(info.device, d);
    }
    // Every CI gets a uuid never given before on this node, also after destroy and create.
    const std::regex form("MIG-[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
    auto uuid = sym<int (*)(Handle, char*, unsigned)>("nvmlDeviceGetUUID");
    std::set<std::string> seen;
    auto collect = [&] {
        for (unsigned i = 0; i < 3; ++i) {
            ASSERT_EQ(mig(d, i, &m), kOk) << i;
            char buf[96];
            ASSERT_EQ(uuid(m, buf, sizeof buf), kOk);
            EXPECT_TRUE(std::regex_match(buf, form)) << buf;
            seen.insert(buf);
        }
    };
    collect();
    EXPECT_EQ(destroy_ci(ci[1]), kOk);
    EXPECT_EQ(ci_info(ci[1], nullptr), kInvalid);
    CiInfo gone{};
    EXPECT_EQ(ci_info(ci[1], &gone), kInvalid);  // a destroyed instance's handle
    ASSERT_EQ(create_ci(gi, 0, &ci[1]), kOk);
    collect();
    EXPECT_EQ(seen.size(), 4u);
    EXPECT_EQ(destroy_gi(gi), kInUse);  // it has compute instances
    EXPECT_EQ(shutdown(), kOk);
}

// What one process reshapes the next one sees (state file beside the spec), and the simulated
// root's capability files and nodes follow the instances.
TEST_F(Reshape, AnotherProcessSeesTheShapeAndTheCapabilityFiles) {
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    EXPECT_FALSE(exists(cap_dir(1) + "/access"));
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the reshaping process: no gtest assertions here, only its exit code
        Handle a = nullptr, b = nullptr, c = nullptr;
        const bool ok = create_gi(d, "3g.40gb", 0, &a) == kOk && create_ci(a, 2, &c) == kOk &&
                        create_gi(d, "1g.10gb", 6, &b) == kOk && create_ci(b, 0, &c) == kOk;
        ::_exit(ok ? 0 : 1);
    }
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const json st = state();
    EXPECT_EQ(st.at("format"), "xpart-sim-nvml-state");
    EXPECT_EQ(st.at("version"), 1);
    ASSERT_EQ(st.at("gpus").size(), 1u);
    EXPECT_EQ(st.at("gpus").at(0).at("uuid"), kGpuUuid);
    EXPECT_EQ(st.at("gpus").at(0).at("mig"), "enabled");
    ASSERT_EQ(st.at("gpus").at(0).at("instances").size(), 2u);
    ASSERT_EQ(shutdown(), kOk);
    ASSERT_EQ(init(), kOk);
    d = gpu();
    Handle g1 = nullptr, g13 = nullptr;
    ASSERT_EQ(gi_by_id(d, 1, &g1), kOk);
    ASSERT_EQ(gi_by_id(d, 13, &g13), kOk);
    Handle none = nullptr;
    EXPECT_EQ(gi_by_id(d, 5, &none), kNotFound);
    auto mig = sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetMigDeviceHandleByIndex");
    auto uuid = sym<int (*)(Handle, char*, unsigned)>("nvmlDeviceGetUUID");
    Handle m = nullptr;
    ASSERT_EQ(mig(d, 0, &m), kOk);
    char buf[96];
    ASSERT_EQ(uuid(m, buf, sizeof buf), kOk);
    for (const json& gi : st.at("gpus").at(0).at("instances"))
        if (gi.at("profile") == "3g.40gb") {
            EXPECT_EQ(gi.at("compute_instances").at(0).at("uuid"), buf);
        }
    EXPECT_EQ(mig(d, 1, &m), kOk);
    EXPECT_EQ(mig(d, 2, &m), kNotFound);
    // As on the real H100: a process that did not create the CI lists it only once it has
    // asked for the CI profile's info; before, NOT_SUPPORTED and the count untouched.
    Handle listed[8] = {};
    unsigned count = 8;
    EXPECT_EQ(list_cis(g13, 0, listed, &count), kNotSupported);
    EXPECT_EQ(count, 8u);
    CiProfile profile{};
    ASSERT_EQ(ci_profile(g13, 0, &profile), kOk);
    ASSERT_EQ(list_cis(g13, 0, listed, &count), kOk);
    EXPECT_EQ(count, 1u);
    // Capability files and nodes for GIs 1 and 13 and their CI 0, as the tree builder writes.
    for (const auto& [path, minor] : std::vector<std::pair<std::string, unsigned>>{
             {cap_dir(1) + "/access", gi_minor(1)}, {cap_dir(1) + "/ci0/access", gi_minor(1) + 1},
             {cap_dir(13) + "/access", gi_minor(13)},
             {cap_dir(13) + "/ci0/access", gi_minor(13) + 1}}) {
        SCOPED_TRACE(path);
        EXPECT_EQ(testing::read_text(root_->host(path)),
                  "DeviceFileMinor: " + std::to_string(minor) +
                      "\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
        struct stat sb{};
        ASSERT_EQ(::stat(root_->host("/dev/nvidia-caps/nvidia-cap" + std::to_string(minor)).c_str(), &sb), 0);
        EXPECT_TRUE(S_ISCHR(sb.st_mode));
        EXPECT_EQ(sb.st_mode & 07777, 0444u);
        EXPECT_EQ(::minor(sb.st_rdev), minor);
    }
    // Destroying removes them again; the other GI's stay.
    for (Handle ci : cis_of(g13)) EXPECT_EQ(destroy_ci(ci), kOk);
    EXPECT_FALSE(exists(cap_dir(13) + "/ci0/access"));
    EXPECT_FALSE(exists("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor(13) + 1)));
    EXPECT_TRUE(exists(cap_dir(13) + "/access"));
    EXPECT_EQ(destroy_gi(g13), kOk);
    EXPECT_FALSE(exists(cap_dir(13)));
    EXPECT_FALSE(exists("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor(13))));
    EXPECT_TRUE(exists(cap_dir(1) + "/ci0/access"));
    EXPECT_TRUE(exists("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor(1))));
    EXPECT_EQ(state().at("gpus").at(0).at("instances").size(), 1u);
    EXPECT_EQ(shutdown(), kOk);
}

// Without CAP_MKNOD (not root) the capability files are still written and the nodes left out.
TEST_F(Reshape, WithoutMknodTheCapabilityNodesAreLeftOut) {
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // drops CAP_MKNOD from its effective set, then reshapes
        __user_cap_header_struct head{_LINUX_CAPABILITY_VERSION_3, 0};
        __user_cap_data_struct caps[2] = {};
        if (::syscall(SYS_capget, &head, caps) != 0) ::_exit(2);
        caps[0].effective &= ~(1u << CAP_MKNOD);
        if (::syscall(SYS_capset, &head, caps) != 0) ::_exit(2);
        const std::string probe = root_->host("/mknod-probe");
        if (::mknod(probe.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0 || errno != EPERM) ::_exit(3);
        Handle gi = nullptr, ci = nullptr;
        ::_exit(create_gi(d, "1g.10gb", 0, &gi) == kOk && create_ci(gi, 0, &ci) == kOk ? 0 : 1);
    }
    int status = -1;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "2: capset failed, 3: mknod still permitted, 1: reshape failed";
    EXPECT_TRUE(exists(cap_dir(7) + "/access"));
    EXPECT_TRUE(exists(cap_dir(7) + "/ci0/access"));
    EXPECT_FALSE(exists("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor(7))));
    EXPECT_FALSE(exists("/dev/nvidia-caps/nvidia-cap" + std::to_string(gi_minor(7) + 1)));
    EXPECT_TRUE(exists("/dev/nvidia-caps/nvidia-cap1"));  // the tree's own nodes stay
    EXPECT_EQ(shutdown(), kOk);
}

// A process running in a compute instance (held through the state file) makes both destroys
// and disabling MIG IN_USE and is listed, until it exits.
TEST_F(Reshape, HeldInstancesAreInUseUntilTheProcessExits) {
    open(h100_spec());
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    Handle gi = nullptr, ci = nullptr;
    ASSERT_EQ(create_gi(d, "2g.20gb", 2, &gi), kOk);
    ASSERT_EQ(create_ci(gi, 1, &ci), kOk);
    const unsigned gi_id = gi_info(gi).id;
    EXPECT_EQ(gi_id, 4u);
    unsigned n = 5;
    EXPECT_EQ(processes(d, &n, nullptr), kOk);
    EXPECT_EQ(n, 0u);
    const pid_t pid = child();
    hold(pid, {{"gi", gi_id}, {"ci", 0}});
    n = 0;
    EXPECT_EQ(processes(d, &n, nullptr), kInsufficientSize);
    EXPECT_EQ(n, 1u);
    ProcessInfo infos[2] = {};
    n = 2;
    ASSERT_EQ(processes(d, &n, infos), kOk);
    ASSERT_EQ(n, 1u);
    EXPECT_EQ(infos[0].pid, unsigned(pid));
    EXPECT_EQ(infos[0].gi, gi_id);
    EXPECT_EQ(infos[0].ci, 0u);
    EXPECT_GT(infos[0].used, 0u);
    // The MIG device lists it too.
    Handle m = nullptr;
    ASSERT_EQ(sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceGetMigDeviceHandleByIndex")(d, 0, &m), kOk);
    n = 2;
    ASSERT_EQ(processes(m, &n, infos), kOk);
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(destroy_ci(ci), kInUse);
    EXPECT_EQ(destroy_gi(gi), kInUse);
    auto set_mig = sym<int (*)(Handle, unsigned, int*)>("nvmlDeviceSetMigMode");
    int activation = -1;
    EXPECT_EQ(set_mig(d, 0, &activation), kInUse);
    release(pid);  // killed and reaped: its entry no longer counts
    n = 2;
    ASSERT_EQ(processes(d, &n, infos), kOk);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(destroy_ci(ci), kOk);
    EXPECT_EQ(destroy_gi(gi), kOk);
    EXPECT_EQ(set_mig(d, 0, &activation), kOk);
    EXPECT_EQ(activation, kOk);
    // With MIG off a held process has no instance ids.
    hold(::getpid(), json::object());
    n = 2;
    ASSERT_EQ(processes(d, &n, infos), kOk);
    ASSERT_EQ(n, 1u);
    EXPECT_EQ(infos[0].gi, kNoInstance);
    EXPECT_EQ(infos[0].ci, kNoInstance);
    EXPECT_EQ(set_mig(d, 0, &activation), kInUse);
    EXPECT_EQ(shutdown(), kOk);
}

// MIG switches at once (activation SUCCESS) like on the real H100, and persists.
TEST_F(Reshape, MigModeSwitchesAtOnceAndPersists) {
    open(h100_spec(false));
    ASSERT_EQ(init(), kOk);
    Handle d = gpu();
    auto mode = sym<int (*)(Handle, unsigned*, unsigned*)>("nvmlDeviceGetMigMode");
    auto set_mig = sym<int (*)(Handle, unsigned, int*)>("nvmlDeviceSetMigMode");
    GiProfile info{};
    EXPECT_EQ(sym<int (*)(Handle, unsigned, GiProfile*)>("nvmlDeviceGetGpuInstanceProfileInfo")(d, 0, &info),
              kNotSupported);
    Handle gi = nullptr;
    EXPECT_EQ(create_gi(d, "1g.10gb", 0, &gi), kNotSupported);
    int activation = -1;
    EXPECT_EQ(set_mig(d, 2, &activation), kInvalid);
    EXPECT_EQ(set_mig(d, 1, nullptr), kInvalid);
    ASSERT_EQ(set_mig(d, 1, &activation), kOk);
    EXPECT_EQ(activation, kOk);
    unsigned cur = 9, pend = 9;
    ASSERT_EQ(mode(d, &cur, &pend), kOk);
    EXPECT_EQ(cur, 1u);
    EXPECT_EQ(pend, 1u);
    EXPECT_EQ(create_gi(d, "1g.10gb", 0, &gi), kOk);
    ASSERT_EQ(shutdown(), kOk);
    ASSERT_EQ(init(), kOk);
    d = gpu();
    ASSERT_EQ(mode(d, &cur, &pend), kOk);
    EXPECT_EQ(cur, 1u);
    EXPECT_EQ(gis_of(d).size(), 1u);
    EXPECT_EQ(shutdown(), kOk);
}

// The common checks: UNINITIALIZED before init, INVALID_ARGUMENT for null and unknown handles,
// and the new codes' strings.
TEST_F(Reshape, HandlesAreCheckedAndCodesNamed) {
    open(h100_spec());
    int bogus = 0;
    Handle bad = &bogus;
    Handle out = nullptr;
    unsigned n = 0;
    const std::vector<std::pair<const char*, std::function<int(Handle)>>> calls = {
        {"nvmlDeviceCreateGpuInstance",
         [&](Handle h) { return sym<int (*)(Handle, unsigned, Handle*)>("nvmlDeviceCreateGpuInstance")(h, 19, &out); }},
        {"nvmlDeviceGetGpuInstanceRemainingCapacity",
         [&](Handle h) { return sym<int (*)(Handle, unsigned, unsigned*)>("nvmlDeviceGetGpuInstanceRemainingCapacity")(h, 19, &n); }},
        {"nvmlDeviceGetGpuInstances",
         [&](Handle h) { return sym<int (*)(Handle, unsigned, Handle*, unsigned*)>("nvmlDeviceGetGpuInstances")(h, 19, &out, &n); }},
        {"nvmlGpuInstanceDestroy", [&](Handle h) { return destroy_gi(h); }},
        {"nvmlGpuInstanceGetInfo",
         [&](Handle h) { GiInfo i{}; return sym<int (*)(Handle, GiInfo*)>("nvmlGpuInstanceGetInfo")(h, &i); }},
        {"nvmlGpuInstanceCreateComputeInstance", [&](Handle h) { return create_ci(h, 0, &out); }},
        {"nvmlComputeInstanceDestroy", [&](Handle h) { return destroy_ci(h); }},
        {"nvmlComputeInstanceGetInfo_v2", [&](Handle h) { CiInfo i{}; return ci_info(h, &i); }},
        {"nvmlDeviceGetComputeRunningProcesses_v3", [&](Handle h) { return processes(h, &n, nullptr); }},
        {"nvmlDeviceSetMigMode", [&](Handle h) { int a = 0; return sym<int (*)(Handle, unsigned, int*)>("nvmlDeviceSetMigMode")(h, 1, &a); }},
    };
    for (const auto& [name, fn] : calls) EXPECT_EQ(fn(bad), kUninitialized) << name;
    ASSERT_EQ(init(), kOk);
    for (const auto& [name, fn] : calls) {
        EXPECT_EQ(fn(nullptr), kInvalid) << name;
        EXPECT_EQ(fn(bad), kInvalid) << name;
    }
    // A GPU handle is no GPU-instance handle, and a destroyed GI's handle is dead.
    Handle d = gpu();
    EXPECT_EQ(destroy_gi(d), kInvalid);
    Handle gi = nullptr;
    ASSERT_EQ(create_gi(d, "1g.10gb", 0, &gi), kOk);
    EXPECT_EQ(destroy_ci(gi), kInvalid);
    ASSERT_EQ(destroy_gi(gi), kOk);
    EXPECT_EQ(destroy_gi(gi), kInvalid);
    auto text = sym<const char* (*)(int)>("nvmlErrorString");
    EXPECT_STREQ(text(kInUse), "In use by another client");
    EXPECT_STREQ(text(kNoResources), "Insufficient Resources");
    EXPECT_STREQ(text(kVersionMismatch), "Argument version mismatch");
    EXPECT_EQ(shutdown(), kOk);
}

}  // namespace
}  // namespace xpart::sim
