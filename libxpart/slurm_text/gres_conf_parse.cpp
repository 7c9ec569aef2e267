// gres.conf parsing with Slurm 22.05's rules (src/common/parse_config.c and gres.c): `#`
// comments unless escaped, an odd number of trailing `\` joins the next line, `\x` -> x,
// key names case-insensitive, several Key=Value per line, values quoted or free of spaces, a
// record starts with Name= or NodeName=. Where Slurm only logs (unknown AutoDetect, unknown
// Flags token, a key given twice) this parser fails: a checker must not guess.
#include "libxpart/slurm_text/gres_conf.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

#include "libxpart/text.hpp"

namespace xpart {

namespace {

struct LogicalLine {
    unsigned line = 0;  // first physical line
    std::string text;
};

// Cuts the line at the first '#' not escaped by an odd run of backslashes.
void strip_comment(std::string& s) {
    unsigned backslashes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '#' && backslashes % 2 == 0) {
            s.resize(i);
            return;
        }
        backslashes = s[i] == '\\' ? backslashes + 1 : 0;
    }
}

// An odd run of trailing backslashes (spaces after it allowed) continues the line: drop the
// last backslash and what follows it, as Slurm's _strip_continuation does.
bool strip_continuation(std::string& s) {
    std::size_t end = s.size();
    while (end > 0 && std::isspace(static_cast<unsigned char>(s[end - 1]))) --end;
    std::size_t start = end;
    while (start > 0 && s[start - 1] == '\\') --start;
    if ((end - start) % 2 == 0) return false;
    s.resize(end - 1);
    return true;
}

std::string strip_escapes(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\') {
            if (++i == s.size()) break;
        }
        out += s[i];
    }
    return out;
}

std::vector<LogicalLine> logical_lines(std::string_view text) {
    std::vector<LogicalLine> out;
    std::string pending;
    unsigned first = 0;
    bool continued = false;
    unsigned number = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::string phys(text.substr(pos, nl == std::string_view::npos ? nl : nl - pos));
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++number;
        if (!phys.empty() && phys.back() == '\r') phys.pop_back();
        strip_comment(phys);
        if (!continued) first = number;
        continued = strip_continuation(phys);
        pending += phys;
        if (!continued) {
            out.push_back({first, strip_escapes(pending)});
            pending.clear();
        }
    }
    if (continued) out.push_back({first, strip_escapes(pending)});
    return out;
}

struct KeyValue {
    std::string key;    // as written
    std::string value;  // quotes removed
};

bool is_key_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

// Splits a logical line into Key=Value pairs. Error: the offending text and why.
Result<std::vector<KeyValue>> split_pairs(const std::string& s) {
    std::vector<KeyValue> pairs;
    std::size_t i = 0;
    auto skip_space = [&] {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    };
    for (;;) {
        skip_space();
        if (i == s.size()) return pairs;
        const std::size_t start = i;
        while (i < s.size() && is_key_char(s[i])) ++i;
        KeyValue kv{s.substr(start, i - start), {}};
        skip_space();
        if (kv.key.empty() || i == s.size() || s[i] != '=') {
            std::size_t stop = s.find_first_of(" \t", start);
            return Error{"\"" + s.substr(start, stop == std::string::npos ? stop : stop - start) +
                         "\": expected Key=Value"};
        }
        ++i;
        // Slurm allows blanks after '=' but then reads "Type= File=x" as Type="File=x"; we
        // call that what it almost surely is.
        const std::size_t after_equals = i;
        skip_space();
        const std::size_t token_end = s.find_first_of(" \t", i);
        const std::string token = s.substr(i, token_end == std::string::npos ? token_end : token_end - i);
        const std::size_t eq = token.find('=');
        if (i == s.size() ||
            (i > after_equals && eq != std::string::npos && eq > 0 &&
             std::all_of(token.begin(), token.begin() + static_cast<long>(eq), is_key_char)))
            return Error{kv.key + "=: empty value"};
        if (s[i] == '"') {
            std::size_t close = s.find('"', i + 1);
            if (close == std::string::npos)
                return Error{kv.key + "=" + s.substr(i) + ": unterminated quote"};
            kv.value = s.substr(i + 1, close - i - 1);
            i = close + 1;
            if (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])))
                return Error{kv.key + "=" + s.substr(start) + ": text after the closing quote"};
        } else {
            const std::size_t vstart = i;
            while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
            kv.value = s.substr(vstart, i - vstart);
        }
        pairs.push_back(std::move(kv));
    }
}

