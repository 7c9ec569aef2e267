#include "libxpart/gres_bind.hpp"

#include <cstdlib>

#include "libxpart/text.hpp"

namespace xpart {

TaskBinding parse_tres_bind(const std::string& tres_bind) {
    TaskBinding b;
    auto gpu = tres_bind.find("gpu:");
    if (gpu == std::string::npos) return b;
    std::string rest = tres_bind.substr(gpu + 4);
    if (to_lower(rest.substr(0, 8)) == "verbose,") rest = rest.substr(8);
    const std::string lower = to_lower(rest);
    auto starts = [&](const char* p) { return lower.rfind(p, 0) == 0; };
    if (starts("single:") || starts("closest")) {
        b.kind = TaskBinding::Kind::Closest;
    } else if (starts("map_gpu:")) {
        b.kind = TaskBinding::Kind::Map;
        b.list = rest.substr(8);
    } else if (starts("mask_gpu:")) {
        b.kind = TaskBinding::Kind::Mask;
        b.list = rest.substr(9);
    } else if (starts("per_task:")) {
        b.kind = TaskBinding::Kind::PerTask;
        b.gpus_per_task = std::strtoul(rest.c_str() + 9, nullptr, 10);
    }
    return b;
}

namespace {

std::size_t count(const std::vector<bool>& bits) {
    std::size_t n = 0;
    for (bool b : bits) n += b;
    return n;
}

// Slurm's _get_usable_gres_map_or_mask: the entry for this task, entries repeated by "*N",
// the list reused from the start when tasks outnumber it.
std::vector<bool> map_or_mask(const std::string& list, unsigned local_id, std::size_t size,
                              bool is_map) {
    std::vector<bool> usable(size, false);
    auto tokens = split(list, ',');
    if (tokens.empty()) return usable;
    unsigned long offset = 0;
    for (std::size_t guard = 0; guard < 4096 * tokens.size(); ++guard) {
        const std::string& tok = tokens[guard % tokens.size()];
        unsigned long mult = 1;
        if (auto star = tok.find('*'); star != std::string::npos) {
            mult = std::strtoul(tok.c_str() + star + 1, nullptr, 10);
            if (mult == 0) mult = 1;
        }
        if (local_id >= offset && local_id <= offset + mult - 1) {
            const long value = std::strtol(tok.c_str(), nullptr, 0);
            const long max = is_map ? static_cast<long>(size) - 1
                                    : (size >= 63 ? -1L : (1L << size) - 1);
            if (value < (is_map ? 0 : 1) || (max >= 0 && value > max)) return usable;
            if (is_map) usable[static_cast<std::size_t>(value)] = true;
            else
                for (std::size_t i = 0; i < size && i < 63; ++i) usable[i] = (value >> i) & 1;
            return usable;
        }
        offset += mult;
    }
    return usable;
}

}  // namespace

std::optional<std::vector<bool>> task_share(const TaskBinding& binding, unsigned local_id,
                                            const std::vector<bool>& alloc, bool local_indices) {
    std::vector<bool> share(alloc.size(), false);
    switch (binding.kind) {
    case TaskBinding::Kind::None:
    case TaskBinding::Kind::Closest:
        return std::nullopt;
    case TaskBinding::Kind::PerTask: {
        unsigned long skip = local_id * binding.gpus_per_task, take = binding.gpus_per_task;
        for (std::size_t i = 0; i < alloc.size() && take; ++i) {
            if (!alloc[i]) continue;
            if (skip) --skip;
            else { share[i] = true; --take; }
        }
        break;
    }
    case TaskBinding::Kind::Map:
    case TaskBinding::Kind::Mask: {
        const bool is_map = binding.kind == TaskBinding::Kind::Map;
        auto usable = map_or_mask(binding.list, local_id, alloc.size(), is_map);
        if (local_indices) {
            std::size_t local = 0;
            for (std::size_t i = 0; i < alloc.size(); ++i)
                if (alloc[i]) share[i] = local < usable.size() && usable[local++];
        } else {
            for (std::size_t i = 0; i < alloc.size(); ++i) share[i] = alloc[i] && usable[i];
        }
        break;
    }
    }
    // Slurm binds a task whose request names nothing it holds to the first allocated GPU.
    if (count(share) == 0)
        for (std::size_t i = 0; i < alloc.size(); ++i)
            if (alloc[i]) {
                share[i] = true;
                break;
            }
    return share;
}

}  // namespace xpart
