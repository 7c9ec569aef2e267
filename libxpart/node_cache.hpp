// The node as the gres plugin found it at slurmd start, kept for `xpart launch` and
// `xpart mps`. Without it every rank discovers the node again: on a real node that means
// loading NVML and initialising it in each rank, the largest part of a launch. The plugin's
// view is also the one the job was bound against; a launcher that meets a partition the cache
// does not know discovers the node itself.
#pragma once

#include <string_view>

#include "libxpart/defaults.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// A node path, under the node's root prefix like every other path. /run is a tmpfs, so a
// reboot (and with it any MIG or partition change it brought) drops the cache.
inline constexpr std::string_view kNodeCachePath = defaults::kNodeCache;

// The cache's layout version, its top-level "format": `xpart discover --json`'s node members
// plus "gres_records", the record -> partition places slurmd registered. Raised whenever a
// reader of the old layout would misread the new one.
inline constexpr int kNodeCacheFormat = 1;

// Why read_node_cache failed: no usable cache (readers may discover the node), or one in
// another format (every reader refuses: its records are not this xpart's to interpret).
enum class CacheMiss { Unavailable, OtherFormat };

// Writes the cache atomically (a temporary file renamed over it), mode 0644, making its
// directory (0755) when needed; a file that already holds exactly this text is left as it is.
// The text is node_cache_text(node, kNodeCacheFormat, registered_record_order(node)) and a
// newline. Error: "<host path>: <what failed>: <strerror>".
Status write_node_cache(const RootFs& root, const Node& node);
// Removes it: a failed discovery must not leave the facts of an earlier one behind.
Status remove_node_cache(const RootFs& root);
// Error when missing, unreadable, not JSON or not a node ("<host path>: <why>"); `miss` (when
// given) says which kind. A cache in another format, or without one (an earlier xpart wrote
// it), is refused in one line: "<host path>: node cache format 2, this xpart reads format 1:
// restart slurmd so it rewrites the cache". The node's gres_records are the file's.
Result<Node> read_node_cache(const RootFs& root, CacheMiss* miss = nullptr);

}  // namespace xpart
