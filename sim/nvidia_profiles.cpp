// Memory sizes are what NVML reports as memorySizeMB for each GPU instance (the guide's
// -lgip GiB figures x 1024 where printed; for H100/H200 chosen consistently with the names
// the driver shows). Placements are the -lgipp ones of the A100; H100/H200 share the shapes.
// The H100 rows are checked against a real H100's NVML (tests/sim/recorded_mig_test).
#include "sim/nvidia_profiles.hpp"

namespace xpart::sim {

namespace {

// One product's seven shapes: 1g, 1g+me, 1g double memory, 2g, 3g, 4g, 7g.
struct ShapeSizes {
    const char* names[7];
    std::uint64_t mib[7];  // 1g, 1g double, 2g, 3g, 4g, 7g memory (index 1 unused: = 1g)
    unsigned sms[7];
    unsigned dec[7];
    unsigned jpeg[7];
    unsigned full_copy_engines;  // 7g: A100 7; H100 and H200 8 (an H100's -lgip, r580)
};

std::vector<MigProfileSpec> seven_shapes(const ShapeSizes& s) {
    // name, id, slices, memory slices, starts, max count, gi base
    struct Geometry {
        unsigned id, slices, memory_slices;
        std::vector<unsigned> starts;
        unsigned max_count, copy_engines, ofas, gi_base;
    };
    const Geometry geo[7] = {
        {19, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 7, 1, 0, 7},
        {20, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 1, 1, 1, 7},
        {15, 1, 2, {0, 2, 4, 6}, 4, 1, 0, 3},
        {14, 2, 2, {0, 2, 4}, 3, 2, 0, 3},
        {9, 3, 4, {0, 4}, 2, 3, 0, 1},
        {5, 4, 4, {0}, 1, 4, 0, 1},
        {0, 7, 8, {0}, 1, 7, 1, 0},
    };
    std::vector<MigProfileSpec> out;
    for (int i = 0; i < 7; ++i) {
        MigProfileSpec p;
        p.name = s.names[i];
        p.id = geo[i].id;
        p.slices = geo[i].slices;
        p.memory_slices = geo[i].memory_slices;
        p.starts = geo[i].starts;
        p.max_count = geo[i].max_count;
        p.memory_mib = s.mib[i];
        p.sms = s.sms[i];
        p.copy_engines = geo[i].slices == 7 ? s.full_copy_engines : geo[i].copy_engines;
        p.decoders = s.dec[i];
        p.jpegs = s.jpeg[i];
        p.ofas = geo[i].ofas;
        p.gi_base = geo[i].gi_base;
        out.push_back(p);
    }
    return out;
}

std::vector<GpuProductSpec> make_products() {
    std::vector<GpuProductSpec> v;
    v.push_back({"A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40960, 108, 0x20B010DE, true, 7,
                 seven_shapes({{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb",
                                "7g.40gb"},
                               {4864, 4864, 9856, 9856, 19968, 19968, 40192},
                               {14, 14, 14, 28, 42, 56, 98},
                               {0, 1, 1, 1, 2, 2, 5},
                               {0, 1, 0, 0, 0, 0, 1},
                               7})});
    v.push_back({"A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 81920, 108, 0x20B210DE, true, 7,
                 seven_shapes({{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb",
                                "4g.40gb", "7g.80gb"},
                               {9728, 9728, 19968, 19968, 40192, 40192, 81152},
                               {14, 14, 14, 28, 42, 56, 98},
                               {0, 1, 1, 1, 2, 2, 5},
                               {0, 1, 0, 0, 0, 0, 1},
                               7})});
    v.push_back({"H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", 81559, 132, 0x233010DE, true, 7,
                 seven_shapes({{"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb",
                                "4g.40gb", "7g.80gb"},
                               {9984, 9984, 20096, 20096, 40448, 40448, 81152},
                               {16, 16, 26, 32, 60, 64, 132},
                               {1, 1, 1, 2, 3, 4, 7},
                               {1, 1, 1, 2, 3, 4, 7},
                               8})});
    v.push_back({"H200-SXM-141GB", "NVIDIA H200", 143771, 132, 0x233510DE, true, 7,
                 seven_shapes({{"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb",
                                "4g.71gb", "7g.141gb"},
                               {17152, 17152, 34560, 34560, 70144, 70144, 140544},
                               {16, 16, 26, 32, 60, 64, 132},
                               {1, 1, 1, 2, 3, 4, 7},
                               {1, 1, 1, 2, 3, 4, 7},
                               8})});
    // Not MIG-capable: nvmlDeviceGetMigMode answers NOT_SUPPORTED.
    v.push_back({"V100-SXM2-32GB", "Tesla V100-SXM2-32GB", 32768, 80, 0x1DB510DE, false, 0, {}});
    return v;
}

}  // namespace

const MigProfileSpec* GpuProductSpec::find_profile(const std::string& n) const {
    for (const auto& p : profiles)
        if (p.name == n) return &p;
    return nullptr;
}

const std::vector<GpuProductSpec>& gpu_products() {
    static const std::vector<GpuProductSpec> products = make_products();
    return products;
}

const GpuProductSpec* find_gpu_product(const std::string& key) {
    for (const auto& p : gpu_products())
        if (p.key == key) return &p;
    return nullptr;
}

}  // namespace xpart::sim
