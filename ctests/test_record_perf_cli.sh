#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit record --perf: usage errors, and a real OCOE recording of software events.
set -u
: "${MPXKIT:=utils/mpxkit}"
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
work=ctests/workload_pages # "PAGES MS STATUS": MS of CPU, PAGES pages touched
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
expect() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" = "$want" ] || fail "$* exited $got, not $want: $(cat "$tmp/err")"
	grep -Eq -- "$pattern" "$tmp/err" || fail "$*: stderr lacks '$pattern': $(cat "$tmp/err")"
}

expect 1 "^mpxkit record: --perf: no events" $MPXKIT record --perf -- true
expect 1 "interval-ms 0: not a whole number in \[1, 3600000\]" $MPXKIT record --perf -e perf::TASK-CLOCK --interval-ms 0 -- true
expect 1 "counters 65: not a whole number in \[1, 64\]" $MPXKIT record --perf -e perf::TASK-CLOCK -c 65 -- true
expect 1 "unknown option '--I1' with --perf" $MPXKIT record --perf --I1 1,1,64 -e perf::TASK-CLOCK -- true
expect 1 "no command to record" $MPXKIT record --perf -e perf::TASK-CLOCK
$MPXKIT record --perf --help | grep -q "^usage: mpxkit record --perf" || fail "--perf --help"
if ! $MPXKIT list >/dev/null 2>"$tmp/err"; then
	echo "SKIP: perf_event_open is refused here: $(cat "$tmp/err")"
	exit 77
fi
expect 2 "perf::NOPE: no such perf event" $MPXKIT record --perf -e perf::NOPE -o "$tmp/x.csv" -- true
[ ! -e "$tmp/x.csv" ] || fail "a trace was written after a failure"
expect 2 "exited with status 3; no trace written" \
	$MPXKIT record --perf -e perf::TASK-CLOCK -o "$tmp/x.csv" -- $work 10 100 3
[ ! -e "$tmp/x.csv" ] || fail "a trace was written for a failed run"

# Three software events on one counter: three runs of a program that touches 2000 pages.
$MPXKIT record --perf -e perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS -c 1 \
	--interval-ms 10 -o "$tmp/t.csv" -- $work 2000 200 0 2>"$tmp/err" ||
	fail "record --perf exited $?: $(cat "$tmp/err")"
head -n 14 "$tmp/t.csv"
grep -qx '# runs=3' "$tmp/t.csv" || fail "runs"
grep -qx '# run_events=perf::TASK-CLOCK;perf::PAGE-FAULTS;perf::MINOR-FAULTS' "$tmp/t.csv" ||
	fail "run_events"
grep -qx 'step,perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS' "$tmp/t.csv" || fail "header"
# The CPU time up to read n cannot pass the wall time to it, (n + 1) intervals plus the read's
# lateness (under one interval); faults come early in each run, so every run's are kept.
awk -F, '/^[0-9]/ { n++; f += $3; m += $4; c += $2; if (c > (n + 1) * 10000000) bad = 1 }
	END { exit !(n >= 10 && f >= 2000 && m >= 2000 && !bad) }' "$tmp/t.csv" ||
	fail "steps, faults or task-clock implausible"
# The trace is a trace: mpxkit eval reads it.
$MPXKIT eval -c 1 "$tmp/t.csv" >/dev/null 2>"$tmp/err" || fail "eval on the trace: $(cat "$tmp/err")"
echo "PASS: mpxkit record --perf"
