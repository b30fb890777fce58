# SPDX-License-Identifier: BSD-3-Clause
# Whether PAPI with the mpxkit component is built, and from which PAPI 7 source; papi.am builds it.
AC_ARG_WITH([papi-src],
  [AS_HELP_STRING([--with-papi-src=DIR],
    [PAPI 7 source tree (the directory holding src/configure) to build with the mpxkit component
     (default: fetch PAPI 7.0.0 from Debian's source packages, see doc/papi-build.md)])],
  [], [with_papi_src=fetch])
AC_ARG_ENABLE([papi],
  [AS_HELP_STRING([--disable-papi], [do not build PAPI with the mpxkit component])],
  [], [enable_papi=yes])
AS_IF([test "x$with_papi_src" = xno], [enable_papi=no])
AS_IF([test "x$with_papi_src" = xyes], [with_papi_src=fetch])
AS_IF([test "x$enable_papi" = xyes && test "x$with_papi_src" != xfetch],
  [AS_IF([test -f "$with_papi_src/src/configure" && test -f "$with_papi_src/src/papi.h"],
     [with_papi_src=`cd "$with_papi_src" && pwd`],
     [AC_MSG_ERROR([--with-papi-src=$with_papi_src is not a PAPI source tree (no src/configure and src/papi.h there)])])])
AS_IF([test "x$enable_papi" = xyes],
  [AC_CHECK_TOOL([OBJCOPY], [objcopy], [no])
   AS_IF([test "x$OBJCOPY" = xno],
     [AC_MSG_ERROR([objcopy (binutils) is needed to build the mpxkit PAPI component; or configure --disable-papi])])
   AS_IF([test "x$with_papi_src" = xfetch],
     [AC_PATH_PROG([APT_GET], [apt-get], [no])
      AS_IF([test "x$APT_GET" = xno],
        [AC_MSG_WARN([apt-get not found: fetching PAPI will fail unless PAPI_TARBALL is set or the tarball is cached; see doc/papi-build.md])])])])
AC_MSG_CHECKING([whether to build PAPI with the mpxkit component])
AS_IF([test "x$enable_papi" = xyes],
  [AC_MSG_RESULT([yes, from $with_papi_src])],
  [AC_MSG_RESULT([no])])
PAPI_SRC=$with_papi_src
AC_SUBST([PAPI_SRC])
AC_SUBST([OBJCOPY])
AM_CONDITIONAL([BUILD_PAPI], [test "x$enable_papi" = xyes])
