#include "libxpart/nvidia/nvidia_procfs.hpp"

#include <utility>

#include "libxpart/text.hpp"

namespace xpart {

namespace {
// The number after `key:` in a "Key: value" procfs file; `what` describes the allowed range.
Result<unsigned> read_colon_number(const RootFs& root, const std::string& path, const char* key,
                                   std::uint64_t max, const char* what) {
    auto text = root.read(path);
    if (!text) return text.error();
    const std::string file = root.host_path(path);
    auto lines = parse_colon_lines(*text, file);
    if (!lines) return lines.error();
    for (const KeyValueLine& kv : *lines) {
        if (kv.key != key) continue;
        auto n = parse_u64(kv.value);
        if (!n || *n > max)
            return file_error(file, kv.line, std::string(key) + ": expected " + what + ", got '" + kv.value + "'");
        return static_cast<unsigned>(*n);
    }
    return file_error(file, 0, std::string("no '") + key + "' line");
}
}  // namespace

Result<unsigned> read_nvidia_device_minor(const RootFs& root, const std::string& bdf) {
    return read_colon_number(root, "/proc/driver/nvidia/gpus/" + bdf + "/information", "Device Minor",
                             254, "0..254");
}

Result<MigMinorTable> MigMinorTable::load(const RootFs& root) {
    auto text = root.read(kPath);
    if (!text) return text.error();
    return parse(std::move(*text), root.host_path(kPath));
}

Result<MigMinorTable> MigMinorTable::parse(std::string text, const std::string& file) {
    // 4322 lines on every node: one pass, keys as views into the table's own copy of the text
    // (this parse dominated discovery time when done with per-line strings).
    MigMinorTable table;
    table.file_ = file;
    table.text_ = std::make_shared<const std::string>(std::move(text));
    const std::string_view all(*table.text_);
    table.minors_.reserve(4400);
    unsigned lineno = 0;
    for (std::size_t pos = 0; pos < all.size();) {
        std::size_t eol = all.find('\n', pos);
        if (eol == std::string_view::npos) eol = all.size();
        std::string_view line = all.substr(pos, eol - pos);
        pos = eol + 1;
        ++lineno;
        while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
        while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
            line.remove_suffix(1);
        if (line.empty()) continue;
        const std::size_t sp = line.find_first_of(" \t");
        if (sp == std::string_view::npos)
            return file_error(file, lineno, "expected 'key value', got '" + std::string(line) + "'");
        const std::string_view key = line.substr(0, sp);
        std::string_view value = line.substr(sp);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        auto minor = parse_u64(value);
        if (!minor || *minor > 1048575)
            return file_error(file, lineno, "expected '<capability> <minor>', got '" + std::string(line) + "'");
        if (!table.minors_.emplace(key, static_cast<unsigned>(*minor)).second)
            return file_error(file, lineno, "duplicate capability '" + std::string(key) + "'");
    }
    return table;
}

Result<unsigned> MigMinorTable::minor(const std::string& name) const {
    auto it = minors_.find(std::string_view(name));
    if (it == minors_.end()) return Error{file_ + ": no entry '" + name + "'"};
    return it->second;
}

std::string mig_capability_name(unsigned gpu_minor, unsigned gi, int ci) {
    std::string name = "gpu" + std::to_string(gpu_minor) + "/gi" + std::to_string(gi) + "/";
    if (ci >= 0) name += "ci" + std::to_string(ci) + "/";
    return name + "access";
}

std::string mig_capability_path(unsigned gpu_minor, unsigned gi, int ci) {
    std::string path = "/proc/driver/nvidia/capabilities/gpu" + std::to_string(gpu_minor) +
                       "/mig/gi" + std::to_string(gi) + "/";
    if (ci >= 0) path += "ci" + std::to_string(ci) + "/";
    return path + "access";
}

Result<unsigned> read_capability_minor(const RootFs& root, const std::string& node_path) {
    return read_colon_number(root, node_path, "DeviceFileMinor", 1048575, "a number");
}

Result<unsigned> read_capability_mode(const RootFs& root, const std::string& node_path) {
    return read_colon_number(root, node_path, "DeviceFileMode", 0777, "a file mode");
}

Result<unsigned> mig_capability_minor(const RootFs& root, const MigMinorTable& table,
                                      unsigned gpu_minor, unsigned gi, int ci) {
    const std::string name = mig_capability_name(gpu_minor, gi, ci);
    auto from_table = table.minor(name);
    if (!from_table) return from_table.error();
    const std::string cap_path = mig_capability_path(gpu_minor, gi, ci);
    auto from_file = read_capability_minor(root, cap_path);
    if (!from_file) return from_file.error();
    if (*from_file != *from_table)
        return Error{root.host_path(cap_path) + ": DeviceFileMinor " + std::to_string(*from_file) +
                     " disagrees with " + table.file() + ": " + name + " " +
                     std::to_string(*from_table)};
    // The driver's layout (nv-caps): 9 minors per GI (its access + 8 CIs), 135 per GPU.
    const unsigned expected = 3 + 135 * gpu_minor + 9 * gi + (ci >= 0 ? 1 + unsigned(ci) : 0);
    if (*from_table != expected)
        return Error{table.file() + ": " + name + " " + std::to_string(*from_table) +
                     " does not follow the driver's layout (expected " + std::to_string(expected) +
                     ")"};
    return *from_table;
}

}  // namespace xpart
