// The user's own directories of MPS (a rank's step directory, its members): made or accepted
// only as the caller's and closed to others, since /tmp paths can be pre-planted.
#pragma once

#include <sys/types.h>

#include <string>

#include "libxpart/result.hpp"

namespace xpart::mps {

// Where ranks without a Prolog-made job directory keep theirs: /tmp/xpart-mps-<uid>. The
// user's own: root never reads it.
std::string user_runtime_base(uid_t uid);
// Creates `dir` (0700, the caller's) or accepts an existing one only if it is a real
// directory (not a link) of the caller's, closed to others.
Status make_private_dir(const std::string& dir);
// "0711": a mode as admins write it, in messages.
std::string mode_text(mode_t mode);

}  // namespace xpart::mps
