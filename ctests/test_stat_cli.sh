#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit stat and mpxkit list: exit codes, error lines, and a real multiplexed run.
set -u
: "${MPXKIT:=utils/mpxkit}"
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "FAIL: $*"
	exit 1
}
# expect STATUS PATTERN CMD...: CMD exits STATUS and its stderr matches PATTERN (grep -E).
expect() {
	want=$1 pattern=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" = "$want" ] || fail "$* exited $got, not $want: $(cat "$tmp/err")"
	grep -Eq -- "$pattern" "$tmp/err" || fail "$*: stderr lacks '$pattern': $(cat "$tmp/err")"
}

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
expect 1 "unexpected argument 'x'" $MPXKIT list x
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
if ! $MPXKIT list >"$tmp/list" 2>"$tmp/err"; then
	echo "SKIP: perf_event_open is refused here: $(cat "$tmp/err")"
	exit 77
fi
grep -q '^perf::TASK-CLOCK  *ns ' "$tmp/list" || fail "list lacks perf::TASK-CLOCK"

expect 2 "perf::NOPE: no such perf event" $MPXKIT stat -e perf::NOPE -- true
expect 2 "perf::NOPE: no such perf event" $MPXKIT stat -e perf::TASK-CLOCK --reference perf::NOPE -- true
expect 2 "^mpxkit stat: cannot run '$tmp/none': No such file or directory" $MPXKIT stat -- "$tmp/none"
# CMD's exit status passes through; its own options are its own.
expect 3 'perf::TASK-CLOCK' $MPXKIT stat -e perf::TASK-CLOCK -- sh -c 'exit 3'
expect 0 'perf::TASK-CLOCK' $MPXKIT stat -e perf::TASK-CLOCK -- ls -c /
# --exact: every event beside its count all the time in the same run; a task clock comes out exact.
expect 0 'perf::TASK-CLOCK .*exact +[0-9]+ +[+]0[.]00%' \
	$MPXKIT stat -e perf::TASK-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 --exact -- \
	sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done'
grep -Eq 'perf::PAGE-FAULTS .*exact +[0-9]+ ' "$tmp/err" || fail "--exact: no exact page faults: $(cat "$tmp/err")"

# A real run: three events on one counter, busy enough for rotations, report in a file.
busy='i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'
$MPXKIT stat -e perf::TASK-CLOCK,perf::CPU-CLOCK,perf::CONTEXT-SWITCHES -c 1 --slice-us 1000 \
	--series "$tmp/series.csv" -o "$tmp/report" -- sh -c "$busy" ||
	fail "stat exited $?"
cat "$tmp/report"
grep -q "3 events on 1 counter, 3 groups, 1000 us slices, fixed" "$tmp/report" ||
	fail "report header"
task=$(sed -n 's/^ *\([0-9][0-9]*\)  perf::TASK-CLOCK .*/\1/p' "$tmp/report")
[ -n "$task" ] && [ "$task" -gt 10000000 ] || fail "TASK-CLOCK '$task' is not > 10 ms"
grep -Eq '^ +0  perf::CONTEXT-SWITCHES ' "$tmp/report" || fail "CONTEXT-SWITCHES not 0 in user mode"
rotations=$(sed -n 's/^ \([0-9][0-9]*\) rotations\{0,1\}$/\1/p' "$tmp/report")
[ "$rotations" -ge 1 ] || fail "no rotation"
head -n 1 "$tmp/series.csv" | grep -qx 'step,perf::TASK-CLOCK,perf::CPU-CLOCK,perf::CONTEXT-SWITCHES' ||
	fail "series header: $(head -n 1 "$tmp/series.csv")"
[ "$(grep -c '^[0-9]' "$tmp/series.csv")" = "$rotations" ] || fail "series rows != rotations"
# ref-rate online: perf::TASK-CLOCK in every slice; the CPU clock, multiplexed, is about the same.
$MPXKIT stat -e perf::CPU-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 --estimator ref-rate \
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
	env MPXKIT_DATADIR="$tmp/nowhere" $MPXKIT stat -e perf::TASK-CLOCK,perf::CPU-CLOCK -c 1 \
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
never="-e perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK -c 1 --slice-us 1000000"
# shellcheck disable=SC2086
$MPXKIT stat $never -o "$tmp/never" -- true || fail "stat of a run shorter than a slice"
grep -Eq '^ +<not counted>  perf::PAGE-FAULTS$' "$tmp/never" || fail "no <not counted>: $(cat "$tmp/never")"
grep -Eq '^ +<not counted>  perf::CPU-CLOCK$' "$tmp/never" || fail "CPU-CLOCK counted"
grep -Eq '^ +[0-9]+  perf::TASK-CLOCK ' "$tmp/never" || fail "TASK-CLOCK not counted"
# shellcheck disable=SC2086
$MPXKIT stat $never -f csv -o "$tmp/never.csv" -- true || fail "stat -f csv"
[ "$(cat "$tmp/never.csv")" = "event,estimate,counted_pct
perf::TASK-CLOCK,$(sed -n 's/^perf::TASK-CLOCK,\([0-9]*\),100.0$/\1/p' "$tmp/never.csv"),100.0
perf::PAGE-FAULTS,,0.0
perf::CPU-CLOCK,,0.0" ] || fail "stat -f csv: $(cat "$tmp/never.csv")"
# shellcheck disable=SC2086
$MPXKIT stat $never -f json -o "$tmp/never.json" -- true || fail "stat -f json"
if command -v jq >/dev/null 2>&1; then
	[ "$(jq -c '[.[] | .estimate == null]' "$tmp/never.json")" = "[false,true,true]" ] ||
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
