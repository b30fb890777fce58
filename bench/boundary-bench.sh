#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Slice boundaries side by side (doc/benchmarks.md, "Slice boundaries"): builds bench_boundary and
# its program in this build tree, and with BEFORE (another build tree, PAPI built, e.g. main's)
# the same program on BEFORE's PAPI, then runs every tool of both trees in the same rounds.
# usage: bench/boundary-bench.sh [--before DIR] [bench_boundary options...]
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
before=
if [ "$1" = --before ]; then
	before=$(cd "$2" && pwd)
	shift 2
fi
make -s bench/bench_boundary bench/boundary_work bench/boundary_work_papi >/dev/null
if [ -z "$before" ]; then
	exec bench/bench_boundary -T stat,lib,papi "$@"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
papi="$before/papi-build/install"
[ -f "$papi/include/papi.h" ] || { echo "boundary-bench: no PAPI built in $before" >&2; exit 2; }
${CC:-cc} -O2 -DWITH_PAPI -isystem "$papi/include" -o "$tmp/boundary_work_papi" \
	bench/boundary_work.c -L"$papi/lib" -lpapi -lpthread -lm -Wl,-rpath,"$papi/lib"
bench/bench_boundary -T stat,lib,papi --before "$before" \
	--before-work-papi "$tmp/boundary_work_papi" "$@"
