#include "libxpart/node_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "libxpart/gres_record.hpp"
#include "libxpart/node_json.hpp"
#include "libxpart/node_json_writer.hpp"

namespace xpart {
namespace {

Error sys_error(const std::string& path, const char* what) {
    return Error{path + ": " + what + ": " + std::strerror(errno)};
}

// mkdir -p for the cache's directories below the root (the root itself must exist).
Status make_dirs(const std::string& host_dir, std::size_t keep) {
    for (std::size_t at = host_dir.find('/', keep + 1);; at = host_dir.find('/', at + 1)) {
        const std::string dir = host_dir.substr(0, at);
        // Made readable for every launcher whatever slurmd's umask is.
        if (mkdir(dir.c_str(), 0755) == 0) {
            if (chmod(dir.c_str(), 0755) != 0) return sys_error(dir, "chmod");
        } else if (errno != EEXIST) {
            return sys_error(dir, "mkdir");
        }
        if (at == std::string::npos) return ok_status();
    }
}

// True when the file at `path` holds exactly `text`. One read() of one byte more than `text`:
// a regular file returns short only at its end, so a file that equals `text` comes back whole
// and a longer one shows itself by the extra byte.
bool holds_exactly(const std::string& path, const std::string& text) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string old(text.size() + 1, '\0');
    ssize_t n;
    do n = read(fd, old.data(), old.size());
    while (n < 0 && errno == EINTR);
    close(fd);
    return n == static_cast<ssize_t>(text.size()) && old.compare(0, text.size(), text) == 0;
}

// "gres_records": [[gpu, partition], ...], each naming a partition of the node.
Result<std::vector<PartitionPlace>> records_from_json(const Node& node, const nlohmann::json& j) {
    const auto records = j.find("gres_records");
    if (records == j.end() || !records->is_array()) return Error{"no gres_records list"};
    std::vector<PartitionPlace> out;
    for (const nlohmann::json& r : *records) {
        if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() ||
            !r[1].is_number_unsigned())
            return Error{"gres_records: " + r.dump() + " is not [gpu, partition]"};
        const PartitionPlace place{r[0].get<std::size_t>(), r[1].get<std::size_t>()};
        if (place.gpu >= node.gpus.size() ||
            place.partition >= node.gpus[place.gpu].partitions.size())
            return Error{"gres_records: " + r.dump() + " names no partition of the node"};
        out.push_back(place);
    }
    return out;
}

}  // namespace

Status write_node_cache(const RootFs& root, const Node& node) {
    const std::string path = root.host_path(kNodeCachePath);
    std::string text = node_cache_text(node, kNodeCacheFormat, registered_record_order(node));
    text += '\n';
    // slurmd restarts and `slurmd -G` mostly find the node as they left it: leave the file
    // (and its inode and mtime) alone then, no temporary file, no rename.
    if (holds_exactly(path, text)) return ok_status();
    const std::string dir = path.substr(0, path.rfind('/'));
    const std::size_t root_len = root.is_real_root() ? 0 : root.root().size();
    if (auto s = make_dirs(dir, root_len); !s) return s;
    std::string tmp = path + ".XXXXXX";
    int fd = mkstemp(tmp.data());
    if (fd < 0) return sys_error(tmp, "create");
    std::optional<Error> failure;
    if (fchmod(fd, 0644) != 0) failure = sys_error(tmp, "chmod");
    else if (write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        failure = sys_error(tmp, "write");
    if (close(fd) != 0 && !failure) failure = sys_error(tmp, "close");
    if (!failure && rename(tmp.c_str(), path.c_str()) != 0) failure = sys_error(path, "rename");
    if (!failure) return ok_status();
    unlink(tmp.c_str());
    return *failure;
}

Status remove_node_cache(const RootFs& root) {
    const std::string path = root.host_path(kNodeCachePath);
    if (unlink(path.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) return sys_error(path, "unlink");
    return ok_status();
}

Result<Node> read_node_cache(const RootFs& root, CacheMiss* miss) {
    if (miss) *miss = CacheMiss::Unavailable;
    auto text = root.read(kNodeCachePath);
    if (!text) return text.error();
    const std::string path = root.host_path(kNodeCachePath);
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error{path + ": not valid JSON"};
    const auto format = j.is_object() ? j.find("format") : j.end();
    if (format == j.end() || *format != kNodeCacheFormat) {
        if (miss) *miss = CacheMiss::OtherFormat;
        const std::string theirs = format == j.end() ? std::string("(none: an earlier xpart)")
                                                     : format->dump();
        return Error{path + ": node cache format " + theirs + ", this xpart reads format " +
                     std::to_string(kNodeCacheFormat) +
                     ": restart slurmd so it rewrites the cache"};
    }
    auto node = node_from_json(j);
    if (!node) return Error{path + ": " + node.error().message};
    auto records = records_from_json(*node, j);
    if (!records) return Error{path + ": " + records.error().message};
    node->gres_records = std::move(*records);
    return node;
}

}  // namespace xpart
