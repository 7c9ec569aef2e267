/* The Slurm internals the gres/gpu adapter uses, from the source tree of the installed
 * version (configure checks they match). C and C++ both include this. One build serves one
 * Slurm series; XPART_SLURM_PREP_API (the prep_* entry points and src/interfaces/, 24.11 and
 * later) tells 22.05 from the rest where they differ, XPART_SLURM_SERIES names the series. */
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

/* The series with an adapter: 24.11 (Debian 13), SchedMD's 25.11 and 26.05, whose plugin
 * interface is 24.11's (slurm_gres_ops_t and syms[] in src/interfaces/gres.c are the same in
 * 24.11.5, 25.11.7 and 26.05.3); and 22.05 (Debian 12). */
#define XPART_SLURM_IN(major, minor)                               \
    (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0) && \
     SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(major, minor + 1, 0))
#if XPART_SLURM_IN(24, 11)
#define XPART_SLURM_SERIES S24_11
#elif XPART_SLURM_IN(25, 11)
#define XPART_SLURM_SERIES S25_11
#elif XPART_SLURM_IN(26, 5)
#define XPART_SLURM_SERIES S26_05
#elif XPART_SLURM_IN(22, 5)
#define XPART_SLURM_SERIES S22_05
#else
#error "xpart's gres/gpu supports Slurm 22.05, 24.11, 25.11 and 26.05 only"
#endif

#if !XPART_SLURM_IN(22, 5)
#define XPART_SLURM_PREP_API 1
#ifdef __cplusplus
/* gres.h (24.11 on) pulls in slurmctld's headers: slurmstepd_job.h defines _GNU_SOURCE bare
 * (g++ predefines it as 1) and extra_constraints.h names a struct member `operator`, a C++
 * keyword. Spell that member otherwise here; we never touch it. */
#undef _GNU_SOURCE
#define operator operator_
#endif
#include "src/interfaces/gres.h"
#ifdef __cplusplus
#undef operator
#endif
#else
#define XPART_SLURM_PREP_API 0
#include "src/common/gres.h"
#include "src/plugins/gres/common/gres_common.h"
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
