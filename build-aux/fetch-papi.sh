#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Fetches PAPI 7.0.0's upstream source tarball from Debian's source packages into a cache.
#
# Usage: fetch-papi.sh [--print-path]
#   Prints the path of the verified tarball papi_7.0.0.orig.tar.gz on stdout
#   (the only line on stdout); progress goes to stderr.
#
# The tarball is Debian's orig tarball of upstream's PAPI 7.0.0 release (not
# repacked: the version has no +dfsg suffix).  Debian keeps its packaging
# patches in a separate debian.tar.xz, which we do not use: they change
# rpaths, libpfm4 linking, sonames, man pages and typos for Debian's packages
# (doc/papi-build.md lists them), none of which the mpxkit component needs.
#
# apt-get runs with a temporary deb-src list, state and cache directory, so
# the system's apt configuration is neither used for sources nor changed.
#
# Environment:
#   MPXKIT_CACHE_DIR  where the tarball is kept
#                     (default ${XDG_CACHE_HOME:-$HOME/.cache}/mpxkit)
#   PAPI_TARBALL      use this local file instead of fetching (checked too)
#   MPXKIT_DEBIAN_MIRROR  mirror URL (default http://deb.debian.org/debian)
set -eu

PAPI_DEB_VERSION=7.0.0-2
PAPI_ORIG=papi_7.0.0.orig.tar.gz
PAPI_SHA256=799dcc317a47da96beaeed445812ecb6ae49df7c0504a4569797c1f7d74c4fd2
SUITE=bookworm
MIRROR=${MPXKIT_DEBIAN_MIRROR:-http://deb.debian.org/debian}

prog=fetch-papi.sh
die() {
	echo "$prog: error: $*" >&2
	exit 1
}

case "${1-}" in
"" | --print-path) ;;
-h | --help)
	sed -n '5,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit 0
	;;
*) die "unknown argument '$1' (try --help)" ;;
esac

sha_of() {
	sha256sum "$1" | cut -d' ' -f1
}

verified() {
	[ -f "$1" ] && [ "$(sha_of "$1")" = "$PAPI_SHA256" ]
}

if [ -n "${PAPI_TARBALL-}" ]; then
	[ -f "$PAPI_TARBALL" ] || die "PAPI_TARBALL=$PAPI_TARBALL does not exist"
	verified "$PAPI_TARBALL" ||
		die "PAPI_TARBALL=$PAPI_TARBALL has sha256 $(sha_of "$PAPI_TARBALL"), expected $PAPI_SHA256"
	echo "$PAPI_TARBALL"
	exit 0
fi

if [ -z "${MPXKIT_CACHE_DIR-}" ]; then
	base=${XDG_CACHE_HOME:-}
	if [ -z "$base" ]; then
		[ -n "${HOME-}" ] || die "neither MPXKIT_CACHE_DIR, XDG_CACHE_HOME nor HOME is set"
		base=$HOME/.cache
	fi
	MPXKIT_CACHE_DIR=$base/mpxkit
fi
cached=$MPXKIT_CACHE_DIR/$PAPI_ORIG

if verified "$cached"; then
	echo "$prog: using cached $cached" >&2
	echo "$cached"
	exit 0
fi
if [ -f "$cached" ]; then
	echo "$prog: cached $cached has the wrong sha256; fetching it again" >&2
	rm -f "$cached"
fi

command -v apt-get >/dev/null 2>&1 ||
	die "apt-get not found; fetch $PAPI_ORIG yourself and set PAPI_TARBALL=FILE, or configure --with-papi-src=DIR"
mkdir -p "$MPXKIT_CACHE_DIR" || die "cannot create cache directory $MPXKIT_CACHE_DIR"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-fetch-papi.XXXXXX") || die "cannot create a temporary directory"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/dl"
echo "deb-src $MIRROR $SUITE main" >"$tmp/src.list"

# apt drops privileges to _apt for downloads; our private directories are
# owned by the caller, so keep the caller's identity instead of warning.
set -- -q \
	-o Dir::Etc::SourceList="$tmp/src.list" \
	-o Dir::Etc::SourceParts=/dev/null \
	-o Dir::State::Lists="$tmp/lists" \
	-o Dir::State::Status=/dev/null \
	-o Dir::Cache="$tmp/cache" \
	-o APT::Sandbox::User="$(id -un)"

echo "$prog: fetching papi=$PAPI_DEB_VERSION source from $MIRROR ($SUITE)" >&2
apt-get "$@" --error-on=any update >"$tmp/update.log" 2>&1 || {
	grep -E '^(E|W|Err):' "$tmp/update.log" >&2 || cat "$tmp/update.log" >&2
	die "cannot read the deb-src index of $MIRROR $SUITE (no network?); or configure --with-papi-src=DIR"
}
(cd "$tmp/dl" && apt-get "$@" source --download-only "papi=$PAPI_DEB_VERSION") >"$tmp/source.log" 2>&1 || {
	cat "$tmp/source.log" >&2
	die "apt-get source --download-only papi=$PAPI_DEB_VERSION failed; see above"
}
[ -f "$tmp/dl/$PAPI_ORIG" ] || die "apt-get source did not produce $PAPI_ORIG"
verified "$tmp/dl/$PAPI_ORIG" ||
	die "downloaded $PAPI_ORIG has sha256 $(sha_of "$tmp/dl/$PAPI_ORIG"), expected $PAPI_SHA256"

# Rename into place so a concurrent reader never sees a partial file.
cp "$tmp/dl/$PAPI_ORIG" "$cached.tmp.$$" && mv -f "$cached.tmp.$$" "$cached" ||
	die "cannot write $cached"
echo "$prog: cached $cached" >&2
echo "$cached"
