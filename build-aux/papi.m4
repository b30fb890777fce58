# SPDX-License-Identifier: BSD-3-Clause
# Where the PAPI 7 source tree comes from; the build itself lives in papi.am.
AC_ARG_WITH([papi-src],
  [AS_HELP_STRING([--with-papi-src=DIR],
    [PAPI 7 source tree to build with the mpxkit component (default: fetch PAPI 7.0.0 from Debian's source packages)])],
  [], [with_papi_src=fetch])
AC_ARG_ENABLE([papi],
  [AS_HELP_STRING([--disable-papi], [do not build PAPI with the mpxkit component])],
  [], [enable_papi=yes])
AS_IF([test "x$with_papi_src" != xfetch && test "x$with_papi_src" != xno],
  [AS_IF([test -f "$with_papi_src/src/papi.h" || test -f "$with_papi_src/src/papi.h.in" || test -f "$with_papi_src/src/configure"],
     [with_papi_src=`cd "$with_papi_src" && pwd`],
     [AC_MSG_ERROR([--with-papi-src=$with_papi_src is not a PAPI source tree (no src/configure)])])])
AS_IF([test "x$with_papi_src" = xno], [enable_papi=no])
PAPI_SRC=$with_papi_src
AC_SUBST([PAPI_SRC])
AM_CONDITIONAL([BUILD_PAPI], [test "x$enable_papi" = xyes])
