#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit stat -p, -t and --per-thread: against the exact counts of the same run and a workload
# whose page faults are known (ctests/workload_threads), never against wall time.
set -u
: "${MPXKIT:=utils/mpxkit}"
: "${top_builddir:=.}"
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
work="$top_builddir/ctests/workload_threads" # GATE MAIN T1 T2 MS
tmp=$(mktemp -d) || exit 1
pids=
cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# shellcheck source=ctests/stat_common.sh
. "${top_srcdir:-.}/ctests/stat_common.sh"

# Usage errors: one line, exit 1, nothing counted (the -a ones too).
expect_line 1 "^mpxkit stat: -a, -p and -t name one target: give one of them" $MPXKIT stat -a -p 1
expect_line 1 "^mpxkit stat: -a, -p and -t name one target" $MPXKIT stat -t 1 -p 1
expect_line 1 "^mpxkit stat: --per-thread counts the threads of -p or -t" $MPXKIT stat --per-thread -- true
expect_line 1 "^mpxkit stat: --per-thread counts the threads of -p or -t" $MPXKIT stat -a --per-thread
expect_line 1 "^mpxkit stat: -r runs CMD N times: name a command" $MPXKIT stat -r 2 -p 1
expect_line 1 "^mpxkit stat: -r and -I do not go together" $MPXKIT stat -r 2 -I 100 -- true
expect_line 1 "^mpxkit stat: --series writes one count: not with --per-thread or -r" \
	$MPXKIT stat --series "$tmp/s.csv" --per-thread -p 1
expect_line 1 "^mpxkit stat: --pid '1,x': not a list of task ids" $MPXKIT stat -p 1,x
expect_line 1 "^mpxkit stat: --pid '1,': not a list of task ids" $MPXKIT stat -p 1,
expect_line 1 "^mpxkit stat: --tid '0': not a list of task ids" $MPXKIT stat -t 0
expect_line 1 "^mpxkit stat: --pid: 7 named twice" $MPXKIT stat -p 7,8,7
expect_line 1 "^mpxkit stat: --interval-print 5: not a whole number in \[10, 3600000\]" \
	$MPXKIT stat -I 5 -- true
expect_line 1 "^mpxkit stat: --repeat perf::TASK-CLOCK: not a whole number in \[1, 100000\]" \
	$MPXKIT stat -r perf::TASK-CLOCK -- true
expect_line 1 "^mpxkit stat: no command to run" $MPXKIT stat -e perf::TASK-CLOCK

skip_without_perf

# A task that is gone: one line, exit 2.
sh -c 'exit 0' &
gone=$!
wait $gone
expect_line 2 "^mpxkit stat: process $gone: no such process$" $MPXKIT stat -e perf::TASK-CLOCK -p $gone
expect_line 2 "^mpxkit stat: thread $gone: no such thread$" $MPXKIT stat -e perf::TASK-CLOCK -t $gone

