#include "libxpart/proc_devices.hpp"

#include "libxpart/text.hpp"

namespace xpart {

Result<CharMajors> CharMajors::load(const RootFs& root) {
    auto text = root.read("/proc/devices");
    if (!text) return text.error();
    return parse(*text, root.host_path("/proc/devices"));
}

Result<CharMajors> CharMajors::parse(const std::string& text, const std::string& file) {
    CharMajors out;
    out.file_ = file;
    bool in_char = false;
    unsigned lineno = 0;
    for (const std::string& raw : split(text, '\n')) {
        ++lineno;
        std::string line = trim(raw);
        if (line.empty()) continue;
        if (line == "Character devices:") { in_char = true; continue; }
        if (line == "Block devices:") { in_char = false; continue; }
        if (!in_char) continue;
        std::size_t sp = line.find_first_of(" \t");
        auto major = parse_u64(line.substr(0, sp));
        if (sp == std::string::npos || !major || *major > 4095)
            return file_error(file, lineno, "expected '<major> <driver>', got '" + line + "'");
        out.majors_.emplace(trim(line.substr(sp)), static_cast<unsigned>(*major));
    }
    return out;
}

std::optional<unsigned> CharMajors::find(const std::string& driver) const {
    auto it = majors_.find(driver);
    if (it == majors_.end()) return std::nullopt;
    return it->second;
}

Result<unsigned> CharMajors::require(const std::string& driver) const {
    if (auto m = find(driver)) return *m;
    return Error{file_ + ": no character device driver '" + driver + "'"};
}

}  // namespace xpart
