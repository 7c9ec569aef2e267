#include "libxpart/node_json_writer.hpp"

#include <charconv>
#include <string_view>

#include "libxpart/text.hpp"

namespace xpart {
namespace {

// Appends JSON values to a string, putting the commas between members and elements. Callers
// give object keys in alphabetical order: nlohmann's default object is a std::map, and the
// cache must stay byte-identical to what to_json(node).dump() wrote (tests compare the two).
class JsonOut {
public:
    explicit JsonOut(std::string& out) : out_(out) {}

    void open(char bracket) { separate(); out_ += bracket; comma_ = false; }
    void close(char bracket) { out_ += bracket; comma_ = true; }
    // Keys are this file's own literals, with nothing to escape.
    JsonOut& key(std::string_view k) {
        separate();
        out_ += '"';
        out_ += k;
        out_ += "\":";
        comma_ = false;
        return *this;
    }
    void str(std::string_view s) { separate(); quoted(s); comma_ = true; }
    void boolean(bool b) { separate(); out_ += b ? "true" : "false"; comma_ = true; }
    template <typename Int> void num(Int v) {
        separate();
        char buf[24];
        out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
        comma_ = true;
    }
    // The model's "not applicable" ids (-1) are JSON null.
    void id(int v) {
        if (v >= 0) return num(v);
        separate();
        out_ += "null";
        comma_ = true;
    }
    void strings(const std::vector<std::string>& v) {
        open('[');
        for (const std::string& s : v) str(s);
        close(']');
    }

private:
    void separate() {
        if (comma_) out_ += ',';
    }
    // Runs of plain bytes are appended whole; only the characters JSON requires are escaped.
    void quoted(std::string_view s) {
        static constexpr char kHex[] = "0123456789abcdef";
        out_ += '"';
        std::size_t run = 0;
        for (std::size_t i = 0; i < s.size(); ++i) {
            const auto c = static_cast<unsigned char>(s[i]);
            if (c >= 0x20 && c != '"' && c != '\\') continue;
            out_.append(s, run, i - run);
            run = i + 1;
            out_ += '\\';
            switch (c) {
                case '"': out_ += '"'; break;
                case '\\': out_ += '\\'; break;
                case '\b': out_ += 'b'; break;
                case '\f': out_ += 'f'; break;
                case '\n': out_ += 'n'; break;
                case '\r': out_ += 'r'; break;
                case '\t': out_ += 't'; break;
                default: out_ += "u00"; out_ += kHex[c >> 4]; out_ += kHex[c & 0xf];
            }
        }
        out_.append(s, run, s.size() - run);
        out_ += '"';
    }

    std::string& out_;
    bool comma_ = false;
};

void write_files(JsonOut& j, const std::vector<DeviceFile>& files) {
    j.open('[');
    for (const DeviceFile& f : files) {
        j.open('{');
        j.key("major").num(f.major);
        j.key("minor").num(f.minor);
        j.key("path").str(f.path);
        j.key("shared").boolean(f.shared);
        j.close('}');
    }
    j.close(']');
}

void write_partition(JsonOut& j, const Partition& p) {
    j.open('{');
    j.key("ci").id(p.ci);
    j.key("compute_units").num(p.compute_units);
    j.key("device_files");
    write_files(j, p.device_files);
    j.key("gi").id(p.gi);
    j.key("index").id(p.index);
    j.key("kfd_node").id(p.kfd_node);
    j.key("memory_mb").num(p.memory_mb);
    j.key("type").str(p.type);
    j.key("uuid").str(p.uuid);
    j.close('}');
}

void write_gpu(JsonOut& j, const Gpu& g) {
    j.open('{');
    j.key("cpus").str(format_cpu_list(g.cpus));
    j.key("index").num(g.index);
    j.key("memory_mb").num(g.memory_mb);
    j.key("memory_mode").str(g.memory_mode);
    j.key("minor").id(g.minor);
    j.key("mode").str(to_string(g.mode));
    j.key("model").str(g.model);
    if (!g.nics.empty()) {
        j.key("nics").open('[');
        for (const NicRoute& r : g.nics) {
            j.open('{');
            j.key("nic").str(r.nic);
            j.key("path").str(to_string(r.path));
            j.key("port").num(r.port);
            j.close('}');
        }
        j.close(']');
    }
    j.key("numa_node").id(g.numa_node);
    j.key("partitions").open('[');
    for (const Partition& p : g.partitions) write_partition(j, p);
    j.close(']');
    j.key("pci_bus_id").str(g.pci_bus_id);
    j.key("uuid").str(g.uuid);
    j.key("vendor").str(to_string(g.vendor));
    if (!g.withheld_files.empty()) {
        j.key("withheld_device_files");
        write_files(j, g.withheld_files);
    }
    j.close('}');
}

void write_nic(JsonOut& j, const RdmaNic& n) {
    j.open('{');
    j.key("name").str(n.name);
    j.key("numa_node").id(n.numa_node);
    j.key("pci_bus_id").str(n.pci_bus_id);
    j.key("ports").open('[');
    for (const RdmaPort& p : n.ports) {
        j.open('{');
        j.key("link_layer").str(p.link_layer);
        j.key("port").num(p.number);
        j.key("state").str(p.state);
        j.close('}');
    }
    j.close(']');
    j.close('}');
}

// The members node_json_text and node_cache_text share; `cache` adds the cache's own.
struct CacheMembers {
    int format;
    const std::vector<PartitionPlace>& records;
};

std::string node_text(const Node& node, const CacheMembers* cache) {
    std::string out;
    out.reserve(1024 + 512 * node.partition_count());  // about what a partition takes
    JsonOut j(out);
    j.open('{');
    if (!node.errors.empty()) j.key("errors").strings(node.errors);
    if (cache) j.key("format").num(cache->format);
    j.key("gpus").open('[');
    for (const Gpu& g : node.gpus) write_gpu(j, g);
    j.close(']');
    if (cache) {
        j.key("gres_records").open('[');
        for (const PartitionPlace& p : cache->records) {
            j.open('[');
            j.num(p.gpu);
            j.num(p.partition);
            j.close(']');
        }
        j.close(']');
    }
    if (!node.nics.empty()) {
        j.key("nics").open('[');
        for (const RdmaNic& n : node.nics) write_nic(j, n);
        j.close(']');
    }
    j.key("warnings").strings(node.warnings);
    j.close('}');
    return out;
}

}  // namespace

std::string node_json_text(const Node& node) { return node_text(node, nullptr); }

std::string node_cache_text(const Node& node, int format,
                            const std::vector<PartitionPlace>& records) {
    const CacheMembers cache{format, records};
    return node_text(node, &cache);
}

}  // namespace xpart
