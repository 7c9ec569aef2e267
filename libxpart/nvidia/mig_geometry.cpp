#include "libxpart/nvidia/mig_geometry.hpp"

#include <algorithm>
#include <map>

#include "libxpart/text.hpp"

namespace xpart {

namespace {

constexpr unsigned kMaxComputeSlices = 7;

const nvml::GiProfile* find(const std::vector<nvml::GiProfile>& profiles, const std::string& name) {
    for (const auto& p : profiles)
        if (p.name == name) return &p;
    return nullptr;
}

unsigned memory_size(const nvml::GiProfile& p) {
    return p.placements.empty() ? 0 : p.placements.front().size;
}

// Larger instances first: fewer placements, so a search that places them first backtracks less.
bool larger(const nvml::GiProfile* a, const nvml::GiProfile* b) {
    if (memory_size(*a) != memory_size(*b)) return memory_size(*a) > memory_size(*b);
    if (a->slices != b->slices) return a->slices > b->slices;
    return a->name < b->name;
}

bool place(const std::vector<const nvml::GiProfile*>& order, std::size_t i, unsigned used_mask,
           std::vector<MigSlot>& out) {
    if (i == order.size()) return true;
    const nvml::GiProfile& p = *order[i];
    for (const auto& pl : p.placements) {
        const unsigned mask = ((1u << pl.size) - 1u) << pl.start;
        if (used_mask & mask) continue;
        // Same profile twice: keep the starts ascending, so one set is tried once.
        if (i > 0 && order[i - 1] == &p && pl.start < out.back().start) continue;
        out.push_back({p.name, pl.start});
        if (place(order, i + 1, used_mask | mask, out)) return true;
        out.pop_back();
    }
    return false;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
    return out;
}

std::string profile_list(const std::vector<nvml::GiProfile>& profiles) {
    std::vector<std::string> names;
    for (const auto& p : profiles) names.push_back(p.name);
    return join(names, ", ");
}

}  // namespace

Result<std::vector<std::string>> parse_mig_geometry(const std::string& text) {
    if (trim(text).empty()) return Error{"empty geometry (expected e.g. 3g.40gb+2x1g.10gb)"};
    // Terms are joined by '+', which also starts a profile's suffix (1g.10gb+me): glue those
    // back to their term first.
    std::vector<std::string> terms;
    for (const std::string& raw : split(text, '+')) {
        const std::string t = trim(raw);
        if ((t == "me" || t == "me.all" || t == "gfx") && !terms.empty())
            terms.back() += "+" + t;
        else
            terms.push_back(t);
    }
    std::vector<std::string> out;
    for (const std::string& term : terms) {
        std::string name = term;
        unsigned count = 1;
        const auto x = term.find('x');
        if (x != std::string::npos && x > 0 &&
            std::all_of(term.begin(), term.begin() + static_cast<long>(x), ::isdigit)) {
            count = static_cast<unsigned>(std::stoul(term.substr(0, x)));
            name = term.substr(x + 1);
            if (count < 1 || count > kMaxComputeSlices)
                return Error{"'" + term + "': count must be 1.." + std::to_string(kMaxComputeSlices)};
        }
        if (name.empty() || name.find('g') == std::string::npos || !::isdigit(name[0]))
            return Error{"'" + term + "': not a MIG profile name (expected e.g. 3g.40gb or 2x1g.10gb)"};
        out.insert(out.end(), count, name);
    }
    return out;
}

std::string format_mig_geometry(const std::vector<std::string>& names,
                                const std::vector<nvml::GiProfile>& profiles) {
    std::vector<std::string> sorted = names;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const std::string& a, const std::string& b) {
        const auto* pa = find(profiles, a);
        const auto* pb = find(profiles, b);
        if (pa && pb) return larger(pa, pb);
        if (pa != pb) return pa != nullptr;
        return a > b;
    });
    std::vector<std::string> terms;
    for (std::size_t i = 0; i < sorted.size();) {
        std::size_t j = i;
        while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
        terms.push_back(j - i > 1 ? std::to_string(j - i) + "x" + sorted[i] : sorted[i]);
        i = j;
    }
    return join(terms, "+");
}

