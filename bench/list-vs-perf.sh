#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The full event list: mpxkit list against perf list, side by side (doc/benchmarks.md, "Event list").
# Usage: bench/list-vs-perf.sh [RUNS] [MPXKIT]   (default 21 runs each, alternating, utils/mpxkit)
# Prints each tool's median and minimum wall time, its lines, and the ratio of the medians.
# With hyperfine installed it also runs hyperfine on both.
set -eu
runs=${1:-21}
mpxkit=${2:-utils/mpxkit}
command -v perf >/dev/null || { echo "perf is not installed (Debian: linux-perf)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Warm both: the first run reads sysfs, tracefs and libpfm4 from disk.
$mpxkit list >/dev/null
perf list >/dev/null 2>&1
now() { date +%s%N; }
i=0
while [ $i -lt "$runs" ]; do
	t0=$(now); $mpxkit list >/dev/null; t1=$(now)
	perf list >/dev/null 2>&1; t2=$(now)
	echo $((t1 - t0)) >>"$tmp/mpxkit"
	echo $((t2 - t1)) >>"$tmp/perf"
	i=$((i + 1))
done
stats() { sort -n "$1" | awk '{v[NR] = $1} END {printf "%.1f %.1f", v[int((NR + 1) / 2)] / 1e6, v[1] / 1e6}'; }
set -- $(stats "$tmp/mpxkit"); m_med=$1 m_min=$2
set -- $(stats "$tmp/perf"); p_med=$1 p_min=$2
printf '%-14s %10s %10s %8s\n' tool median_ms min_ms lines
printf '%-14s %10s %10s %8s\n' "mpxkit list" "$m_med" "$m_min" "$($mpxkit list | wc -l)"
printf '%-14s %10s %10s %8s\n' "perf list" "$p_med" "$p_min" "$(perf list 2>/dev/null | wc -l)"
awk -v a="$m_med" -v b="$p_med" 'BEGIN {printf "mpxkit/perf (medians): %.2f (the bound of issue 26: 3)\n", a / b}'
if command -v hyperfine >/dev/null; then
	hyperfine -N -w 3 -r "$runs" "$mpxkit list" "perf list"
fi
