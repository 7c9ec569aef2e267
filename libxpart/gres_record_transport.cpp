// The records slurmd hands to every slurmstepd (send_stepd/recv_stepd), and the discovery
// module to the plugin: one line per record and per file, tab-separated, parsed in one pass
// without building a tree. slurmstepd parses it at every step launch, so it carries only what
// the plugin reads there, CPUs as ranges.
//
//   xpart-gres-records 1
//   r <vendor> <type> <unique_id> <partition_uuid> <gpu_uuid> <gpu_minor> <gi> <ci> <kfd_node> <amd_rank> <cpus>
//   f <path> <major> <minor> <shared 0|1>       (a file of the record above)
//   p <path>                                    (a presence path of the record above)
//   c <mode|gpu_id> <path> <text>               (an expected content of the record above;
//                                                added in version 1: an older slurmd sends
//                                                none, and slurmd and slurmstepd load the
//                                                same installed plugin)
//
// '%', tab, CR and newline inside a field are written as %25, %09, %0D, %0A.
#include <charconv>
#include <optional>
#include <string>
#include <string_view>

#include "libxpart/gres_record.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

constexpr std::string_view kHeader = "xpart-gres-records 1";

void put(std::string& out, std::string_view field) {
    out += '\t';
    for (char c : field) {
        if (c == '%' || c == '\t' || c == '\n' || c == '\r') {
            static const char hex[] = "0123456789ABCDEF";
            const auto b = static_cast<unsigned char>(c);
            out += '%';
            out += hex[b >> 4];
            out += hex[b & 15];
        } else {
            out += c;
        }
    }
}

void put(std::string& out, long long n) { put(out, std::to_string(n)); }

std::optional<std::string> unescape(std::string_view s) {
    if (s.find('%') == std::string_view::npos) return std::string(s);  // nearly every field
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        unsigned v = 0;
        if (i + 2 >= s.size()) return std::nullopt;
        auto [end, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
        if (ec != std::errc() || end != s.data() + i + 3) return std::nullopt;
        out += static_cast<char>(v);
        i += 2;
    }
    return out;
}

template <class Int>
bool parse_int(std::string_view s, Int* out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string serialize_records(const std::vector<GresRecord>& records) {
    std::string out(kHeader);
    out += '\n';
    for (const auto& r : records) {
        out += 'r';
        put(out, to_string(r.vendor));
        put(out, r.type);
        put(out, r.unique_id);
        put(out, r.partition_uuid);
        put(out, r.gpu_uuid);
        for (int n : {r.gpu_minor, r.gi, r.ci, r.kfd_node, r.amd_rank}) put(out, n);
        put(out, format_cpu_list(r.cpus));
        out += '\n';
        for (const auto& f : r.files) {
            out += 'f';
            put(out, f.path);
            put(out, f.major);
            put(out, f.minor);
            put(out, f.shared ? 1 : 0);
            out += '\n';
        }
        for (const auto& p : r.presence_paths) {
            out += 'p';
            put(out, p);
            out += '\n';
        }
        for (const auto& c : r.expected_contents) {
            out += 'c';
            put(out, c.kind == ContentKind::ComputeMode ? "mode" : "gpu_id");
            put(out, c.path);
            put(out, c.text);
            out += '\n';
        }
    }
    return out;
}

Result<std::vector<GresRecord>> parse_records(std::string_view text) {
    std::vector<GresRecord> out;
    unsigned line_no = 0;
    auto fail = [&](const std::string& what) {
        return Error{"gres records line " + std::to_string(line_no) + ": " + what};
    };
    std::string_view rest = text;
    // Reused for every line: slurmstepd parses these at every step launch.
    std::vector<std::string_view> fields;
    std::vector<std::string> s;  // a line's unescaped fields after the tag
    while (!rest.empty()) {
        const std::size_t nl = rest.find('\n');
        if (nl == std::string_view::npos) {
            ++line_no;
            return fail("not terminated by a newline (truncated?)");
        }
        const std::string_view line = rest.substr(0, nl);
        rest.remove_prefix(nl + 1);
        if (++line_no == 1) {
            if (line != kHeader) return fail("not '" + std::string(kHeader) + "'");
            continue;
        }
        fields.clear();
        for (std::size_t start = 0;;) {
            const std::size_t tab = line.find('\t', start);
            fields.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
            if (tab == std::string_view::npos) break;
            start = tab + 1;
        }
        s.clear();
        for (std::size_t i = 1; i < fields.size(); ++i) {
            auto v = unescape(fields[i]);
            if (!v) return fail("bad %-escape in field " + std::to_string(i));
            s.push_back(std::move(*v));
        }
        const std::string_view tag = fields[0];
        if (tag == "r") {
            if (s.size() != 11) return fail("a record needs 11 fields, has " + std::to_string(s.size()));
            GresRecord r;
            if (s[0] == "nvidia") r.vendor = Vendor::Nvidia;
            else if (s[0] == "amd") r.vendor = Vendor::Amd;
            else return fail("unknown vendor '" + s[0] + "'");
            r.type = std::move(s[1]);
            r.unique_id = std::move(s[2]);
            r.partition_uuid = std::move(s[3]);
            r.gpu_uuid = std::move(s[4]);
            int* ints[] = {&r.gpu_minor, &r.gi, &r.ci, &r.kfd_node, &r.amd_rank};
            for (std::size_t i = 0; i < 5; ++i)
                if (!parse_int(s[5 + i], ints[i]) || *ints[i] < -1)
                    return fail("bad number '" + s[5 + i] + "' in field " + std::to_string(6 + i));
            auto cpus = parse_cpu_list(s[10]);
            if (!cpus) return fail(cpus.error().message);
            r.cpus = std::move(*cpus);
            out.push_back(std::move(r));
        } else if (tag == "f" || tag == "p" || tag == "c") {
            if (out.empty()) return fail("a file before any record");
            if (tag == "c") {
                if (s.size() != 3) return fail("a content needs 3 fields, has " + std::to_string(s.size()));
                ExpectedContent c;
                if (s[0] == "mode") c.kind = ContentKind::ComputeMode;
                else if (s[0] == "gpu_id") c.kind = ContentKind::KfdGpuId;
                else return fail("unknown content kind '" + s[0] + "'");
                c.path = std::move(s[1]);
                c.text = std::move(s[2]);
                out.back().expected_contents.push_back(std::move(c));
                continue;
            }
            if (tag == "p") {
                if (s.size() != 1) return fail("a presence path needs 1 field");
                out.back().presence_paths.push_back(std::move(s[0]));
                continue;
            }
            if (s.size() != 4) return fail("a file needs 4 fields, has " + std::to_string(s.size()));
            DeviceFile f;
            f.path = std::move(s[0]);
            if (!parse_int(s[1], &f.major) || !parse_int(s[2], &f.minor) ||
                (s[3] != "0" && s[3] != "1"))
                return fail("bad device numbers or shared flag");
            f.shared = s[3] == "1";
            out.back().files.push_back(std::move(f));
        } else {
            return fail("unknown line tag '" + std::string(tag.substr(0, 16)) + "'");
        }
    }
    if (line_no == 0) return Error{"gres records: empty"};
    return out;
}

}  // namespace xpart
