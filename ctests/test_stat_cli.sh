#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit stat and mpxkit list: exit codes, error lines, and a real multiplexed run.
set -u
: "${MPXKIT:=utils/mpxkit}"
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=ctests/stat_common.sh
. "${top_srcdir:-.}/ctests/stat_common.sh"

# One rule for an event named twice, under any spelling, with or without --series (whose
# trace needs unique columns): one line, exit 2, and CMD never runs.
for series in "" "--series $tmp/dup.csv"; do
	# shellcheck disable=SC2086
	expect 2 "^mpxkit stat: perf::task-clock: named twice$" \
		$MPXKIT stat -e perf::TASK-CLOCK,perf::task-clock $series -- touch "$tmp/ran"
	[ ! -e "$tmp/ran" ] || fail "stat ran CMD with an event named twice ($series)"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "stat: more than one line for an event named twice"
done

# Usage errors: one line, exit 1, before anything runs.
expect 1 'no command to run' $MPXKIT stat
expect 1 "^mpxkit stat: --counters 0: not a whole number in \[1, 64\]" $MPXKIT stat -c 0 -- true
expect 1 "^mpxkit stat: --slice-us 5: " $MPXKIT stat --slice-us 5 -- true
expect 1 "^mpxkit stat: --estimator magic: no such estimator" $MPXKIT stat --estimator magic -- true
expect 1 "^mpxkit stat: --estimator ref-rate needs --reference EV" $MPXKIT stat --estimator ref-rate -- true
expect 1 "^mpxkit stat: --reference : not an event name" $MPXKIT stat --reference '' -- true
expect 1 "^mpxkit stat: --schedule nosuch: no schedule of that name .round-robin, prior, adaptive. and no such group file" \
	$MPXKIT stat --schedule nosuch -- true
expect 1 "^mpxkit stat: --schedule prior:floor=x: schedule 'prior:floor=x': floor takes a whole number 1 to 1e.06, not 'x'" \
	$MPXKIT stat --schedule prior:floor=x -- true
expect 1 "unknown option '--bogus'" $MPXKIT stat --bogus -- true
expect 1 "option '-e' needs an argument" $MPXKIT stat -e
expect 1 "unexpected argument 'y'" $MPXKIT list x y
$MPXKIT stat --help >"$tmp/help" || fail "stat --help exited $?"
grep -q '^usage: mpxkit stat' "$tmp/help" || fail "stat --help printed no usage"
$MPXKIT list --help >"$tmp/help" || fail "list --help exited $?"

# list --replay: the columns of a trace, in order.
printf 'step,cycles,instructions\n0,10,20\n1,11,21\n' >"$tmp/t.csv"
$MPXKIT list --replay "$tmp/t.csv" >"$tmp/list" || fail "list --replay exited $?"
[ "$(cut -d' ' -f1 "$tmp/list" | tr '\n' ' ')" = "cycles instructions " ] ||
	fail "list --replay: $(cat "$tmp/list")"
expect 2 "^mpxkit list: cannot open $tmp/missing.csv: No such file" $MPXKIT list --replay "$tmp/missing.csv"

# The perf source: skip when the kernel refuses perf_event_open altogether.
skip_without_perf
$MPXKIT list >"$tmp/list" || fail "list exited $?"
grep -q '^perf::TASK-CLOCK  *ns ' "$tmp/list" || fail "list lacks perf::TASK-CLOCK"

expect 2 "perf::NOPE: no such event" $MPXKIT stat -e perf::NOPE -- true
expect 2 "perf::NOPE: no such event" $MPXKIT stat --multiplex all -e perf::TASK-CLOCK --reference perf::NOPE -- true
expect 2 "^mpxkit stat: cannot run '$tmp/none': No such file or directory" $MPXKIT stat -- "$tmp/none"
# CMD's exit status passes through; its own options are its own.
expect 3 'perf::TASK-CLOCK' $MPXKIT stat -e perf::TASK-CLOCK -- sh -c 'exit 3'
expect 0 'perf::TASK-CLOCK' $MPXKIT stat -e perf::TASK-CLOCK -- ls -c /
# --exact: every event beside its count all the time in the same run; a task clock comes out exact.
expect 0 'perf::TASK-CLOCK .*exact +[0-9]+ +[+]0[.]00%' \
	$MPXKIT stat --multiplex all -e perf::TASK-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 --exact -- \
	sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done'
