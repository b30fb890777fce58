#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit profile --source perf against perf record at the same frequency, side by side: the
# same workload bare, under `perf record -e cpu-clock:u -F HZ`, and under `mpxkit profile -s perf
# -F HZ`, interleaved, RUNS times each.  Prints wall and CPU seconds (user + system of the whole
# process tree, profiler included) per run, the medians, and the output sizes.
# usage: bench/spacetime-perf.sh MPXKIT HZ RUNS -- CMD [ARGS...]
set -eu
mpxkit=$1 hz=$2 runs=$3
shift 4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-bench-perf.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# one NAME CMD...: appends "wall cpu" of one run to $tmp/NAME.
one() {
	name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/$name.err"
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$tmp/t" >>"$tmp/$name"
}

for i in $(seq "$runs"); do
	one bare "$@"
	one perf perf record -q -e cpu-clock:u -F "$hz" -o "$tmp/perf.data" -- "$@"
	one mpxkit "$mpxkit" profile -s perf -F "$hz" -o "$tmp/run.prof" -- "$@"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %-28s %-28s %s\n' tool "wall s (runs)" "CPU s (runs)" "median wall / CPU"
for name in bare perf mpxkit; do
	walls=$(cut -d' ' -f1 "$tmp/$name" | tr '\n' ' ')
	cpus=$(cut -d' ' -f2 "$tmp/$name" | tr '\n' ' ')
	printf '%-8s %-28s %-28s %s / %s\n' "$name" "$walls" "$cpus" \
		"$(cut -d' ' -f1 "$tmp/$name" | median)" "$(cut -d' ' -f2 "$tmp/$name" | median)"
done
echo "perf.data: $(wc -c <"$tmp/perf.data") bytes; run.prof: $(wc -c <"$tmp/run.prof") bytes"
echo "perf record: $(perf report -i "$tmp/perf.data" --stdio 2>/dev/null | grep -m1 -o '[0-9]* samples\|Samples: [0-9.]*[KM]* ' || true)"
tail -n 1 "$tmp/mpxkit.err"
