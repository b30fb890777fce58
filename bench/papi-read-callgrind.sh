#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per one-event read (doc/benchmarks.md, "PAPI_read on mpxkit event sets"): callgrind
# over bench_papi_read's BENCH_PAPI_READ_ONCE mode, 100,000 PAPI_read of an mpxkit event set of
# one event (fast), then 100,001 mpxkit_sched_read of the same event without PAPI.  Counts are
# deterministic (the load of a shared machine cannot skew them); the read(2) itself runs in the
# kernel and is not counted.  usage: papi-read-callgrind.sh [PATH/TO/bench_papi_read]
set -eu
bench=${1:-bench/bench_papi_read}
command -v valgrind >/dev/null || { echo "papi-read-callgrind.sh: valgrind is not installed" >&2; exit 1; }
[ -x "$bench" ] || { echo "papi-read-callgrind.sh: build $bench first (make bench-papi)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
BENCH_PAPI_READ_ONCE=1 valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$bench" \
	>/dev/null 2>"$out/err" || { cat "$out/err" >&2; exit 2; }
# Inclusive instructions per call of each function on the read path, summed over its copies
# (libpapi.so holds the component's own copy of libmpxkit, the program another).
callgrind_annotate --inclusive=yes --threshold=100 "$out/cg" 2>/dev/null | awk '
	{ gsub(",", "", $1) }
	$1 ~ /^[0-9]+$/ {
		fn = $NF; sub(/^.*:/, "", fn); sub(/ .*/, "", fn)
		if (fn ~ /^(PAPI_read|_papi_hwi_read|mpxkit_read|mpxkit_sched_read|mpxkit_sched_read_as|current_totals|read_live_fast|mpxkit_source_snapshot|perf_snapshot|read_one|read|__libc_read|pthread_mutex_lock|pthread_mutex_unlock|___pthread_mutex_lock|___pthread_mutex_unlock|__pthread_mutex_unlock_usercnt|llround)$/)
			print fn, $1, $0
	}' | sort
