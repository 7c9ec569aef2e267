/* The Slurm internals the gres/gpu adapter uses, from the source tree of the installed
 * version (configure checks they match). C and C++ both include this. */
#ifndef XPART_GRES_PLUGIN_SLURM_API_H
#define XPART_GRES_PLUGIN_SLURM_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* Slurm's headers are not written for C++ warning levels; ours stay strict. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* First: it renames the functions plugins call to the slurm_* names libslurmfull exports,
 * which must happen before any prototype is seen. */
#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/gres.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/plugins/gres/common/gres_common.h"

#pragma GCC diagnostic pop

#ifdef __cplusplus
}
#endif

#endif
