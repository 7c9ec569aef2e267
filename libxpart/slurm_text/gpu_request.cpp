#include "libxpart/slurm_text/gpu_request.hpp"

#include "libxpart/text.hpp"

namespace xpart {

namespace {

Result<unsigned> count_of(const std::string& text, const std::string& whole) {
    auto n = parse_u64(text);
    if (!n || *n == 0 || *n > 1024) return Error{"'" + whole + "': count '" + text + "' is not 1..1024"};
    return static_cast<unsigned>(*n);
}

// One "gpu[:type][:count]" term (any "gres:"/"gres/" prefix already cut).
Status add_term(const std::string& term, const std::string& whole, GpuRequest& out) {
    const auto parts = split(term, ':');
    if (parts.empty() || parts[0] != "gpu" || parts.size() > 3)
        return Error{"'" + whole + "': expected gpu[:<type>][:<count>][,...]"};
    std::string type;
    unsigned count = 1;
    if (parts.size() == 2) {
        // "gpu:2" (a count) or "gpu:3g.40gb" (a type)
        if (auto n = parse_u64(parts[1])) {
            auto c = count_of(parts[1], whole);
            if (!c) return c.error();
            count = *c;
        } else {
            type = parts[1];
        }
    } else if (parts.size() == 3) {
        type = parts[1];
        auto c = count_of(parts[2], whole);
        if (!c) return c.error();
        count = *c;
    }
    out[type] += count;
    return ok_status();
}

// The value of `Key=` in a one-line scontrol record ("" when absent or "(null)").
std::string field(const std::string& line, const std::string& key) {
    std::size_t at = 0;
    while ((at = line.find(key + "=", at)) != std::string::npos) {
        if (at == 0 || line[at - 1] == ' ') {
            const std::size_t from = at + key.size() + 1;
            const std::size_t end = line.find(' ', from);
            std::string v = line.substr(from, end == std::string::npos ? std::string::npos : end - from);
            return v == "(null)" ? "" : v;
        }
        at += key.size();
    }
    return "";
}

// "gres:gpu:3g.40gb:1,gres/gpu:2,cpu=4": the GPU terms only.
Result<GpuRequest> gpu_terms(const std::string& tres) {
    GpuRequest out;
    for (const std::string& raw : split(tres, ',')) {
        std::string t = trim(raw);
        if (t.rfind("gres:", 0) == 0 || t.rfind("gres/", 0) == 0) t = t.substr(5);
        if (t != "gpu" && t.rfind("gpu:", 0) != 0 && t.rfind("gpu=", 0) != 0) continue;
        if (t.rfind("gpu=", 0) == 0) t = "gpu:" + t.substr(4);  // "gres/gpu=2" (TRES form)
        if (auto st = add_term(t, tres, out); !st) return st.error();
    }
    return out;
}

}  // namespace

Result<GpuRequest> parse_gpu_gres(const std::string& text) {
    GpuRequest out;
    for (const std::string& raw : split(text, ','))
        if (auto st = add_term(trim(raw), text, out); !st) return st.error();
    return out;
}

Result<GpuRequest> job_gpu_request(const std::string& line) {
    const std::string id = field(line, "JobId");
    const std::string what = "job " + (id.empty() ? std::string("?") : id);
    for (const char* key : {"TresPerNode", "TresPerTask", "TresPerJob"}) {
        const std::string v = field(line, key);
        if (v.empty()) continue;
        auto terms = gpu_terms(v);
        if (!terms) return Error{what + ": " + key + "=" + v + ": " + terms.error().message};
        if (terms->empty()) continue;
        if (std::string(key) == "TresPerTask") {
            // Per task: times the tasks of one node (the job's tasks over its nodes, rounded up).
            auto tasks = parse_u64(field(line, "NumTasks"));
            auto nodes = parse_u64(split(field(line, "NumNodes"), '-')[0]);
            const unsigned per_node = static_cast<unsigned>(
                tasks && nodes && *nodes ? (*tasks + *nodes - 1) / *nodes : 1);
            for (auto& [type, count] : *terms) count *= per_node;
        }
        return *terms;
    }
    return Error{what + " asks for no GPU (no gpu in TresPerNode, TresPerTask or TresPerJob)"};
}

Result<std::vector<std::string>> node_gpu_geometry(const std::string& line, unsigned gpus) {
    const std::string name = field(line, "NodeName");
    const std::string what = "node " + (name.empty() ? std::string("?") : name);
    // "gpu:3g.40gb:2(S:0-1),gpu:1g.10gb:4(IDX:...)": the socket and index notes go.
    std::string gres;
    int depth = 0;
    for (char c : field(line, "Gres")) {
        if (c == '(') ++depth;
        else if (c == ')') depth = depth > 0 ? depth - 1 : 0;
        else if (depth == 0) gres += c;
    }
    auto terms = gpu_terms(gres);
    if (!terms) return Error{what + ": Gres=" + gres + ": " + terms.error().message};
    if (terms->empty()) return Error{what + " has no gpu in its Gres (" + (gres.empty() ? "none" : gres) + ")"};
    if (gpus == 0) return Error{what + ": this host has no MIG GPU to take Gres=" + gres};
    std::vector<std::string> per_gpu;
    for (const auto& [type, count] : *terms) {
        if (type.empty()) return Error{what + ": Gres=" + gres + ": an untyped gpu count names no geometry"};
        if (count % gpus != 0)
            return Error{what + ": Gres=" + gres + ": " + std::to_string(count) + " x " + type +
                         " does not divide among " + std::to_string(gpus) + " GPUs"};
        per_gpu.insert(per_gpu.end(), count / gpus, type);
    }
    return per_gpu;
}

}  // namespace xpart
