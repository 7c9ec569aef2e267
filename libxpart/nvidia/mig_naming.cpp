#include "libxpart/nvidia/mig_naming.hpp"

#include <algorithm>
#include <optional>

#include "libxpart/text.hpp"

namespace xpart {

std::string mig_profile_name(const MigShape& shape, std::uint64_t parent_memory_mb) {
    if (parent_memory_mb == 0) parent_memory_mb = 1;
    const std::uint64_t parent_gb = (parent_memory_mb + 1023) / 1024;
    // Nearest eighth of the parent (integer rounding of gi*8/parent), at least one.
    std::uint64_t eighths = (shape.gi_memory_mb * 16 + parent_memory_mb) / (2 * parent_memory_mb);
    eighths = std::max<std::uint64_t>(1, eighths);
    // Round half up: (eighths * parent_gb) / 8.
    const std::uint64_t gb = (eighths * parent_gb * 2 + 8) / 16;
    std::string name = std::to_string(shape.gi_slices) + "g." + std::to_string(gb) + "gb";
    if (shape.shared_ofa > 0 && eighths < 8) name += "+me";
    if (shape.ci_slices > 0 && shape.ci_slices < shape.gi_slices)
        name = std::to_string(shape.ci_slices) + "c." + name;
    return name;
}

namespace {

struct ParsedType {
    unsigned ci = 0;  // 0: no "Nc." prefix
    unsigned gi = 0;
    std::uint64_t gb = 0;
    std::string suffix;  // "", "+me", ...
};

std::optional<unsigned> leading_count(const std::string& part, char unit) {
    if (part.size() < 2 || part.back() != unit) return std::nullopt;
    auto n = parse_u64(std::string_view(part).substr(0, part.size() - 1));
    if (!n || *n == 0 || *n > 64) return std::nullopt;
    return static_cast<unsigned>(*n);
}

std::optional<ParsedType> parse_type(const std::string& name) {
    std::vector<std::string> parts = split(to_lower(name), '.');
    ParsedType t;
    std::size_t i = 0;
    if (parts.size() == 3) {
        auto ci = leading_count(parts[0], 'c');
        if (!ci) return std::nullopt;
        t.ci = *ci;
        i = 1;
    } else if (parts.size() != 2) {
        return std::nullopt;
    }
    auto gi = leading_count(parts[i], 'g');
    if (!gi) return std::nullopt;
    t.gi = *gi;
    const std::string& mem = parts[i + 1];
    std::size_t gbpos = mem.find("gb");
    if (gbpos == std::string::npos || gbpos == 0) return std::nullopt;
    auto gb = parse_u64(std::string_view(mem).substr(0, gbpos));
    if (!gb || *gb == 0) return std::nullopt;
    t.gb = *gb;
    t.suffix = mem.substr(gbpos + 2);
    if (!t.suffix.empty() && t.suffix[0] != '+' && t.suffix[0] != '-') return std::nullopt;
    return t;
}

}  // namespace

bool mig_types_match(const std::string& configured, const std::string& discovered) {
    auto a = parse_type(configured);
    auto b = parse_type(discovered);
    if (!a || !b) return false;
    if (a->ci != b->ci || a->gi != b->gi || a->suffix != b->suffix) return false;
    const std::uint64_t hi = std::max(a->gb, b->gb), lo = std::min(a->gb, b->gb);
    // Tolerance max(1 GB, 5% of the larger): 3g.39gb ~ 3g.40gb, 7g.141gb ~ 7g.140gb.
    const std::uint64_t tolerance = std::max<std::uint64_t>(1, hi * 5 / 100);
    return hi - lo <= tolerance;
}

std::string full_gpu_type_name(const std::string& model) {
    std::string name = to_lower(trim(model));
    if (name.rfind("nvidia ", 0) == 0) name.erase(0, 7);
    std::replace(name.begin(), name.end(), ' ', '-');
    return name;
}

}  // namespace xpart