grep -Eq 'perf::PAGE-FAULTS .*exact +[0-9]+ ' "$tmp/err" || fail "--exact: no exact page faults: $(cat "$tmp/err")"
# --exact against an exact 0 (context switches, user mode): the difference itself, never '-'
# (issue 25: an invented count showed as '-'); an empty error_pct, error_abs 0 in CSV.
$MPXKIT stat -e perf::CONTEXT-SWITCHES:u,perf::TASK-CLOCK -c 2 --exact -o "$tmp/zero" -- true ||
	fail "stat --exact exited $?"
# Counted all the time: a zero-width interval, +- 0.00 %, lo = hi = the count.
grep -Eq '^ +0  perf::CONTEXT-SWITCHES:u +\(counted 100[.]0%\)  \+-   0[.]00%  exact +0 +[+]0$' "$tmp/zero" ||
	fail "--exact against 0: $(cat "$tmp/zero")"
$MPXKIT stat -e perf::CONTEXT-SWITCHES:u -c 2 --exact -f csv -o "$tmp/zero.csv" -- true ||
	fail "stat --exact -f csv exited $?"
[ "$(sed -n 2p "$tmp/zero.csv")" = "perf::CONTEXT-SWITCHES:u,0,100.0,0,0,0,,0" ] ||
	fail "--exact -f csv against 0: $(cat "$tmp/zero.csv")"
# A learned estimator may put a count where the exact one is 0 (issue 25): still a number.
if [ -n "${MPXKIT_DATADIR:-}" ] && [ -r "$MPXKIT_DATADIR/models/default.mpxm" ]; then
	$MPXKIT stat --multiplex all -e perf::CONTEXT-SWITCHES:u,perf::CPU-MIGRATIONS:u,perf::TASK-CLOCK,perf::PAGE-FAULTS \
		-c 2 --slice-us 1000 --estimator mlp --exact -o "$tmp/zero-mlp" -- \
		sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' || fail "stat mlp --exact exited $?"
	cat "$tmp/zero-mlp"
	[ "$(grep -Ec 'perf::C[A-Z-]+:u .* exact +0 +[+-][0-9]+$' "$tmp/zero-mlp")" = 2 ] ||
		fail "--exact against 0 with mlp: $(cat "$tmp/zero-mlp")"
fi

# The default, --multiplex hardware: software events take no counter and are counted all the
# time, exactly, whatever C is: no rotation, each 100 % counted, and --exact, counted beside them
# by descriptors of its own in the same run, finds the page faults equal.
expect 1 "^mpxkit stat: --multiplex some: not 'hardware' or 'all'" $MPXKIT stat --multiplex some -- true
$MPXKIT stat -e perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS -c 1 --slice-us 1000 --exact \
	-o "$tmp/along" -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' ||
	fail "stat (hardware) exited $?"
cat "$tmp/along"
grep -q "3 events (3 counted all the time) on 1 counter, 1 group, 1000 us slices, exact" "$tmp/along" ||
	fail "hardware: header"
[ "$(grep -c '(counted 100[.]0%)' "$tmp/along")" = 3 ] || fail "hardware: not all counted 100 %"
grep -Eq '^ +0 rotations$' "$tmp/along" || fail "hardware: a rotation happened"
grep -Eq 'perf::PAGE-FAULTS +\(counted 100[.]0%\)  (\+- +0[.]00%  )?exact +[0-9]+ +[+]0[.]00%' "$tmp/along" ||
	fail "hardware: page faults not exact"

