// KFD topology (/sys/class/kfd/kfd/topology/nodes/N): the `properties` files of nodes, memory
// banks and io_links. Every value is a decimal number; anything else is an error naming the
// file and line, because a misread topology would bind jobs to the wrong devices.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

constexpr const char* kKfdTopology = "/sys/class/kfd/kfd/topology";

class KfdProperties {
public:
    // `key value` lines; blank lines skipped.
    static Result<KfdProperties> parse(const std::string& text, const std::string& file);

    std::optional<std::uint64_t> find(const std::string& key) const;
    std::uint64_t get_or(const std::string& key, std::uint64_t dflt) const;
    const std::string& file() const { return file_; }

private:
    std::vector<std::pair<std::string, std::uint64_t>> values_;  // file order
    std::string file_;
};

// io_link types (kfd_crat.h): 2 = PCIe (GPU <-> its CPU node), 11 = XGMI.
constexpr std::uint64_t kIoLinkPcie = 2;
constexpr std::uint64_t kIoLinkXgmi = 11;

struct KfdNode {
    unsigned id = 0;
    KfdProperties props;
    bool gpu = false;  // simd_count > 0, and gpu_id (when the file exists) non-zero
    bool is_gpu() const { return gpu; }
};

// Reads nodes/N/properties of every node, ordered by N numerically. `nodes_dir` is the node
// path of the nodes directory. A node directory whose name is not a number is an error.
Result<std::vector<KfdNode>> read_kfd_nodes(const RootFs& root, const std::string& nodes_dir);

// Sum of size_in_bytes over mem_banks/0..count-1 of a node, in MiB; 0 when the files are absent
// (some captures record mem_banks_count without the directories).
Result<std::uint64_t> read_kfd_memory_mb(const RootFs& root, const std::string& node_dir,
                                         std::uint64_t mem_banks_count);

// The node id of the CPU node this GPU node links to by PCIe (io_link type 2 to a non-GPU node),
// or nullopt. Reads io_links/0 first (where the kernel puts it) and scans the rest only if that
// one is not it.
Result<std::optional<unsigned>> read_kfd_cpu_link(const RootFs& root, const std::string& node_dir,
                                                  const std::vector<KfdNode>& nodes);

}  // namespace xpart