# stopped_by SIG STATUS ERR ARGS...: mpxkit stat ARGS in the background, its stderr in ERR,
# sent SIG once it counts; it must exit STATUS.
stopped_by() {
	_sig=$1 _want=$2 _err=$3
	shift 3
	$MPXKIT stat --multiplex all "$@" 2>"$_err" &
	_stat=$!
	counting $_stat
	sleep 0.1
	kill -"$_sig" $_stat
	wait $_stat
	_got=$?
	[ "$_got" = "$_want" ] || fail "stat $* after SIG$_sig exited $_got: $(cat "$_err")"
	own_lines "$_err"
}
# start_work MAIN T1 T2 MS: the workload held at its gate, with its two threads started and
# named.  A thread is in /proc/PID/task before pthread_setname_np names it, so the names are
# what is waited for (-t looks wl-t2 up by name; waiting for 3 tasks alone once found none).
start_work() {
	rm -f "$tmp/gate"
	mkfifo "$tmp/gate" || fail "mkfifo"
	"$work" "$tmp/gate" "$@" &
	wpid=$!
	pids="$pids $wpid"
	_i=0
	while [ "$(cat /proc/$wpid/task/*/comm 2>/dev/null | grep -c '^wl-t[12]$')" -lt 2 ]; do
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "the workload has no named threads after 60 s"
		sleep 0.1
	done
}
open_gate() {
	printf x >"$tmp/gate"
}
# -p: the process's three threads, found at the attach, counted until it ends by itself.  No
# multiplexing (3 events, 3 counters): each fault count is the count itself, equal to --exact's;
# the task clock is too but for the engine's scaling of each slice to the slice's clock
# (doc/component.md, "What a slice is"), a few tens of microseconds; the page faults are at
# least the 100 + 300 + 500 pages the threads touched after the gate.
start_work 100 300 500 50
$MPXKIT stat --multiplex all -p $wpid -e perf::PAGE-FAULTS,perf::MINOR-FAULTS,perf::TASK-CLOCK -c 3 --exact \
	-f csv -o "$tmp/p.csv" 2>"$tmp/err" &
stat=$!
counting $stat
open_gate
wait $stat || fail "stat -p exited $?: $(cat "$tmp/err")"
cat "$tmp/p.csv"
for ev in perf::PAGE-FAULTS perf::MINOR-FAULTS; do
	est=$(field "$tmp/p.csv" $ev estimate)
	exact=$(field "$tmp/p.csv" $ev exact)
	[ -n "$est" ] && [ "$est" = "$exact" ] || fail "-p: $ev estimated $est, exact $exact"
done
near "$(field "$tmp/p.csv" perf::TASK-CLOCK estimate)" "$(field "$tmp/p.csv" perf::TASK-CLOCK exact)" 0.1 ||
	fail "-p: task clock beyond 0.1 % of the exact count"
faults=$(field "$tmp/p.csv" perf::PAGE-FAULTS exact)
[ "$faults" -ge 900 ] && [ "$faults" -lt 1000 ] || fail "-p: $faults page faults for 900 pages"
echo "ok: -p counted the 3 threads: $faults page faults for 900 pages"

# --per-thread: one row per thread, each thread's own pages, estimates equal to exact counts.
start_work 100 300 500 50
$MPXKIT stat --multiplex all --per-thread -p $wpid -e perf::PAGE-FAULTS,perf::TASK-CLOCK -c 2 --exact \
	-f csv -o "$tmp/pt.csv" 2>"$tmp/err" &
stat=$!
counting $stat 4
open_gate
wait $stat || fail "stat --per-thread exited $?: $(cat "$tmp/err")"
cat "$tmp/pt.csv"
head -n 1 "$tmp/pt.csv" | grep -qx 'tid,comm,event,estimate,counted_pct,lo,hi,exact,error_pct,error_abs' ||
	fail "--per-thread: header $(head -n 1 "$tmp/pt.csv")"
