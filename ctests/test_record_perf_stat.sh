#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit record --perf, all at once, against perf stat: the same totals for the same workload.
set -u
: "${MPXKIT:=utils/mpxkit}"
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
# "PAGES ROUNDS": a parent and a forked child, each touching PAGES pages in ROUNDS rounds and
# writing one byte to /dev/null per round (ctests/workload_fork.c).
work="ctests/workload_fork 2000 40"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
if ! command -v perf >/dev/null 2>&1; then
	echo "SKIP: perf is not installed (build-aux/debian-packages: linux-perf)"
	exit 77
fi
if ! perf stat -x, -e page-faults:u -- true >/dev/null 2>"$tmp/err" ||
	! $MPXKIT list >/dev/null 2>&1; then
	echo "SKIP: perf_event_open is refused here: $(cat "$tmp/err")"
	exit 77
fi

# The events, one per line: perf stat's name, mpxkit's, and how the totals must agree.
# - exact: counts the workload fixes (its faults of these kinds are none; its 2 x 40 writes);
# - spread: page faults, which differ between two runs of perf stat itself by a few start-up
#   faults (4084 to 4087 for this workload here): the recorder's total must lie within what 5
#   runs of perf stat gave, widened on each side by their range and by 3.
# User mode on both sides (perf stat's :u, mpxkit's :u), since the default domain counts kernel
# mode too where the kernel allows it.  A tracepoint is one more line.
events="page-faults perf::PAGE-FAULTS:u spread
minor-faults perf::MINOR-FAULTS:u spread
major-faults perf::MAJOR-FAULTS:u spread
alignment-faults perf::ALIGNMENT-FAULTS:u exact
emulation-faults perf::EMULATION-FAULTS:u exact
syscalls:sys_enter_write syscalls:sys_enter_write:u exact"

perf_list=$(echo "$events" | awk '{ printf "%s%s:u", (NR > 1 ? "," : ""), $1 }')
ours=$(echo "$events" | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }')
for i in 1 2 3 4 5; do
	# shellcheck disable=SC2086
	perf stat -x, -e "$perf_list" -- $work >/dev/null 2>"$tmp/perf$i" || fail "perf stat: $(cat "$tmp/perf$i")"
done
# shellcheck disable=SC2086
$MPXKIT record --perf -e "$ours" --interval-us 1000 -o "$tmp/t.csv" -- $work 2>"$tmp/err" ||
	fail "record --perf exited $?: $(cat "$tmp/err")"
grep -qx '# mode=all-at-once' "$tmp/t.csv" || fail "not recorded all at once"
grep -qx '# runs=1' "$tmp/t.csv" || fail "more than one run"
grep -qx '# interval_ns=1000000' "$tmp/t.csv" || fail "interval"
# One read(2) of the perf group per sample, whatever the number of events.
grep -qx '# reads_per_step=1' "$tmp/t.csv" || fail "$(grep reads_per_step "$tmp/t.csv")"
grep -q '^# last_step_ns=[0-9][0-9]*$' "$tmp/t.csv" || fail "last_step_ns"

n=0
echo "$events" | while read -r pname name check; do
	n=$((n + 1))
	total=$(awk -F, -v c=$((n + 1)) '/^[0-9]/ { s += $c } END { print s + 0 }' "$tmp/t.csv")
	# perf stat names a tracepoint without its :u
	range=$(cat "$tmp"/perf? | awk -F, -v e="$pname:u" -v p="$pname" '$3 == e || $3 == p {
		v = $1 + 0; if (n++ == 0) lo = hi = v; if (v < lo) lo = v; if (v > hi) hi = v }
		END { print lo, hi }')
	lo=${range% *} hi=${range#* }
	case $check in
	exact) ok=$([ "$lo" = "$hi" ] && [ "$total" = "$lo" ] && echo 1) ;;
	spread) ok=$(awk -v t="$total" -v lo="$lo" -v hi="$hi" 'BEGIN {
		w = hi - lo + 3; print (t >= lo - w && t <= hi + w) ? 1 : "" }') ;;
	esac
	echo "$name: recorded $total, perf stat $lo to $hi ($check)"
	[ -n "$ok" ] || fail "$name: recorded $total, perf stat $lo to $hi"
	# The child's work is counted too: two workers' pages.
	if [ "$name" = perf::PAGE-FAULTS:u ] && [ "$total" -lt 4000 ]; then
		fail "$name: $total, not the two workers' 4000 pages"
	fi
done || exit 1
echo "PASS: mpxkit record --perf all at once = perf stat"