bool iequals(std::string_view a, std::string_view b) { return to_lower(a) == to_lower(b); }

// Count= with Slurm's suffix_mult(): k/kib/m/mib/... (1024) and kb/mb/... (1000).
std::optional<std::uint64_t> parse_count(const std::string& v) {
    std::size_t digits = 0;
    while (digits < v.size() && std::isdigit(static_cast<unsigned char>(v[digits]))) ++digits;
    auto n = parse_u64(v.substr(0, digits));
    if (!n) return std::nullopt;
    const std::string suffix = to_lower(v.substr(digits));
    static const char units[] = "kmgtp";
    std::uint64_t mult = 1;
    if (!suffix.empty()) {
        const char* u = suffix[0] ? std::strchr(units, suffix[0]) : nullptr;
        const std::string rest = suffix.substr(1);
        if (!u || !(rest.empty() || rest == "ib" || rest == "b")) return std::nullopt;
        const std::uint64_t base = rest == "b" ? 1000 : 1024;
        for (const char* p = units; p <= u; ++p) mult *= base;
    }
    if (*n > (std::numeric_limits<std::uint64_t>::max() - 1) / mult) return std::nullopt;
    const std::uint64_t count = *n * mult;
    if (count >= std::numeric_limits<std::uint64_t>::max() - 1) return std::nullopt;  // NO_VAL64
    return count;
}

const char* const kEnvFlags[] = {"nvidia_gpu_env", "amd_gpu_env", "intel_gpu_env",
                                 "opencl_env"};
const char* const kOtherFlags[] = {"CountOnly", "no_gpu_env", "one_sharing", "all_sharing"};

// Flags= tokens; Slurm matches substrings, we insist on known tokens.
std::optional<std::string> flags_problem(const std::string& value) {
    bool env = false, no_env = false;
    for (const std::string& raw : split(value, ',')) {
        const std::string token = trim(raw);
        bool known = false;
        for (const char* f : kEnvFlags)
            if (iequals(token, f)) known = env = true;
        for (const char* f : kOtherFlags)
            if (iequals(token, f)) known = true;
        if (iequals(token, "no_gpu_env")) no_env = true;
        if (!known)
            return "unknown flag '" + token +
                   "' (known: CountOnly, nvidia_gpu_env, amd_gpu_env, intel_gpu_env, "
                   "opencl_env, no_gpu_env, one_sharing, all_sharing)";
    }
    if (env && no_env) return std::string("no_gpu_env excludes the other *_env flags");
    return std::nullopt;
}

// Every value a supported series takes (22.05: nvml, rsmi, oneapi, off; 24.11 and 25.11 add
// nrt and nvidia; 26.05 full). xpart's plugin registers what its own discovery finds
// whichever is named (gres_node.hpp, autodetect_line).
constexpr const char* kAutoDetectValues = "full, nvml, rsmi, oneapi, nrt, nvidia or off";
bool valid_autodetect(const std::string& v) {
    for (const char* a : {"full", "nvml", "rsmi", "oneapi", "nrt", "nvidia", "off"})
        if (iequals(v, a)) return true;
    return false;
}

// GRES names whose count may differ from their files (Slurm's gres_id_shared()).
bool is_shared_gres(const std::string& name) { return iequals(name, "mps") || iequals(name, "shard"); }

class RecordParser {
public:
    RecordParser(const std::string& file, unsigned line) : file_(file), line_(line) {}

    Error error(const KeyValue& kv, const std::string& why) const {
        return file_error(file_, line_, kv.key + "=" + kv.value + ": " + why);
    }

