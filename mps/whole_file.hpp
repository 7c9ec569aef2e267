// Small state files read and written whole, never through a link: relative to a directory
// descriptor (root's job directory) or AT_FDCWD with a full path (a user's own directory).
// A write goes to "<name>.new" first and is renamed over, so a reader sees old or new.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "libxpart/result.hpp"

namespace xpart::mps {

// nullopt when the file does not exist. `shown`: the path in error messages.
Result<std::optional<std::string>> read_whole_file(int dir_fd, const std::string& name,
                                                   const std::string& shown);
Status write_whole_file(int dir_fd, const std::string& name, const std::string& content,
                        mode_t mode, const std::string& shown);

}  // namespace xpart::mps