[ "$(grep -c ',perf::PAGE-FAULTS,' "$tmp/pt.csv")" = 3 ] || fail "--per-thread: not 3 threads"
for t in "workload_thread 100" "wl-t1 300" "wl-t2 500"; do
	comm=${t% *} pages=${t#* }
	est=$(field "$tmp/pt.csv" perf::PAGE-FAULTS estimate "$comm")
	exact=$(field "$tmp/pt.csv" perf::PAGE-FAULTS exact "$comm")
	[ -n "$exact" ] && [ "$exact" -ge "$pages" ] && [ "$exact" -lt $((pages + 60)) ] ||
		fail "--per-thread: $comm had $exact page faults for $pages pages"
	[ "$est" = "$exact" ] || fail "--per-thread: $comm estimated $est, exact $exact"
done
tid=$(awk -F, '$2 == "wl-t2" { print $1; exit }' "$tmp/pt.csv")
[ -n "$tid" ] && [ "$tid" -gt "$wpid" ] || fail "--per-thread: wl-t2's tid '$tid'"
echo "ok: --per-thread gave each thread its own pages"

# -t: one thread of the three, and -I rows to stderr as they come, multiplexed (2 events on 1
# counter); its rows add up to its total: the exact rows to at least wl-t2's 500 pages, the
# estimated task clock to the exact one within 1 %.
start_work 100 300 500 200
t2=$(grep -l '^wl-t2$' /proc/$wpid/task/*/comm | sed 's|.*/task/\([0-9]*\)/comm|\1|')
[ -n "$t2" ] || fail "-t: no wl-t2 thread"
$MPXKIT stat --multiplex all -t "$t2" -e perf::TASK-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 --exact \
	-I 20 -f csv 2>"$tmp/t.csv" &
stat=$!
counting $stat
open_gate
wait $stat || fail "stat -t -I exited $?: $(cat "$tmp/t.csv")"
own_lines "$tmp/t.csv"
head -n 1 "$tmp/t.csv" | grep -qx 'time_s,event,estimate,counted_pct,lo,hi,exact,error_pct,error_abs' ||
	fail "-I: header $(head -n 1 "$tmp/t.csv")"
awk -F, 'NR > 1 && $2 == "perf::TASK-CLOCK" { if ($1 + 0 <= last + 0) bad = 1; last = $1; n++ }
	END { exit bad || n < 2 }' "$tmp/t.csv" || fail "-I: times not increasing: $(cat "$tmp/t.csv")"
sums=$(awk -F, 'NR > 1 { e[$2] += $3; x[$2] += $7 }
	END { printf "%d %d %d", e["perf::TASK-CLOCK"], x["perf::TASK-CLOCK"], x["perf::PAGE-FAULTS"] }' \
	"$tmp/t.csv")
set -- $sums
[ "$3" -ge 500 ] && [ "$3" -lt 560 ] || fail "-t: $3 page faults for wl-t2's 500 pages"
near "$1" "$2" 1 || fail "-t -I: task clock rows add up to $1, exact $2"
echo "ok: -t -I: $(($(wc -l <"$tmp/t.csv") - 1)) rows, task clock $1 against $2 exact, $3 faults"

# A process that sleeps: no time passes for it, so every interval is <not counted>, as perf
# stat -I says; SIGTERM ends the count, the rows of the last interval come, exit 128 + 15.
sleep 600 &
sleeper=$!
pids="$pids $sleeper"
wait_asleep $sleeper sleep || fail "sleep 600 never settled asleep"
stopped_by TERM 143 "$tmp/idle" -p $sleeper -e perf::TASK-CLOCK -I 20
grep -Eq '^ +[0-9]+[.][0-9]{9} +<not counted>  perf::TASK-CLOCK$' "$tmp/idle" ||
	fail "-I of a sleeping process: $(cat "$tmp/idle")"
grep -Ev '^#|<not counted>' "$tmp/idle" | grep -q . && fail "-I of a sleeping process counted"
echo "ok: -I of a sleeping process: <not counted>"

# SIGINT to a count without CMD: the report is written whole under its name, nothing else is
# left, and the exit status is 128 + 2, as perf stat's.
stopped_by INT 130 "$tmp/err" -p $sleeper -e perf::TASK-CLOCK -I 20 -f json -o "$tmp/int.json"
[ "$(ls "$tmp" | grep -c 'int.json')" = 1 ] || fail "SIGINT left: $(ls "$tmp")"
if command -v jq >/dev/null 2>&1; then
	jq -e 'length > 0 and all(.[]; .estimate == null and .event == "perf::TASK-CLOCK")' \
		"$tmp/int.json" >/dev/null || fail "SIGINT: $(cat "$tmp/int.json")"
fi
kill -KILL $sleeper

echo "PASS: mpxkit stat -p, -t, --per-thread"
