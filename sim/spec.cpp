#include "sim/spec.hpp"

#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"
#include "sim/spec_parse.hpp"

namespace xpart::sim {

using nlohmann::json;

SpecPath SpecPath::child(const std::string& name) const {
    return {file, key.empty() ? name : key + "." + name};
}
SpecPath SpecPath::item(std::size_t i) const { return {file, key + "[" + std::to_string(i) + "]"}; }
Error SpecPath::error(const std::string& what) const {
    return Error{file + ": " + (key.empty() ? std::string() : key + ": ") + what};
}

Result<std::string> get_string(const json& obj, const SpecPath& at, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return at.child(key).error("missing (a string is required)");
    if (!it->is_string()) return at.child(key).error("expected a string, got " + it->dump());
    return it->get<std::string>();
}

std::string get_string_or(const json& obj, const char* key, const std::string& dflt) {
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : dflt;
}

Result<std::uint64_t> get_uint(const json& obj, const SpecPath& at, const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return at.child(key).error("missing (a number is required)");
    if (!it->is_number_unsigned())
        return at.child(key).error("expected a non-negative integer, got " + it->dump());
    return it->get<std::uint64_t>();
}

Result<std::uint64_t> get_uint_or(const json& obj, const SpecPath& at, const char* key,
                                  std::uint64_t dflt) {
    if (obj.find(key) == obj.end()) return dflt;
    return get_uint(obj, at, key);
}

Result<bool> get_bool_or(const json& obj, const SpecPath& at, const char* key, bool dflt) {
    auto it = obj.find(key);
    if (it == obj.end()) return dflt;
    if (!it->is_boolean()) return at.child(key).error("expected true or false, got " + it->dump());
    return it->get<bool>();
}

Status check_keys(const json& obj, const SpecPath& at, const std::vector<std::string>& allowed) {
    if (!obj.is_object()) return at.error("expected an object, got " + obj.dump());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        bool known = false;
        for (const auto& a : allowed) known = known || a == it.key();
        if (!known) return at.child(it.key()).error("unknown key");
    }
    return ok_status();
}

Result<NodeSpec> parse_spec(const std::string& text, const std::string& file) {
    json j;
    try {
        j = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
    } catch (const json::exception& e) {
        return Error{file + ": invalid JSON: " + e.what()};
    }
    SpecPath at{file, ""};
    if (auto st = check_keys(j, at, {"name", "cpus", "numa", "majors", "nvidia", "amd",
                                     "pcie_switches", "nics"});
        !st)
        return st.error();
    NodeSpec spec;
    spec.file = file;
    auto name = get_string(j, at, "name");
    if (!name) return name.error();
    spec.name = *name;
    auto cpus_text = get_string(j, at, "cpus");
    if (!cpus_text) return cpus_text.error();
    auto cpus = parse_cpu_list(*cpus_text);
    if (!cpus || cpus->empty()) return at.child("cpus").error("invalid CPU list '" + *cpus_text + "'");
    spec.cpus = *cpus;

    if (auto it = j.find("numa"); it != j.end()) {
        if (!it->is_array()) return at.child("numa").error("expected an array");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const json& n = (*it)[i];
            SpecPath nat = at.child("numa").item(i);
            if (auto st = check_keys(n, nat, {"node", "cpus"}); !st) return st.error();
            auto id = get_uint(n, nat, "node");
            if (!id) return id.error();
            auto c = get_string(n, nat, "cpus");
            if (!c) return c.error();
            auto list = parse_cpu_list(*c);
            if (!list) return nat.child("cpus").error(list.error().message);
            spec.numa.push_back({static_cast<int>(*id), *list});
        }
    } else {
        spec.numa.push_back({0, spec.cpus});
    }

    spec.majors = {{"nvidia-uvm", kDefaultNvidiaUvmMajor},
                   {"nvidia-caps", kDefaultNvidiaCapsMajor},
                   {"kfd", kDefaultKfdMajor}};
    if (auto it = j.find("majors"); it != j.end()) {
        SpecPath mat = at.child("majors");
        if (auto st = check_keys(*it, mat, {"nvidia-uvm", "nvidia-caps", "kfd"}); !st)
            return st.error();
        for (auto m = it->begin(); m != it->end(); ++m) {
            if (!m->is_number_unsigned() || m->get<std::uint64_t>() == 0 ||
                m->get<std::uint64_t>() > 511)
                return mat.child(m.key()).error("expected a major number 1..511, got " + m->dump());
            spec.majors[m.key()] = m->get<unsigned>();
        }
    }
    // Switches first: GPUs and NICs name them.
    if (auto it = j.find("pcie_switches"); it != j.end())
        if (auto st = parse_pcie_switches(*it, at.child("pcie_switches"), spec); !st)
            return st.error();
    if (auto it = j.find("nics"); it != j.end())
        if (auto st = parse_nics(*it, at.child("nics"), spec); !st) return st.error();
    if (auto it = j.find("nvidia"); it != j.end())
        if (auto st = parse_nvidia_spec(*it, at.child("nvidia"), spec); !st) return st.error();
    if (auto it = j.find("amd"); it != j.end())
        if (auto st = parse_amd_spec(*it, at.child("amd"), spec); !st) return st.error();
    if (auto st = check_pcie_tree(spec); !st) return st.error();
    sort_amd_gpus(spec);
    return spec;
}

Result<NodeSpec> load_spec(const std::string& path) {
    auto text = RootFs("/").read(path);
    if (!text) return text.error();
    return parse_spec(*text, path);
}

}  // namespace xpart::sim