# A real run: three events on one counter (multiplexed on purpose: --multiplex all), busy enough for rotations, report in a file.
busy='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'
$MPXKIT stat --multiplex all -e perf::TASK-CLOCK,perf::CPU-CLOCK,perf::CONTEXT-SWITCHES:u -c 1 \
	--slice-us 1000 --series "$tmp/series.csv" --series-intervals "$tmp/siv.csv" -o "$tmp/report" \
	-- sh -c "$busy" ||
	fail "stat exited $?"
cat "$tmp/report"
grep -q "3 events on 1 counter, 3 groups, 1000 us slices, fixed" "$tmp/report" ||
	fail "report header"
task=$(sed -n 's/^ *\([0-9][0-9]*\)  perf::TASK-CLOCK .*/\1/p' "$tmp/report")
[ -n "$task" ] && [ "$task" -gt 10000000 ] || fail "TASK-CLOCK '$task' is not > 10 ms"
# Switches happen in kernel mode: with :u (doc/events.md) they count 0.
grep -Eq '^ +0  perf::CONTEXT-SWITCHES:u ' "$tmp/report" || fail "CONTEXT-SWITCHES:u not 0 in user mode"
rotations=$(sed -n 's/^ \([0-9][0-9]*\) rotations\{0,1\}$/\1/p' "$tmp/report")
[ "$rotations" -ge 1 ] || fail "no rotation"
head -n 1 "$tmp/series.csv" | grep -qx 'step,perf::TASK-CLOCK,perf::CPU-CLOCK,perf::CONTEXT-SWITCHES:u' ||
	fail "series header: $(head -n 1 "$tmp/series.csv")"
[ "$(grep -c '^[0-9]' "$tmp/series.csv")" = "$rotations" ] || fail "series rows != rotations"
# --series-intervals: a row per rotation and event, the estimate the series has, inside its
# interval; only the run's first rotation may be open above (no spread seen yet).
head -n 1 "$tmp/siv.csv" | grep -qx 'step,event,estimate,lo,hi' || fail "siv header: $(head -n 1 "$tmp/siv.csv")"
[ "$(grep -c '^[0-9]' "$tmp/siv.csv")" = "$((3 * rotations))" ] || fail "siv rows != 3 x rotations"
awk -F, 'NR > 1 { if ($3 == "" || $4 == "" || $4 > $3 || ($5 != "" && $3 > $5)) bad = 1
	if ($5 == "" && $1 != 0) bad = 1 } END { exit bad }' "$tmp/siv.csv" ||
	fail "siv: an estimate outside its interval: $(cat "$tmp/siv.csv")"
[ "$(awk -F, 'NR > 1 && $2 == "perf::TASK-CLOCK" { print $3 }' "$tmp/siv.csv")" = \
	"$(cut -d, -f2 "$tmp/series.csv" | sed 1d)" ] || fail "siv estimates are not the series'"
expect 1 "^mpxkit stat: --series-intervals writes one count" $MPXKIT stat -r 2 --series-intervals "$tmp/x.csv" -- true
# Each multiplexed total has its interval: +- a finite share in the table (rotations done),
# or for an estimate of 0 (no share of it) its upper bound, above 0: a multiplexed event that
# its counted slices saw none of may have had some in the others; lo <= estimate <= hi in CSV;
# all counted (-c 3), lo = hi = estimate.
[ "$(grep -Ec '\(counted +[0-9.]+%\)  (\+- +[0-9]+[.][0-9]{2}%|<= +[1-9][0-9]*)$' "$tmp/report")" = 3 ] ||
	fail "no +- column: $(cat "$tmp/report")"
