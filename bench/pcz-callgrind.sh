#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per call of zstd -3 and the .pcz default, compress and decompress, on each file:
# callgrind over one call of each (PCZ_BENCH_ONCE), which the load of a shared machine cannot skew.
# usage: pcz-callgrind.sh [PATH/TO/pcz_bench [FILE.csv[.gz]...]]   (or: make pcz-callgrind)
set -eu
bench=${1:-bench/pcz_bench}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$(dirname "$0")"/../data/threads-dev/valid/*.csv.gz
command -v valgrind >/dev/null || { echo "pcz-callgrind.sh: valgrind is not installed" >&2; exit 1; }
[ -x "$bench" ] || { echo "pcz-callgrind.sh: build $bench first (make pcz-bench)" >&2; exit 1; }
# A libtool wrapper runs the real program through a shell: callgrind must see the program itself.
run=$bench
[ -x "$(dirname "$bench")/.libs/$(basename "$bench")" ] && run="$(dirname "$bench")/.libs/$(basename "$bench")"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| data | zstd -3 compress | pcz compress | pcz / zstd | zstd -3 decompress | pcz decompress | pcz / zstd |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for f in "$@"; do
	LD_LIBRARY_PATH="$(dirname "$bench")/../lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	PCZ_BENCH_ONCE=1 PCZ_BENCH_ONLY='zstd -3,pcz default (v2' \
		valgrind --tool=callgrind --callgrind-out-file="$out/cg" "$run" "$f" >/dev/null 2>"$out/err" ||
		{ cat "$out/err" >&2; exit 2; }
	callgrind_annotate --inclusive=yes "$out/cg" 2>/dev/null |
		awk -v f="$(basename "$f")" '
		{ gsub(",", "", $1) }
		/ [^ ]*pcz_bench.c:zstd_c / { zc = $1 } / [^ ]*pcz_bench.c:zstd_d / { zd = $1 }
		/ [^ ]*pcz_bench.c:pcz_c / { pc = $1 } / [^ ]*pcz_bench.c:pcz_d / { pd = $1 }
		END { printf "| %s | %d | %d | %.2f | %d | %d | %.2f |\n", f, zc, pc, pc / zc, zd, pd, pd / zd }'
done
