#include "libxpart/text.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <numeric>

namespace xpart {

std::string first_line(std::string_view s, std::size_t at_most) {
    return std::string(s.substr(0, std::min(s.find('\n'), at_most)));
}

std::vector<std::string> split_words(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while ((start = s.find_first_not_of(" \t\n\r\v\f", start)) != std::string_view::npos) {
        std::size_t end = s.find_first_of(" \t\n\r\v\f", start);
        out.emplace_back(s.substr(start, end == std::string_view::npos ? end : end - start));
        start = end;
    }
    return out;
}

namespace {
std::string_view trim_view(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}
}  // namespace

std::string trim(std::string_view s) { return std::string(trim_view(s)); }

std::string to_lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string to_upper(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    for (;;) {
        std::size_t pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

namespace {
template <class SplitFn>
Result<std::vector<KeyValueLine>> parse_lines(const std::string& text, const std::string& file,
                                              SplitFn split_line, const char* expected) {
    std::vector<KeyValueLine> out;
    unsigned lineno = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + start, end - start);
        ++lineno;
        if (!trim(line).empty()) {
            KeyValueLine kv;
            kv.line = lineno;
            if (!split_line(line, kv))
                return file_error(file, lineno,
                                  std::string("expected ") + expected + ", got '" + trim(line) + "'");
            out.push_back(std::move(kv));
        }
        if (end == text.size()) break;
        start = end + 1;
    }
    return out;
}
}  // namespace

Result<std::vector<KeyValueLine>> parse_colon_lines(const std::string& text,
                                                    const std::string& file) {
    return parse_lines(text, file, [](std::string_view line, KeyValueLine& kv) {
        std::size_t c = line.find(':');
        if (c == std::string_view::npos) return false;
        kv.key = trim(line.substr(0, c));
        kv.value = trim(line.substr(c + 1));
        return !kv.key.empty();
    }, "'Key: value'");
}

Result<std::vector<KeyValueLine>> parse_space_lines(const std::string& text,
                                                    const std::string& file) {
    return parse_lines(text, file, [](std::string_view raw, KeyValueLine& kv) {
        std::string line = trim(raw);
        std::size_t sp = line.find_first_of(" \t");
        if (sp == std::string::npos) return false;
        kv.key = line.substr(0, sp);
        kv.value = trim(std::string_view(line).substr(sp));
        return !kv.key.empty() && !kv.value.empty();
    }, "'key value'");
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        unsigned d = static_cast<unsigned>(c - '0');
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

// slurmstepd parses one list per GPU record at every step launch: views, no copies, and no
// sort when the ranges come in order (as format_cpu_list and the kernel write them).
Result<std::vector<unsigned>> parse_cpu_list(std::string_view s) {
    std::vector<unsigned> cpus;
    const std::string_view t = trim_view(s);
    bool ascending = true;
    for (std::size_t start = 0; !t.empty();) {
        const std::size_t comma = t.find(',', start);
        const std::string_view part =
            t.substr(start, comma == std::string_view::npos ? comma : comma - start);
        const std::size_t dash = part.find('-');
        auto lo = parse_u64(trim_view(part.substr(0, dash)));
        auto hi = dash == std::string_view::npos ? lo : parse_u64(trim_view(part.substr(dash + 1)));
        if (!lo || !hi || *hi < *lo || *hi > 65535)
            return Error{"invalid CPU list '" + std::string(t) + "' at '" + std::string(part) + "'"};
        if (!cpus.empty() && *lo <= cpus.back()) ascending = false;
        const std::size_t at = cpus.size();
        cpus.resize(at + static_cast<std::size_t>(*hi - *lo + 1));
        std::iota(cpus.begin() + static_cast<std::ptrdiff_t>(at), cpus.end(), static_cast<unsigned>(*lo));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (!ascending) {
        std::sort(cpus.begin(), cpus.end());
        cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    }
    return cpus;
}

std::string format_cpu_list(const std::vector<unsigned>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace xpart