for c in 1 3; do
	$MPXKIT stat -e perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS -c $c --slice-us 1000 \
		-f csv -o "$tmp/iv$c.csv" -- sh -c "$busy" || fail "stat -c $c -f csv exited $?"
	head -n 1 "$tmp/iv$c.csv" | grep -qx 'event,estimate,counted_pct,lo,hi' ||
		fail "-f csv header: $(head -n 1 "$tmp/iv$c.csv")"
	awk -F, -v c=$c 'NR > 1 { if ($4 == "" || $5 == "" || $4 > $2 || $2 > $5) bad = 1
		if (c == 3 && ($4 != $2 || $5 != $2)) bad = 1 } END { exit bad || NR != 4 }' \
		"$tmp/iv$c.csv" || fail "-c $c: an estimate outside [lo, hi]: $(cat "$tmp/iv$c.csv")"
done
# ref-rate online: perf::TASK-CLOCK in every slice; the CPU clock, multiplexed, is about the same.
$MPXKIT stat --multiplex all -e perf::CPU-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 \
	--estimator ref-rate \
	--reference perf::TASK-CLOCK -o "$tmp/ref" -- sh -c "$busy" || fail "stat --reference exited $?"
cat "$tmp/ref"
grep -q "2 events on 1 counter, 2 groups, 1000 us slices, ref-rate, reference perf::TASK-CLOCK" \
	"$tmp/ref" || fail "report header with a reference"
cpu=$(sed -n 's/^ *\([0-9][0-9]*\)  perf::CPU-CLOCK .*/\1/p' "$tmp/ref")
[ -n "$cpu" ] && [ "$cpu" -gt 10000000 ] || fail "CPU-CLOCK '$cpu' is not > 10 ms under ref-rate"

# --model: the learned estimators' model file, read when the counting is set up.
expect 1 "option '--model' needs an argument" $MPXKIT stat --model
expect 2 "^mpxkit stat: estimator mlp: cannot open $tmp/none.mpxm: No such file" \
	$MPXKIT stat -e perf::TASK-CLOCK --estimator mlp --model "$tmp/none.mpxm" -- true
expect 0 'perf::TASK-CLOCK' $MPXKIT stat -e perf::TASK-CLOCK --model "$tmp/none.mpxm" -- true
# make check points MPXKIT_DATADIR at the source tree's data/.
shipped="${MPXKIT_DATADIR:-}/models/bigru.mpxm"
if [ -n "${MPXKIT_DATADIR:-}" ] && [ -r "$shipped" ]; then
	expect 2 "^mpxkit stat: $shipped: a recurrent model .*not an mlp estimator model" \
		$MPXKIT stat -e perf::TASK-CLOCK --estimator mlp --model "$shipped" -- true
	# With no default model to find, --model is what bigru reads.
	expect 2 "estimator bigru: cannot open $tmp/nowhere/models/bigru.mpxm: No such file" \
		env MPXKIT_DATADIR="$tmp/nowhere" $MPXKIT stat -e perf::TASK-CLOCK --estimator bigru -- true
	env MPXKIT_DATADIR="$tmp/nowhere" $MPXKIT stat --multiplex all -e perf::TASK-CLOCK,perf::CPU-CLOCK -c 1 \
		--slice-us 1000 --estimator bigru --model "$shipped" --series "$tmp/bigru.csv" \
		-o "$tmp/bigru" -- sh -c "$busy" || fail "stat --model exited $?"
	cat "$tmp/bigru"
	grep -q "2 events on 1 counter, 2 groups, 1000 us slices, bigru" "$tmp/bigru" ||
		fail "report header with --model"
	task=$(sed -n 's/^ *\([0-9][0-9]*\)  perf::TASK-CLOCK .*/\1/p' "$tmp/bigru")
	rotations=$(sed -n 's/^ \([0-9][0-9]*\) rotations\{0,1\}$/\1/p' "$tmp/bigru")
	[ "$(grep -c '^[0-9]' "$tmp/bigru.csv")" = "$rotations" ] || fail "bigru series rows != rotations"
	# The series is the whole-run pass's rows: the total adds only the rotation in progress.
	series=$(awk -F, 'NR > 1 { s += $2 } END { printf "%.0f", s }' "$tmp/bigru.csv")
	[ "$series" -le $((task + rotations)) ] || fail "bigru series $series above the total $task"
