# XPART_CHECK_SLURM: find the installed Slurm and a source tree of exactly that version.
# Sets build_gres_plugin, SLURM_SERIES (22.05|24.11), SLURM_GRES_C, SLURM_SOURCE, SLURM_BUILD,
# SLURM_PLUGINDIR, SLURM_VERSION_STRING, SLURM_CPPFLAGS, and the automake conditionals BUILD_GRES_PLUGIN and BUILD_SPANK_PLUGIN.
AC_DEFUN([XPART_CHECK_SLURM], [
  AC_ARG_WITH([slurm-source],
    [AS_HELP_STRING([--with-slurm-source=DIR],
      [Slurm source tree of the installed version (internal headers); configured if needed])],
    [SLURM_SOURCE="$withval"], [SLURM_SOURCE=""])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where make install puts gres_gpu.so
      (default: LIBDIR/xpart/slurm, to be listed first in PluginDir)])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/xpart/slurm'])
  AC_ARG_WITH([slurm-includedir],
    [AS_HELP_STRING([--with-slurm-includedir=DIR], [installed Slurm headers (default /usr/include)])],
    [SLURM_INCLUDEDIR="$withval"], [SLURM_INCLUDEDIR=/usr/include])

  build_gres_plugin=no
  SLURM_VERSION_STRING=none
  installed_ver=""
  AS_IF([test -r "$SLURM_INCLUDEDIR/slurm/slurm_version.h"], [
    installed_ver=`sed -n 's/^#define SLURM_VERSION_NUMBER  *//p' "$SLURM_INCLUDEDIR/slurm/slurm_version.h"`
  ])
  AS_IF([test -n "$SLURM_SOURCE"], [
    AS_IF([test -z "$installed_ver"],
      [AC_MSG_ERROR([--with-slurm-source given but $SLURM_INCLUDEDIR/slurm/slurm_version.h is missing (install libslurm-dev)])])
    AS_IF([test ! -r "$SLURM_SOURCE/src/common/slurm_xlator.h"],
      [AC_MSG_ERROR([$SLURM_SOURCE is not a Slurm source tree (no src/common/slurm_xlator.h)])])
    SLURM_SOURCE=`cd "$SLURM_SOURCE" && pwd`
    AS_IF([test ! -r "$SLURM_SOURCE/config.h"], [
      AC_MSG_NOTICE([configuring the Slurm source tree $SLURM_SOURCE (config.h missing)])
      (cd "$SLURM_SOURCE" && ./configure --disable-debug --without-rpath >config.xpart.log 2>&1) ||
        AC_MSG_ERROR([configuring $SLURM_SOURCE failed: see $SLURM_SOURCE/config.xpart.log])
    ])
    source_ver=`sed -n 's/^#define SLURM_VERSION_NUMBER  *//p' "$SLURM_SOURCE/slurm/slurm_version.h"`
    AS_IF([test "x$source_ver" != "x$installed_ver"],
      [AC_MSG_ERROR([Slurm version mismatch: installed headers say $installed_ver, source tree $SLURM_SOURCE says $source_ver; use the source of the installed version (apt-get source slurm-wlm)])])
    dnl 0x160508 -> 22.05.8, the form slurmd -V prints
    SLURM_VERSION_STRING=`printf '%d.%02d.%d' $(( source_ver >> 16 & 255 )) $(( source_ver >> 8 & 255 )) $(( source_ver & 255 ))`
    AS_IF([command -v slurmd >/dev/null 2>&1], [
      daemon_ver=`slurmd -V 2>/dev/null | awk '{print $NF}'`
      AS_IF([test -n "$daemon_ver" && test "x$daemon_ver" != "x$SLURM_VERSION_STRING"],
        [AC_MSG_ERROR([Slurm version mismatch: slurmd -V says $daemon_ver, the source tree $SLURM_SOURCE is $SLURM_VERSION_STRING])])
    ])
    dnl One adapter per supported series; its gres.c holds the ops table the tests pin.
    AS_CASE([$SLURM_VERSION_STRING],
      [22.05.*], [SLURM_SERIES=22.05; SLURM_GRES_C=$SLURM_SOURCE/src/common/gres.c],
      [24.11.*], [SLURM_SERIES=24.11; SLURM_GRES_C=$SLURM_SOURCE/src/interfaces/gres.c],
      [AC_MSG_ERROR([Slurm $SLURM_VERSION_STRING is not supported: xpart's gres/gpu has adapters for Slurm 22.05 and 24.11])])
    AC_MSG_NOTICE([gres/gpu adapter: Slurm $SLURM_SERIES ($SLURM_VERSION_STRING)])
    SLURM_CPPFLAGS="-DHAVE_CONFIG_H -I$SLURM_SOURCE -I$SLURM_SOURCE/src/common"
    build_gres_plugin=yes
  ])
  # The SPANK plugin needs only the public spank.h of the installed Slurm.
  build_spank_plugin=no
  AS_IF([test -n "$installed_ver" && test -r "$SLURM_INCLUDEDIR/slurm/spank.h"], [build_spank_plugin=yes])
  AM_CONDITIONAL([BUILD_SPANK_PLUGIN], [test "x$build_spank_plugin" = xyes])
  AS_IF([test "x$SLURM_INCLUDEDIR" != x/usr/include], [SLURM_SPANK_CPPFLAGS="-I$SLURM_INCLUDEDIR"])
  AC_SUBST([SLURM_SPANK_CPPFLAGS])
  # Debian's own plugins (stock gres_gpu.so, libslurmfull.so): the integration tests and the
  # benchmark compare against them and list them after ours in PluginDir.
  SLURM_STOCK_PLUGINDIR=""
  for d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm /usr/lib64/slurm /usr/lib/slurm; do
    AS_IF([test -z "$SLURM_STOCK_PLUGINDIR" && test -r "$d/gres_gpu.so"], [SLURM_STOCK_PLUGINDIR=$d])
  done
  AC_SUBST([SLURM_STOCK_PLUGINDIR])
  AM_CONDITIONAL([BUILD_GRES_PLUGIN], [test "x$build_gres_plugin" = xyes])
  AM_CONDITIONAL([SLURM_24_11], [test "x$SLURM_SERIES" = x24.11])
  AC_SUBST([SLURM_SERIES])
  AC_SUBST([SLURM_GRES_C])
  AC_SUBST([SLURM_SOURCE])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_VERSION_STRING])
])
