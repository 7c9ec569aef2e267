#include "binding/rank_env.hpp"

#include <optional>

#include "libxpart/text.hpp"

namespace xpart::binding {
namespace {

// Names of the four variables one launcher sets; empty when it has none for that field.
struct RankVars {
    const char* source;
    const char* rank;
    const char* size;
    const char* local_rank;
    const char* local_size;
};

constexpr RankVars kLaunchers[] = {
    {"ompi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pmix", "PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", ""},
};

// Unset: nullopt value with ok status; set but not a number: error.
Result<std::optional<int>> read_int(const EnvMap& env, const char* name) {
    if (!*name) return std::optional<int>{};
    const std::string* v = env_get(env, name);
    if (!v) return std::optional<int>{};
    auto n = parse_u64(*v);
    if (!n || *n > 1u << 30)
        return Error{std::string("environment: ") + name + "='" + *v +
                     "' is not a non-negative integer"};
    return std::optional<int>{static_cast<int>(*n)};
}

// Slurm's local size: SLURM_STEP_TASKS_PER_NODE (or SLURM_TASKS_PER_NODE) at SLURM_NODEID.
Result<std::optional<int>> slurm_local_size(const EnvMap& env) {
    const char* list_name = "SLURM_STEP_TASKS_PER_NODE";
    const std::string* list = env_get(env, list_name);
    if (!list) {
        list_name = "SLURM_TASKS_PER_NODE";
        list = env_get(env, list_name);
    }
    if (!list) return std::optional<int>{};
    auto node = read_int(env, "SLURM_NODEID");
    if (!node) return node.error();
    auto n = slurm_tasks_on_node(*list, node->value_or(0));
    if (!n) return Error{std::string("environment: ") + list_name + "='" + *list + "': " +
                         n.error().message};
    return std::optional<int>{*n};
}

}  // namespace

Result<int> slurm_tasks_on_node(const std::string& tasks_per_node, int node_index) {
    int seen = 0;
    for (const auto& field : split(tasks_per_node, ',')) {
        std::string count = field;
        std::uint64_t repeat = 1;
        auto paren = field.find("(x");
        if (paren != std::string::npos) {
            if (field.back() != ')') return Error{"bad count '" + field + "'"};
            auto r = parse_u64(field.substr(paren + 2, field.size() - paren - 3));
            if (!r || *r == 0) return Error{"bad repeat in '" + field + "'"};
            repeat = *r;
            count = field.substr(0, paren);
        }
        auto c = parse_u64(count);
        if (!c || *c == 0 || *c > 1u << 20) return Error{"bad count '" + field + "'"};
        if (node_index < seen + static_cast<int>(repeat)) return static_cast<int>(*c);
        seen += static_cast<int>(repeat);
    }
    return Error{"no entry for node index " + std::to_string(node_index)};
}

Result<RankInfo> detect_rank(const EnvMap& env) {
    // The Slurm local view, used to fill what an MPI launcher leaves out.
    auto slurm_local = read_int(env, "SLURM_LOCALID");
    if (!slurm_local) return slurm_local.error();
    auto slurm_lsize = slurm_local_size(env);
    if (!slurm_lsize) return slurm_lsize.error();

    for (const auto& l : kLaunchers) {
        auto rank = read_int(env, l.rank);
        if (!rank) return rank.error();
        if (!*rank) continue;
        auto size = read_int(env, l.size);
        if (!size) return size.error();
        auto local = read_int(env, l.local_rank);
        if (!local) return local.error();
        auto lsize = read_int(env, l.local_size);
        if (!lsize) return lsize.error();

        RankInfo info;
        info.source = l.source;
        info.rank = **rank;
        if (!*size)
            return Error{std::string("environment: ") + l.rank + " is set but " + l.size +
                         " is not"};
        info.size = **size;
        std::optional<int> lr = *local ? *local : *slurm_local;
        std::optional<int> ls = *lsize ? *lsize : *slurm_lsize;
        if (!lr || !ls)
            return Error{std::string("environment: ") + l.rank + "=" + std::to_string(info.rank) +
                         " but no local rank and size (" + l.local_rank +
                         (*l.local_size ? std::string(", ") + l.local_size : "") +
                         ", or SLURM_LOCALID with SLURM_STEP_TASKS_PER_NODE)"};
        info.local_rank = *lr;
        info.local_size = *ls;
        if (info.size == 0 || info.rank >= info.size)
            return Error{std::string("environment: ") + l.rank + "=" + std::to_string(info.rank) +
                         " is not below " + l.size + "=" + std::to_string(info.size)};
        if (info.local_size == 0 || info.local_rank >= info.local_size)
            return Error{"environment: local rank " + std::to_string(info.local_rank) +
                         " is not below local size " + std::to_string(info.local_size) +
                         " (from " + l.source + ")"};
        return info;
    }
    return RankInfo{};
}

}  // namespace xpart::binding