else
	echo "MPXKIT_DATADIR holds no models/bigru.mpxm: the --model run with bigru is not checked"
fi
# Never counted: with 1 s slices, true ends within group 0's first slice, so the events of
# groups 1 and 2 have no estimate: <not counted> as perf stat says it, an empty CSV field, a
# JSON null; group 0's event has its count.
never="--multiplex all -e perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK -c 1 --slice-us 1000000"
# shellcheck disable=SC2086
$MPXKIT stat $never -o "$tmp/never" -- true || fail "stat of a run shorter than a slice"
grep -Eq '^ +<not counted>  perf::PAGE-FAULTS$' "$tmp/never" || fail "no <not counted>: $(cat "$tmp/never")"
grep -Eq '^ +<not counted>  perf::CPU-CLOCK$' "$tmp/never" || fail "CPU-CLOCK counted"
grep -Eq '^ +[0-9]+  perf::TASK-CLOCK ' "$tmp/never" || fail "TASK-CLOCK not counted"
# shellcheck disable=SC2086
$MPXKIT stat $never -f csv -o "$tmp/never.csv" -- true || fail "stat -f csv"
# TASK-CLOCK's one slice, no rotation done: its interval is open above (+- inf %, an empty
# hi) from what it counted (lo = the estimate); the others have no lo either.
grep -Eq '^ +[0-9]+  perf::TASK-CLOCK +\(counted 100[.]0%\)  \+-    inf%$' "$tmp/never" ||
	fail "TASK-CLOCK's interval is not open: $(cat "$tmp/never")"
task=$(sed -n 's/^perf::TASK-CLOCK,\([0-9]*\),100.0,.*/\1/p' "$tmp/never.csv")
[ "$(cat "$tmp/never.csv")" = "event,estimate,counted_pct,lo,hi
perf::TASK-CLOCK,$task,100.0,$task,
perf::PAGE-FAULTS,,0.0,,
perf::CPU-CLOCK,,0.0,," ] || fail "stat -f csv: $(cat "$tmp/never.csv")"
# shellcheck disable=SC2086
$MPXKIT stat $never -f json -o "$tmp/never.json" -- true || fail "stat -f json"
if command -v jq >/dev/null 2>&1; then
	[ "$(jq -c '[.[] | .estimate == null, .lo == null, .hi == null]' "$tmp/never.json")" = \
		"[false,false,true,true,true,true,true,true,true]" ] ||
		fail "stat -f json: $(cat "$tmp/never.json")"
fi
expect 1 "^mpxkit stat: --format takes table, csv or json, not 'xml'" $MPXKIT stat -f xml -- true

# SIGTERM to stat alone reaches CMD (mpxkit_workload_wait passes it on):
# CMD ends, the report of its run is printed, and stat exits as CMD did, 128 + 15.
$MPXKIT stat -e perf::TASK-CLOCK -o "$tmp/term" -- sleep 60 2>/dev/null &
stat_pid=$!
# shellcheck source=ctests/children.sh
. "${top_srcdir:-.}/ctests/children.sh"
# CMD itself, exec'd: stat's held child, or a wrapper's subshell, has stat's command line.
child=$(first_child "$stat_pid" '^sleep 60$')
sleep 0.3
kill -TERM "$stat_pid"
wait "$stat_pid"
status=$?
[ -n "$child" ] || fail "SIGTERM: stat's CMD never appeared"
[ "$status" = 143 ] || fail "SIGTERM: stat exited $status, not 143"
if still_runs "$child"; then
	kill -KILL "$child"
	fail "SIGTERM: CMD still runs"
fi
grep -q "perf::TASK-CLOCK" "$tmp/term" || fail "SIGTERM: no report"
echo "PASS: mpxkit stat and mpxkit list"
