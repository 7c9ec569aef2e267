// The front's side of spank_plugin/step_module.h: xpart_spank_step.so from the front's own
// directory, loaded once per process and kept (slurmstepd calls it until the step ends).
#pragma once

#include "libxpart/result.hpp"
#include "spank_plugin/step_module.h"

namespace xpart::spank {

// The module's table. Error (one line naming the file): it cannot be loaded, it is not
// xpart's, or it is from another build.
Result<const xpart_step_module*> step_module();

}  // namespace xpart::spank
