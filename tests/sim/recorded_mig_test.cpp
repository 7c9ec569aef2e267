// The simulator's MIG tables against what a real GPU's NVML said (tests/fixtures/real/nvml,
// recorded with scripts/record-mig): every GPU-instance profile the driver lists, with its id,
// size, engines, memory and placements, and the GI ids the driver gave by placement. A record
// is test data: a missing one fails, it is never skipped.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sim/nvidia_profiles.hpp"

namespace xpart::sim {
namespace {

using nlohmann::json;

json load_record(const std::string& name) {
    const char* dir = std::getenv("XPART_FIXTURES");
    const std::string path = std::string(dir ? dir : "") + "/nvml/" + name;
    std::ifstream in(path);
    if (!in) return json();
    return json::parse(in);
}

struct RecordCase {
    const char* record;
    const char* product;
};

class RecordedMig : public ::testing::TestWithParam<RecordCase> {};

TEST_P(RecordedMig, EveryDriverProfileIsSimulatedAlike) {
    const json rec = load_record(GetParam().record);
    ASSERT_TRUE(rec.is_object()) << "record missing: $XPART_FIXTURES/nvml/" << GetParam().record
                                 << " (run through make check)";
    const GpuProductSpec* product = find_gpu_product(GetParam().product);
    ASSERT_NE(product, nullptr);
    EXPECT_EQ(product->name, rec.at("name").get<std::string>());
    unsigned listed = 0;
    for (const json& p : rec.at("gpu_instance_profiles")) {
        if (!p.contains("id")) continue;
        ++listed;
        std::string name = p.at("name").get<std::string>().substr(4);  // "MIG 1g.10gb"
        const MigProfileSpec* s = product->find_profile(name);
        ASSERT_NE(s, nullptr) << name;
        SCOPED_TRACE(name);
        EXPECT_EQ(s->id, p.at("id").get<unsigned>());
        EXPECT_EQ(s->slices, p.at("slices").get<unsigned>());
        EXPECT_EQ(s->max_count, p.at("max_count").get<unsigned>());
        EXPECT_EQ(s->sms, p.at("sms").get<unsigned>());
        EXPECT_EQ(s->memory_mib, p.at("memory_mib").get<std::uint64_t>());
        EXPECT_EQ(s->copy_engines, p.at("copy_engines").get<unsigned>());
        EXPECT_EQ(s->decoders, p.at("decoders").get<unsigned>());
        EXPECT_EQ(s->encoders, p.at("encoders").get<unsigned>());
        EXPECT_EQ(s->jpegs, p.at("jpegs").get<unsigned>());
        EXPECT_EQ(s->ofas, p.at("ofas").get<unsigned>());
        std::vector<unsigned> starts;
        for (const json& pl : p.at("placements")) {
            starts.push_back(pl.at(0).get<unsigned>());
            EXPECT_EQ(s->memory_slices, pl.at(1).get<unsigned>());
        }
        EXPECT_EQ(s->starts, starts);
    }
    EXPECT_EQ(listed, product->profiles.size()) << "the simulator knows profiles the driver lacks";
}

// The driver names a GPU instance by its profile's pool and placement, not by creation order.
TEST_P(RecordedMig, GpuInstanceIdsFollowPlacement) {
    const json rec = load_record(GetParam().record);
    ASSERT_TRUE(rec.is_object());
    const GpuProductSpec* product = find_gpu_product(GetParam().product);
    unsigned seen = 0;
    for (const char* step : {"mixed", "seven"})
        for (const json& gi : rec.at("trial").at(step).at("gpu_instances")) {
            const unsigned id = gi.at("profile").get<unsigned>();
            const MigProfileSpec* s = nullptr;
            for (const auto& p : product->profiles)
                if (p.id == id) s = &p;
            ASSERT_NE(s, nullptr) << id;
            const unsigned start = gi.at("placement").at(0).get<unsigned>();
            EXPECT_EQ(s->gi_base + start / s->memory_slices, gi.at("gi").get<unsigned>())
                << s->name << " at " << start;
            ++seen;
        }
    EXPECT_GE(seen, 5u);
}

INSTANTIATE_TEST_SUITE_P(Real, RecordedMig,
                         ::testing::Values(RecordCase{"h100-80gb-hbm3-r580.json",
                                                      "H100-SXM5-80GB"}),
                         [](const auto& info) {
                             std::string n = info.param.product;
                             for (char& c : n)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return n;
                         });

}  // namespace
}  // namespace xpart::sim
