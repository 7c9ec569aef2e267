# XPART_CHECK_SLURM: find the installed Slurm and a source tree of exactly that version.
# Sets build_gres_plugin, SLURM_SERIES (22.05|24.11|25.11|26.05), SLURM_GRES_C, SLURM_SOURCE,
# SLURM_PLUGINDIR, SLURM_VERSION_STRING, SLURM_CPPFLAGS, SLURM_STOCK_PLUGINDIR, and the automake
# conditionals BUILD_GRES_PLUGIN, BUILD_SPANK_PLUGIN and SLURM_PREP_API (24.11's plugin
# interface, which 25.11 and 26.05 keep).
# Debian's Slurm is found in the system's places. A Slurm built from SchedMD's release is named
# by its install (--with-slurm-prefix): its headers, its slurmd and its own plugins are there.
AC_DEFUN([XPART_CHECK_SLURM], [
  AC_ARG_WITH([slurm-source],
    [AS_HELP_STRING([--with-slurm-source=DIR],
      [Slurm source tree of the installed version (internal headers); configured if needed])],
    [SLURM_SOURCE="$withval"], [SLURM_SOURCE=""])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR], [where make install puts gres_gpu.so
      (default: LIBDIR/xpart/slurm, to be listed first in PluginDir)])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR='${libdir}/xpart/slurm'])
  AC_ARG_WITH([slurm-prefix],
    [AS_HELP_STRING([--with-slurm-prefix=DIR], [a Slurm installed from SchedMD's release
      (its make install prefix): headers in DIR/include, slurmd in DIR/sbin, plugins in
      DIR/lib/slurm (default: Debian's, in the system's places)])],
    [SLURM_PREFIX="$withval"], [SLURM_PREFIX=""])
  AC_ARG_WITH([slurm-includedir],
    [AS_HELP_STRING([--with-slurm-includedir=DIR], [installed Slurm headers (default
      /usr/include, or PREFIX/include with --with-slurm-prefix)])],
    [SLURM_INCLUDEDIR="$withval"], [SLURM_INCLUDEDIR=${SLURM_PREFIX:+$SLURM_PREFIX/include}])
  AS_IF([test -z "$SLURM_INCLUDEDIR"], [SLURM_INCLUDEDIR=/usr/include])
  AS_IF([test -n "$SLURM_PREFIX"], [
    AS_IF([test ! -x "$SLURM_PREFIX/sbin/slurmd"],
      [AC_MSG_ERROR([--with-slurm-prefix=$SLURM_PREFIX: no sbin/slurmd there (the prefix of Slurm's make install)])])
    SLURM_SLURMD=$SLURM_PREFIX/sbin/slurmd
  ], [SLURM_SLURMD=`command -v slurmd 2>/dev/null`])

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
    dnl 0x160508 -> 22.05.8, the form slurmd -V prints
    SLURM_VERSION_STRING=`printf '%d.%02d.%d' $(( source_ver >> 16 & 255 )) $(( source_ver >> 8 & 255 )) $(( source_ver & 255 ))`
    dnl The series first (its line names the tree), then the install it must match.
    dnl One adapter per plugin interface; the tree's gres.c holds the ops table the tests pin.
    AS_CASE([$SLURM_VERSION_STRING],
      [22.05.*], [SLURM_SERIES=22.05; SLURM_GRES_C=$SLURM_SOURCE/src/common/gres.c],
      [24.11.*|25.11.*|26.05.*],
        [SLURM_SERIES=`echo "$SLURM_VERSION_STRING" | cut -d. -f1,2`
         SLURM_GRES_C=$SLURM_SOURCE/src/interfaces/gres.c],
      [AC_MSG_ERROR([--with-slurm-source=$SLURM_SOURCE is Slurm $SLURM_VERSION_STRING: xpart's gres/gpu has adapters for Slurm 22.05, 24.11, 25.11 and 26.05 only])])
    AS_IF([test "x$source_ver" != "x$installed_ver"],
      [AC_MSG_ERROR([Slurm version mismatch: installed headers ($SLURM_INCLUDEDIR) say $installed_ver, source tree $SLURM_SOURCE says $source_ver; use the source of the installed version (apt-get source slurm-wlm), or name a release's install with --with-slurm-prefix])])
    AS_IF([test -n "$SLURM_SLURMD"], [
      daemon_ver=`"$SLURM_SLURMD" -V 2>/dev/null | awk '{print $NF}'`
      AS_IF([test -n "$daemon_ver" && test "x$daemon_ver" != "x$SLURM_VERSION_STRING"],
        [AC_MSG_ERROR([Slurm version mismatch: $SLURM_SLURMD -V says $daemon_ver, the source tree $SLURM_SOURCE is $SLURM_VERSION_STRING])])
    ])
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
  # The installed Slurm's own plugins (stock gres_gpu.so, libslurmfull.so): the tests and the
  # benchmark compare against them and list them after ours in PluginDir. A release's install
  # has them in PREFIX/lib/slurm; Debian's in slurm-wlm.
  SLURM_STOCK_PLUGINDIR=""
  stock_dirs="/usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm /usr/lib64/slurm /usr/lib/slurm"
  dnl make install's lib/slurm; SchedMD's slurm-smd packages' /usr/lib/<multiarch>/slurm.
  AS_IF([test -n "$SLURM_PREFIX"], [stock_dirs="$SLURM_PREFIX/lib/slurm $SLURM_PREFIX/lib64/slurm `ls -d "$SLURM_PREFIX"/lib/*-linux-gnu/slurm 2>/dev/null`"])
  for d in $stock_dirs; do
    AS_IF([test -z "$SLURM_STOCK_PLUGINDIR" && test -r "$d/gres_gpu.so"], [SLURM_STOCK_PLUGINDIR=$d])
  done
  AC_SUBST([SLURM_STOCK_PLUGINDIR])
  AM_CONDITIONAL([BUILD_GRES_PLUGIN], [test "x$build_gres_plugin" = xyes])
  AM_CONDITIONAL([SLURM_PREP_API], [test -n "$SLURM_SERIES" && test "x$SLURM_SERIES" != x22.05])
  AC_SUBST([SLURM_SERIES])
  AC_SUBST([SLURM_GRES_C])
  AC_SUBST([SLURM_SOURCE])
  AC_SUBST([SLURM_PLUGINDIR])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_VERSION_STRING])
])
