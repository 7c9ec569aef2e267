/* The Slurm internals the gres/gpu adapter uses, from the source tree of the installed
 * version (configure checks they match). C and C++ both include this. One build serves one
 * Slurm series; XPART_SLURM_24_11 tells the series apart where the two differ. */
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

#include "slurm/slurm_version.h"

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0) && \
    SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 12, 0)
#define XPART_SLURM_24_11 1
#ifdef __cplusplus
/* 24.11's gres.h pulls in slurmctld's headers: slurmstepd_job.h defines _GNU_SOURCE bare
 * (g++ predefines it as 1) and extra_constraints.h names a struct member `operator`, a C++
 * keyword. Spell that member otherwise here; we never touch it. */
#undef _GNU_SOURCE
#define operator operator_
#endif
#include "src/interfaces/gres.h"
#ifdef __cplusplus
#undef operator
#endif
#elif SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0) && \
    SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(22, 6, 0)
#define XPART_SLURM_24_11 0
#include "src/common/gres.h"
#include "src/plugins/gres/common/gres_common.h"
#else
#error "xpart's gres/gpu supports Slurm 22.05 and 24.11 only"
#endif

#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#pragma GCC diagnostic pop

#ifdef __cplusplus
}
#endif

#endif
