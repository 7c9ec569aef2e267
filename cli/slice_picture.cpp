#include "cli/slice_picture.hpp"

#include <algorithm>
#include <cstdlib>

namespace xpart::cli {

namespace {

constexpr std::size_t kCell = 10;
constexpr std::size_t kName = 12;

std::string row_start(const std::string& name) {
    std::string out = "    " + name;
    out.resize(4 + std::max(kName, name.size() + 1), ' ');
    return out;
}

// Trailing blanks go: rows end where their last drawing does.
std::string trimmed(std::string s) {
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
}

// The starts a profile's instances may take, as "0-6" or "0,2,4,6".
std::string starts_of(const nvml::GiProfile& p) {
    std::vector<unsigned> starts;
    for (const auto& pl : p.placements) starts.push_back(pl.start);
    std::string out;
    for (std::size_t i = 0; i < starts.size();) {
        std::size_t j = i;
        while (j + 1 < starts.size() && starts[j + 1] == starts[j] + 1) ++j;
        out += (out.empty() ? "" : ",") + std::to_string(starts[i]);
        if (j > i) out += (j > i + 1 ? "-" : ",") + std::to_string(starts[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace

std::string slice_scale_row(const std::string& name, unsigned cells) {
    std::string out = row_start(name);
    for (unsigned i = 0; i < cells; ++i) {
        std::string cell = std::to_string(i);
        cell.resize(kCell, ' ');
        out += cell;
    }
    return trimmed(out);
}

std::string slice_row(const std::string& name, unsigned cells, std::vector<SliceSpan> spans) {
    std::stable_sort(spans.begin(), spans.end(), [](const SliceSpan& a, const SliceSpan& b) { return a.start < b.start; });
    std::string out = row_start(name);
    unsigned at = 0;
    auto free_to = [&](unsigned end) {
        for (; at < end; ++at) out += std::string(kCell / 2 - 1, ' ') + "." + std::string(kCell / 2, ' ');
    };
    for (const auto& s : spans) {
        if (s.size == 0 || s.start < at || s.start + s.size > cells) continue;
        free_to(s.start);
        const std::size_t inner = s.size * kCell - 2;
        std::string label = s.label.substr(0, inner);
        label.resize(inner, ' ');
        out += "[" + label + "]";
        at = s.start + s.size;
    }
    free_to(cells);
    return trimmed(out);
}

std::vector<SliceSpan> mig_spans(const std::vector<nvml::GiProfile>& profiles, const std::vector<MigSlot>& slots) {
    std::vector<SliceSpan> out;
    for (const auto& s : slots) out.push_back({s.start, mig_instance_size(profiles, s.profile), s.profile});
    return out;
}

std::vector<std::string> mig_picture(const GpuGeometry& g) {
    const unsigned cells = mig_memory_slices(g.profiles);
    if (!g.mig_on || cells == 0) return {};
    return {slice_scale_row("slices", cells), slice_row("placed", cells, mig_spans(g.profiles, mig_slots(g)))};
}

std::vector<std::string> mig_reshape_picture(const MigReshapePlan& plan) {
    const auto& profiles = plan.now.profiles;
    std::vector<std::string> rows = mig_picture(plan.now);
    if (rows.empty()) return rows;
    const unsigned cells = mig_memory_slices(profiles);
    rows.push_back(slice_row("target", cells, mig_spans(profiles, plan.misfit.empty() ? plan.target : plan.partial.placed)));
    for (const auto& name : plan.partial.left) {
        const nvml::GiProfile* p = nullptr;
        for (const auto& q : profiles)
            if (q.name == name) p = &q;
        rows.push_back(row_start("no place") + name +
                       (p ? " (" + std::to_string(mig_instance_size(profiles, name)) + " slice" +
                                (mig_instance_size(profiles, name) == 1 ? "" : "s") + ", may start at " + starts_of(*p) + ")"
                          : " (no profile of this GPU)"));
    }
    return rows;
}

std::vector<std::string> amd_picture(const std::string& row_name, unsigned xccs, unsigned partitions,
                                     const std::string& memory_mode, bool scale) {
    std::vector<std::string> rows;
    if (xccs == 0 || partitions == 0 || xccs % partitions != 0) return rows;
    if (scale) rows.push_back(slice_scale_row("XCDs", xccs));
    std::vector<SliceSpan> xcps;
    for (unsigned i = 0; i < partitions; ++i) xcps.push_back({i * (xccs / partitions), xccs / partitions, "xcp " + std::to_string(i)});
    rows.push_back(slice_row(row_name, xccs, xcps));
    // NPSk: k memory partitions, each under an equal share of the XCDs.
    unsigned nps = 1;
    if (memory_mode.size() > 3 && memory_mode.compare(0, 3, "NPS") == 0)
        nps = static_cast<unsigned>(std::max(1, std::atoi(memory_mode.c_str() + 3)));
    if (xccs % nps != 0) nps = 1;
    std::vector<SliceSpan> memory;
    for (unsigned i = 0; i < nps; ++i)
        memory.push_back({i * (xccs / nps), xccs / nps, (nps == 1 ? "NPS1" : "nps " + std::to_string(i))});
    rows.push_back(slice_row("memory", xccs, memory));
    return rows;
}

}  // namespace xpart::cli
