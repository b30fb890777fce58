#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Records per-thread counters of one program under callgrind as mpxkit pack CSV (see README.md).
# usage: record.sh NAME DUMP_EVERY_BB OUT.csv -- COMMAND [ARGS...]
set -eu
[ $# -ge 5 ] && [ "$4" = "--" ] || { echo "usage: record.sh NAME BB OUT.csv -- CMD..." >&2; exit 1; }
name=$1 every=$2 out=$3
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --separate-threads=yes --cache-sim=yes --branch-sim=yes \
	--dump-every-bb="$every" --callgrind-out-file="$dir/cg" "$@" >/dev/null 2>"$dir/log"
vg=$(valgrind --version)
# One file per dump and thread: cg.PART-TID, and cg-TID for the final dump.
ls "$dir" | sed -n 's/^cg\.\([0-9]*\)-\([0-9]*\)$/\1 \2 &/p; s/^cg-\([0-9]*\)$/999999 \1 &/p' |
	sort -n -k1,1 -k2,2 | while read -r part tid file; do
	printf '%s %s ' "$part" "$tid"
	sed -n 's/^events: //p; s/^summary: //p' "$dir/$file" | tr '\n' '|'
	echo
done | awk -v name="$name" -v vg="$vg" -v every="$every" -v cmd="$*" '
	# Fields: part tid "events...|summary...|"; summary omits trailing zeros.
	{
		split($0, f, "|"); split(f[1], head, " "); part = head[1]; tid = head[2]
		ne = split(f[1], ev, " ") - 2
		n = split(f[2], v, " ")
		if (!hdr) {
			printf "# source=callgrind (%s) --separate-threads=yes --dump-every-bb=%s\n", vg, every
			printf "# program=%s\n# kernel=%s\n", cmd, name
			printf "# time_unit=instructions: start_ns/end_ns are the thread cumulative Ir, not ns\n"
			printf "region,unit,start_ns,end_ns"
			for (i = 3; i <= ne + 2; i++) printf ",%s", ev[i]
			printf "\n"; hdr = 1
		}
		if (v[1] + 0 == 0) next
		start = clock[tid] + 0; clock[tid] = start + v[1]
		if (part == 999999) part = lastpart + 1; else lastpart = part
		printf "dump%d,thread%d,%d,%d", part, tid, start, clock[tid]
		for (i = 1; i <= ne; i++) printf ",%d", (i <= n ? v[i] : 0)
		printf "\n"
	}' > "$out"
