#include "libxpart/slurm_text/gpu_bind_list.hpp"

#include <cstdint>
#include <cstdlib>

#include "libxpart/text.hpp"

namespace xpart {
namespace {

// C's (int) conversion of a long, as Slurm assigns strtol/atoi results to an int.
std::int32_t as_int(long v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

struct Entry {
    std::int32_t value;
    std::int64_t repeat;
};

}  // namespace

Result<std::vector<bool>> gpu_bind_list_pick(const std::string& list, unsigned local_id,
                                             std::size_t size, bool is_map) {
    std::vector<Entry> entries;
    std::int64_t period = 0;
    for (const auto& tok : split(list, ',')) {
        if (tok.empty()) continue;  // strtok_r skips empty fields
        std::int64_t repeat = 1;
        if (auto star = tok.find('*'); star != std::string::npos) {
            repeat = as_int(std::strtol(tok.c_str() + star + 1, nullptr, 10));  // atoi
            if (repeat == 0) repeat = 1;  // Slurm logs an error and uses 1
            if (repeat < 0)
                return Error{"--gpu-bind list \"" + list + "\": negative repetition count"};
        }
        entries.push_back({as_int(std::strtol(tok.c_str(), nullptr, 0)), repeat});
        period += repeat;
    }
    if (entries.empty()) return Error{"--gpu-bind list \"" + list + "\" has no entry"};

    std::int64_t pos = static_cast<std::int64_t>(local_id) % period;
    const Entry* entry = &entries.front();
    for (const auto& e : entries) {
        entry = &e;
        if (pos < e.repeat) break;
        pos -= e.repeat;
    }

    std::vector<bool> bits(size, false);
    const auto n = static_cast<std::int32_t>(size);
    // The mask bound: ~(-1 << size) on a 32-bit int, the shift count taken modulo 32.
    const std::int32_t max = is_map ? n - 1
                                    : static_cast<std::int32_t>(~(0xffffffffu << (size & 31)));
    const std::int32_t min = is_map ? 0 : 1;
    if (entry->value < min || entry->value > max) return bits;
    if (is_map) {
        bits[static_cast<std::size_t>(entry->value)] = true;
    } else {
        const auto value = static_cast<std::uint32_t>(entry->value);
        for (std::size_t i = 0; i < size; ++i) bits[i] = (value >> (i & 31)) & 1u;
    }
    return bits;
}

}  // namespace xpart
