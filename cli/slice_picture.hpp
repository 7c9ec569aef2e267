// Pictures of how a GPU is split, as text rows under `xpart geometry` and `xpart reshape
// --dry-run`: a MIG GPU's memory slices with the instance on each (its placement start and
// size), an AMD GPU's XCDs with the compute partition (XCP) and the memory partition (NPS) on
// each. Each row is `    <name padded to 12><cells>`, a cell 10 columns wide, so the rows of
// one GPU line up and an admin sees which slices a refused instance would need.
#pragma once

#include <string>
#include <vector>

#include "libxpart/nvidia/mig_geometry.hpp"
#include "libxpart/reshape/mig_reshape.hpp"
#include "libxpart/node.hpp"

namespace xpart::cli {

// Something over cells [start, start + size): drawn "[label   ]", the label cut to fit.
struct SliceSpan {
    unsigned start = 0;
    unsigned size = 1;
    std::string label;
};

// "    slices      0         1 ...": the cells' numbers.
std::string slice_scale_row(const std::string& name, unsigned cells);
// "    now         [3g.40gb  ...][1g.10gb ]    .     ": spans over the cells, "." on a free one.
// Spans are drawn in start order; one that overlaps an earlier one or runs past the last cell
// is left out (a picture never claims a slice twice).
std::string slice_row(const std::string& name, unsigned cells, std::vector<SliceSpan> spans);

// A MIG GPU's instances as spans over its memory slices (their profiles' placement sizes).
std::vector<SliceSpan> mig_spans(const std::vector<nvml::GiProfile>& profiles, const std::vector<MigSlot>& slots);

// A MIG GPU: the scale and the instances now (a GPU with MIG off: no rows).
std::vector<std::string> mig_picture(const GpuGeometry& g);
// A planned reshape: the scale, the instances now, and the target's (or, where the target does
// not fit, what of it would, and a row naming the rest with where each may start).
std::vector<std::string> mig_reshape_picture(const MigReshapePlan& plan);

// An AMD GPU of `xccs` XCDs in compute partition mode `mode` (its `partitions` XCPs) and memory
// partition `memory_mode` ("NPS4"; empty: NPS1): the scale, the XCPs, the memory partitions.
std::vector<std::string> amd_picture(const std::string& row_name, unsigned xccs, unsigned partitions,
                                     const std::string& memory_mode, bool scale);

}  // namespace xpart::cli