Result<std::vector<MigSlot>> plan_mig_geometry(const std::vector<nvml::GiProfile>& profiles,
                                               const std::vector<std::string>& names) {
    std::vector<const nvml::GiProfile*> order;
    std::map<std::string, unsigned> counts;
    unsigned slices = 0;
    for (const auto& n : names) {
        const auto* p = find(profiles, n);
        if (!p) return Error{"'" + n + "' is not a profile of this GPU (it has " + profile_list(profiles) + ")"};
        order.push_back(p);
        slices += p->slices;
        if (++counts[n] > p->max_count)
            return Error{format_mig_geometry(names, profiles) + " does not fit: at most " +
                         std::to_string(p->max_count) + " " + n + " per GPU"};
    }
    if (slices > kMaxComputeSlices)
        return Error{format_mig_geometry(names, profiles) + " does not fit: " + std::to_string(slices) +
                     " compute slices, a GPU has " + std::to_string(kMaxComputeSlices)};
    std::stable_sort(order.begin(), order.end(), larger);
    std::vector<MigSlot> out;
    if (!place(order, 0, 0, out))
        return Error{format_mig_geometry(names, profiles) +
                     " does not fit: no placement set keeps the instances' memory slices apart"};
    return out;
}

MigPartialPlan place_what_fits(const std::vector<nvml::GiProfile>& profiles,
                               const std::vector<std::string>& names) {
    std::vector<const nvml::GiProfile*> order;
    MigPartialPlan out;
    for (const auto& n : names) {
        if (const auto* p = find(profiles, n)) order.push_back(p);
        else out.left.push_back(n);
    }
    std::stable_sort(order.begin(), order.end(), larger);
    std::size_t fit = order.size();
    for (;; --fit) {
        std::vector<const nvml::GiProfile*> head(order.begin(), order.begin() + static_cast<long>(fit));
        unsigned slices = 0;
        std::map<const nvml::GiProfile*, unsigned> counts;
        bool counted = true;
        for (const auto* p : head) {
            slices += p->slices;
            counted = counted && ++counts[p] <= p->max_count;
        }
        out.placed.clear();
        if (counted && slices <= kMaxComputeSlices && place(head, 0, 0, out.placed)) break;
    }
    std::vector<std::string> rest;
    for (std::size_t i = fit; i < order.size(); ++i) rest.push_back(order[i]->name);
    out.left.insert(out.left.begin(), rest.begin(), rest.end());
    return out;
}

unsigned mig_memory_slices(const std::vector<nvml::GiProfile>& profiles) {
    unsigned end = 0;
    for (const auto& p : profiles)
        for (const auto& pl : p.placements) end = std::max(end, pl.start + pl.size);
    return end;
}

unsigned mig_instance_size(const std::vector<nvml::GiProfile>& profiles, const std::string& name) {
    const auto* p = find(profiles, name);
    return p ? memory_size(*p) : 0;
}

std::vector<std::vector<std::string>> uniform_mig_geometries(
    const std::vector<nvml::GiProfile>& profiles) {
    std::vector<const nvml::GiProfile*> order;
    for (const auto& p : profiles)
        if (p.name.find('+') == std::string::npos && p.name.find('-') == std::string::npos)
            order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return larger(b, a); });
    std::vector<std::vector<std::string>> out;
    for (const auto* p : order) {
        for (unsigned n = p->max_count; n >= 1; --n) {
            std::vector<std::string> g(n, p->name);
            if (plan_mig_geometry(profiles, g)) {
                out.push_back(g);
                break;
            }
        }
    }
    return out;
}

bool geometry_serves(const std::vector<std::string>& geometry,
                     const std::map<std::string, unsigned>& wanted) {
    for (const auto& [type, count] : wanted) {
        // "" is an untyped request: any partition serves it.
        const auto have = type.empty() ? geometry.size()
                                       : static_cast<std::size_t>(std::count(geometry.begin(), geometry.end(), type));
        if (have < count) return false;
    }
    return true;
}

}  // namespace xpart
