#include "libxpart/amd/amd_kfd.hpp"

#include <algorithm>
#include <cerrno>

#include "libxpart/text.hpp"

namespace xpart {

namespace {
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
std::string_view trim_view(std::string_view v) {
    while (!v.empty() && is_space(v.front())) v.remove_prefix(1);
    while (!v.empty() && is_space(v.back())) v.remove_suffix(1);
    return v;
}
}  // namespace

// One pass over string_views (discovery parses ~65 of these files per call; the generic line
// splitter's copies were a third of its time). Messages match parse_space_lines'.
Result<KfdProperties> KfdProperties::parse(const std::string& text, const std::string& file) {
    KfdProperties out;
    out.file_ = file;
    out.values_.reserve(48);
    std::string_view rest(text);
    for (unsigned lineno = 1; !rest.empty(); ++lineno) {
        std::size_t nl = rest.find('\n');
        std::string_view line = trim_view(rest.substr(0, nl));
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (line.empty()) continue;
        std::size_t sp = 0;
        while (sp < line.size() && !is_space(line[sp])) ++sp;
        std::string_view key = line.substr(0, sp);
        std::string_view value = trim_view(line.substr(sp));
        if (value.empty())
            return file_error(file, lineno, "expected 'key value', got '" + std::string(line) + "'");
        auto v = parse_u64(value);
        if (!v)
            return file_error(file, lineno, std::string(key) + ": expected a decimal number, got '" +
                                                std::string(value) + "'");
        out.values_.emplace_back(std::string(key), *v);
    }
    return out;
}

std::optional<std::uint64_t> KfdProperties::find(const std::string& key) const {
    for (const auto& [k, v] : values_)
        if (k == key) return v;
    return std::nullopt;
}

std::uint64_t KfdProperties::get_or(const std::string& key, std::uint64_t dflt) const {
    auto v = find(key);
    return v ? *v : dflt;
}

namespace {
Result<KfdProperties> read_properties(const RootFs& root, const std::string& path) {
    auto text = root.read(path);
    if (!text) return text.error();
    return KfdProperties::parse(*text, root.host_path(path));
}
}  // namespace

Result<std::vector<KfdNode>> read_kfd_nodes(const RootFs& root, const std::string& nodes_dir) {
    auto names = root.list(nodes_dir);
    if (!names) return names.error();
    std::vector<KfdNode> nodes;
    nodes.reserve(names->size());
    for (const auto& name : *names) {
        auto id = parse_u64(name);
        if (!id || *id > 100000)
            return Error{root.host_path(nodes_dir) + ": unexpected entry '" + name +
                         "' (KFD node directories are numbers)"};
        const std::string dir = nodes_dir + "/" + name;
        auto props = read_properties(root, dir + "/properties");
        if (!props) return props.error();
        KfdNode node;
        node.id = static_cast<unsigned>(*id);
        node.props = std::move(*props);
        node.gpu = node.props.get_or("simd_count", 0) > 0;
        // A gpu_id of 0 marks a CPU node even where simd_count says otherwise.
        if (node.gpu) {
            auto gid = root.read(dir + "/gpu_id");
            if (!gid) {
                if (root.exists(dir + "/gpu_id")) return gid.error();
                nodes.push_back(std::move(node));  // not recorded (older captures)
                continue;
            }
            auto v = parse_u64(trim(*gid));
            if (!v)
                return file_error(root.host_path(dir + "/gpu_id"), 1,
                                  "expected a decimal number, got '" + trim(*gid) + "'");
            node.gpu = *v != 0;
        }
        nodes.push_back(std::move(node));
    }
    std::sort(nodes.begin(), nodes.end(),
              [](const KfdNode& a, const KfdNode& b) { return a.id < b.id; });
    return nodes;
}

Result<std::uint64_t> read_kfd_memory_mb(const RootFs& root, const std::string& node_dir,
                                         std::uint64_t mem_banks_count) {
    std::uint64_t bytes = 0;
    for (std::uint64_t i = 0; i < mem_banks_count && i < 64; ++i) {
        const std::string path = node_dir + "/mem_banks/" + std::to_string(i) + "/properties";
        auto text = root.read(path);
        if (!text) {
            if (!root.exists(path)) return bytes >> 20;  // not recorded
            return text.error();
        }
        auto props = KfdProperties::parse(*text, root.host_path(path));
        if (!props) return props.error();
        bytes += props->get_or("size_in_bytes", 0);
    }
    return bytes >> 20;
}

Result<std::optional<unsigned>> read_kfd_cpu_link(const RootFs& root, const std::string& node_dir,
                                                  const std::vector<KfdNode>& nodes) {
    auto cpu_target = [&](const KfdProperties& link) -> std::optional<unsigned> {
        if (link.get_or("type", 0) != kIoLinkPcie) return std::nullopt;
        auto to = link.find("node_to");
        if (!to) return std::nullopt;
        for (const auto& n : nodes)
            if (n.id == *to && !n.is_gpu()) return n.id;
        return std::nullopt;
    };
    const std::string links = node_dir + "/io_links";
    auto first = read_properties(root, links + "/0/properties");
    if (first) {
        if (auto cpu = cpu_target(*first)) return std::optional<unsigned>(*cpu);
    } else if (root.exists(links + "/0/properties")) {
        return first.error();
    }
    if (!root.exists(links)) return std::optional<unsigned>();
    auto names = root.list(links);
    if (!names) return names.error();
    for (const auto& name : *names) {
        if (name == "0") continue;
        auto link = read_properties(root, links + "/" + name + "/properties");
        if (!link) return link.error();
        if (auto cpu = cpu_target(*link)) return std::optional<unsigned>(*cpu);
    }
    return std::optional<unsigned>();
}

}  // namespace xpart