    // Applies one option of a record; `seen` catches keys given twice (and their aliases).
    Status apply(const KeyValue& kv, GresConfRecord& r) {
        const std::string key = to_lower(kv.key);
        std::string canonical = key == "cpus" ? "cores" : key == "files" ? "file"
                                : key == "link" ? "links" : key;
        for (const std::string& s : seen_)
            if (s == canonical) return error(kv, "given twice in this record");
        seen_.push_back(canonical);
        if (key == "name") {
            r.name = kv.value;
        } else if (key == "type") {
            r.type = kv.value;
        } else if (key == "count") {
            auto n = parse_count(kv.value);
            if (!n) return error(kv, "not a count (digits with an optional k, m, g, t or p suffix)");
            r.count = *n;
        } else if (key == "cores" || key == "cpus") {
            std::string v = kv.value;
            if (v.size() >= 2 && v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
            auto cpus = parse_cpu_list(v);
            if (!cpus) return error(kv, cpus.error().message);
            r.cores = *cpus;
        } else if (key == "file" || key == "files" || key == "multiplefiles") {
            auto paths = expand_hostlist(kv.value);
            if (!paths) return error(kv, paths.error().message);
            for (const std::string& p : *paths)
                if (p.empty() || p.front() != '/') return error(kv, "'" + p + "' is not an absolute path");
            (key == "multiplefiles" ? r.multiple_files : r.files) = *paths;
            if (key == "multiplefiles" && paths->size() < 2)
                return error(kv, "names one file; use File= for a single file");
        } else if (key == "flags") {
            if (auto why = flags_problem(kv.value)) return error(kv, *why);
            r.flags = kv.value;
        } else if (key == "links" || key == "link") {
            r.links = kv.value;
        } else if (key == "autodetect") {
            if (r.node_names.empty()) return error(kv, "AutoDetect on a record needs NodeName=");
            if (!valid_autodetect(kv.value)) return error(kv, std::string("expected ") + kAutoDetectValues);
            r.autodetect = kv.value;
        } else if (key == "nodename") {
            return error(kv, "NodeName= must start the record");
        } else {
            return error(kv, "unknown key (gres.conf keys: AutoDetect, Count, Cores, CPUs, File, "
                             "Files, Flags, Links, MultipleFiles, Name, NodeName, Type)");
        }
        return ok_status();
    }

    // Cross-key rules Slurm enforces with fatal().
    Status finish(const std::vector<KeyValue>& pairs, GresConfRecord& r) const {
        auto find = [&](const char* k) -> const KeyValue* {
            for (const KeyValue& kv : pairs)
                if (iequals(kv.key, k)) return &kv;
            return nullptr;
        };
        const KeyValue* file = find("File");
        if (!file) file = find("Files");
        if (const KeyValue* multiple = find("MultipleFiles"); multiple && file)
            return error(*multiple, "File= and MultipleFiles= are mutually exclusive");
        if (const KeyValue* count = find("Count"); count && !is_shared_gres(r.name)) {
            if (!r.multiple_files.empty() && *r.count != 1)
                return error(*count, "a MultipleFiles= record is one GRES");
            if (!r.files.empty() && *r.count != r.files.size())
                return error(*count, "File= names " + std::to_string(r.files.size()) + " files");
        }
        return ok_status();
    }

private:
    const std::string& file_;
    unsigned line_;
    std::vector<std::string> seen_;
};

// A whole list expands to at most this many names; checked before each product is built, so
// a short list cannot make gigabytes of names first ("a[0-9999][0-9999]", fuzzing).
constexpr std::size_t kMaxHostlistNames = 65536;

// Expands one hostlist item ("n[1-2]x[a]" is rejected, "n[01-02]-[1,3]" is fine), appending
// to `out` (the list so far).

Status expand_item(const std::string& item, std::vector<std::string>& out) {
    const auto too_many = [&] {
        return Error{"'" + item + "' expands to more than " + std::to_string(kMaxHostlistNames) + " names"};
    };
    std::vector<std::string> names{""};
    std::size_t i = 0;
    while (i < item.size()) {
        if (item[i] == ']') return Error{"unbalanced ']' in '" + item + "'"};
        if (item[i] != '[') {
            for (std::string& n : names) n += item[i];
            ++i;
            continue;
        }
        const std::size_t close = item.find(']', i);
        if (close == std::string::npos) return Error{"unbalanced '[' in '" + item + "'"};
        const std::string body = item.substr(i + 1, close - i - 1);
        if (body.find('[') != std::string::npos) return Error{"nested '[' in '" + item + "'"};
        std::vector<std::string> values;
        for (const std::string& range : split(body, ',')) {
            const std::size_t dash = range.find('-');
            const std::string lo = range.substr(0, dash);
            const std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
            auto l = parse_u64(lo);
            auto h = parse_u64(hi);
            if (!l || !h || *h < *l) return Error{"bad range '" + range + "' in '" + item + "'"};
            if (*h - *l >= kMaxHostlistNames) return Error{"range '" + range + "' is too large"};
            if (values.size() + (*h - *l) >= kMaxHostlistNames) return too_many();
            const std::size_t width = lo.size() > 1 && lo[0] == '0' ? lo.size() : 0;
            // Stops at *h itself: `v <= *h` never fails when *h is the largest uint64.
            for (std::uint64_t v = *l;; ++v) {
                std::string s = std::to_string(v);
                if (s.size() < width) s.insert(0, width - s.size(), '0');
                values.push_back(std::move(s));
                if (v == *h) break;
            }
        }
        if (names.size() * values.size() > kMaxHostlistNames) return too_many();
        std::vector<std::string> next;
        for (const std::string& n : names)
            for (const std::string& v : values) next.push_back(n + v);
        names = std::move(next);
        i = close + 1;
    }
    if (out.size() + names.size() > kMaxHostlistNames) return too_many();
    out.insert(out.end(), names.begin(), names.end());
    return ok_status();
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view list) {
    std::vector<std::string> out;
    std::string item;
    int depth = 0;
    auto flush = [&]() -> Status {
        const std::string t = trim(item);
        item.clear();
        if (t.empty()) return Error{"empty entry in '" + std::string(list) + "'"};
        return expand_item(t, out);
    };
    for (char c : list) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (c == ',' && depth == 0) {
            if (auto st = flush(); !st) return st.error();
            continue;
        }
        item += c;
    }
    if (auto st = flush(); !st) return st.error();
    return out;
}

