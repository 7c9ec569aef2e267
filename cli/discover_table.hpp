// The people-facing forms of `xpart discover`: the default table and pasteable gres.conf.
#pragma once

#include <string>

#include "libxpart/node.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart::cli {

// One line per GPU, then its partitions indented (index, type, uuid, gi/ci or XCP index,
// memory, device files), columns aligned across the whole node; shared device files and
// warnings (pending MIG changes, ...) follow.
std::string render_node_table(const Node& node);

// gres.conf lines, one per partition, with `#` comments naming each GPU and every warning.
std::string render_gres_conf(const Node& node, const RootFs& root);

}  // namespace xpart::cli
