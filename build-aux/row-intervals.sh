#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The intervals of `mpxkit stat -I` rows, measured (doc/estimators.md, "Between two reads"):
# real programs of data/real's train and validation splits, 11 tracepoint and software events
# multiplexed on 4 counters (--multiplex all), rows of 100 ms against --exact, which counts the
# same events all the time in the same run.  Prints the share of rows whose interval holds the
# exact count, by the size of that count, and the median relative half-width.
# usage: build-aux/row-intervals.sh [-l LEVEL] [-I MS]   (root, or perf_event_paranoid <= 1,
# and tracefs mounted; MPXKIT=binary, default ./utils/mpxkit)
# The task clock is left out: its rows' exact counts are read some microseconds from the
# engine's, and at 100 ms of CPU a row that skew is larger than its interval.
cd "$(dirname "$0")/.." || exit 2
M=$(cd "$(dirname "${MPXKIT:-./utils/mpxkit}")" && pwd)/$(basename "${MPXKIT:-./utils/mpxkit}")
level=0.9
ms=100
while getopts l:I: opt; do
	case $opt in
	l) level=$OPTARG ;;
	I) ms=$OPTARG ;;
	*) exit 1 ;;
	esac
done
EV=page-faults,context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write
EV=$EV,syscalls:sys_enter_openat,syscalls:sys_enter_close,syscalls:sys_enter_mmap,kmem:kmalloc
EV=$EV,sched:sched_switch,syscalls:sys_enter_newfstatat,syscalls:sys_enter_brk
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
seq 1 400000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >big.txt
set -- 'gzip -9 -c big.txt >big.gz' \
	'xz -6 -T1 -c big.txt >/dev/null' \
	'sort -n big.txt >sorted.txt' \
	"gawk '{ s[\$1 % 97] += \$3 } END { for (k in s) print k, s[k] }' big.txt >/dev/null" \
	'find /usr/include /usr/share/doc -type f -size +2k >/dev/null' \
	'tar cf t.tar /usr/include 2>/dev/null' \
	"sed -e 's/line/LINE/g' -e 's/[0-9]\\+/N/' big.txt >/dev/null" \
	'python3 -m compileall -q -f /usr/lib/python3.11/json /usr/lib/python3.11/email >/dev/null'
for prog in "$@"; do
	"$M" stat --multiplex all -I "$ms" --level "$level" --exact -c 4 -f csv -e "$EV" \
		-o rows.csv -- sh -c "$prog" >/dev/null 2>err.txt || { cat err.txt; exit 2; }
	sed 1d rows.csv >>all.csv
	echo "# $prog: $(($(wc -l <rows.csv) - 1)) rows" >&2
done
# Columns: time_s,event,estimate,counted_pct,lo,hi,exact,error_pct,error_abs
awk -F, -v level="$level" '
	$3 != "" && $7 != "" {
		hi = $6 == "" ? 1e300 : $6
		k = $7 == 0 ? "0" : $7 < 10 ? "1-9" : ">= 10"
		n[k]++; all++
		if ($7 + 0 >= $5 + 0 && $7 + 0 <= hi + 0) { c[k]++; call++ }
		if ($3 > 0 && $6 != "") w[++nw] = ($6 - $5) / 2 / $3
	}
	END {
		printf "level %s: %d rows, %.3f covered\n", level, all, call / all
		split(">= 10,1-9,0", order, ",")
		for (i = 1; i <= 3; i++)
			printf "  exact count %-5s %5d rows, %.3f covered\n", order[i], n[order[i]], c[order[i]] / n[order[i]]
		# the median of the relative half-widths (insertion sort: a few thousand rows)
		for (i = 2; i <= nw; i++) { v = w[i]; for (j = i - 1; j >= 1 && w[j] > v; j--) w[j + 1] = w[j]; w[j + 1] = v }
		printf "  median relative half-width %.3f (%d rows with an estimate above 0)\n", w[int((nw + 1) / 2)], nw
	}' all.csv