std::uint64_t GresConfRecord::effective_count() const {
    if (count) return *count;
    if (!files.empty()) return files.size();
    return 1;
}

Result<GresConf> parse_gres_conf(std::string_view text, const std::string& file) {
    GresConf conf;
    for (const LogicalLine& logical : logical_lines(text)) {
        auto pairs = split_pairs(logical.text);
        if (!pairs) return file_error(file, logical.line, pairs.error().message);
        std::vector<KeyValue>& kvs = *pairs;
        if (kvs.empty()) continue;
        RecordParser parser(file, logical.line);
        std::size_t at = 0;
        // A leading AutoDetect= is the global one (Slurm's top-level table).
        if (iequals(kvs[0].key, "AutoDetect")) {
            if (!valid_autodetect(kvs[0].value))
                return parser.error(kvs[0], std::string("expected ") + kAutoDetectValues);
            conf.autodetect = kvs[0].value;
            if (++at == kvs.size()) continue;
        }
        const KeyValue& head = kvs[at];
        GresConfRecord record;
        record.file = file;
        record.line = logical.line;
        if (iequals(head.key, "NodeName")) {
            auto names = expand_hostlist(head.value);
            if (!names) return parser.error(head, names.error().message);
            record.node_names = *names;
            ++at;
        } else if (!iequals(head.key, "Name")) {
            return parser.error(head, iequals(head.key, "Include")
                                          ? "Include is not supported by this reader"
                                          : "a record starts with Name= or NodeName=");
        }
        const std::vector<KeyValue> options(kvs.begin() + static_cast<long>(at), kvs.end());
        for (const KeyValue& kv : options)
            if (auto st = parser.apply(kv, record); !st) return st.error();
        if (record.name.empty() && record.autodetect.empty())
            return parser.error(head, "no Name= in this record");
        if (auto st = parser.finish(options, record); !st) return st.error();
        conf.records.push_back(std::move(record));
    }
    return conf;
}

Result<GresConf> read_gres_conf(const RootFs& root, const std::string& node_path) {
    auto text = root.read(node_path);
    if (!text) return text.error();
    return parse_gres_conf(*text, node_path);
}

std::vector<GresConfRecord> records_for_node(const GresConf& conf, const std::string& node_name) {
    std::vector<GresConfRecord> out;
    for (const GresConfRecord& r : conf.records) {
        bool mine = r.node_names.empty();
        for (const std::string& n : r.node_names) mine = mine || n == node_name;
        if (mine) out.push_back(r);
    }
    return out;
}

}  // namespace xpart
