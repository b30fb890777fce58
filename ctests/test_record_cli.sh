#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit record end to end: usage and failure lines, and a real recording checked against callgrind's own totals.
set -u
: "${MPXKIT:?run through make check}" "${top_builddir:?run through make check}"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind is not installed: skipping"
	exit 77
fi
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
mpxkit="${MPXKIT_VALGRIND:-} $MPXKIT"
workload=$top_builddir/data/kernels/lu
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-record-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0

ok() {
	echo "ok - $1"
}

not_ok() {
	echo "not ok - $1"
	failed=1
}

# expect DESCRIPTION STATUS STDERR_PATTERN -- ARGS...: exactly one line of mpxkit's on stderr
# (besides the program's own and the "written to" summary), matching the pattern.
expect() {
	desc=$1 want=$2 pattern=$3
	shift 4
	# shellcheck disable=SC2086
	$mpxkit record "$@" >"$tmp/out" 2>"$tmp/stderr" </dev/null
	got=$?
	grep '^mpxkit record: ' "$tmp/stderr" | grep -v ' events written to ' >"$tmp/err"
	lines=$(wc -l <"$tmp/err")
	if [ "$got" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -q -- "$pattern" "$tmp/err"; then
		ok "$desc"
	else
		not_ok "$desc: status $got (want $want), $lines error lines:"
		sed 's/^/#   /' "$tmp/stderr"
	fi
}

# --- usage --------------------------------------------------------------------------------------
# shellcheck disable=SC2086
$mpxkit record --help >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^usage: mpxkit record -o TRACE' "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "--help: usage on stdout, status 0"
else
	not_ok "--help"
fi
expect "unknown option" 1 "unknown option '--bogus'.*try 'mpxkit record --help'" -- \
	--bogus -o "$tmp/x.csv" -- true
expect "option without its argument" 1 "option '-o' needs an argument" -- -o
expect "no command" 1 "no command to record" -- -o "$tmp/x.csv"
expect "no output" 1 "no output file" -- -- true
expect "output on stdout refused" 1 "name a file" -- -o - -- true
expect "bad interval" 1 "--interval-bb 0: not a whole number in \[1, 1000000000000\]" -- -i 0 -o "$tmp/x.csv" -- true
expect "bad interval text" 1 "--interval-bb 1e6: not a whole number" -- -i 1e6 -o "$tmp/x.csv" -- true
expect "bad geometry" 1 "--LL: LL: 3000000 bytes / (16 ways x 64-byte lines) is not a power" -- \
	--LL 3000000,16,64 -o "$tmp/x.csv" -- true
expect "bad --meta" 1 "--meta: 'novalue' is not KEY=VALUE" -- --meta novalue -o "$tmp/x.csv" -- true
expect "reserved --meta" 1 "--meta: 'command' is set by the recorder" -- \
	--meta command=x -o "$tmp/x.csv" -- true
expect "bad --env" 1 "--env: '=x' is not KEY=VALUE" -- --env =x -o "$tmp/x.csv" -- true

# --- failures: one line, status 2, nothing under the final name ----------------------------------
expect "command not found" 2 "program 'mpxkit-no-such-command' not found on PATH" -- \
	-o "$tmp/x.csv" -- mpxkit-no-such-command
printf 'not a program\n' >"$tmp/plain"
expect "command not executable" 2 "program '$tmp/plain' is not an executable file" -- \
	-o "$tmp/x.csv" -- "$tmp/plain"
expect "valgrind missing" 2 "valgrind '/nonexistent/valgrind' not found" -- \
	--valgrind /nonexistent/valgrind -o "$tmp/x.csv" -- "$workload" 1
expect "output directory missing" 2 "cannot create $tmp/none/x.csv: No such file or directory" -- \
	-o "$tmp/none/x.csv" -- "$workload" 1
expect "output is a directory" 2 "cannot write $tmp: Is a directory" -- -o "$tmp" -- "$workload" 1
expect "command fails" 2 "lu exited with status 2; no trace written" -- \
	-o "$tmp/x.csv" -- "$workload" 0
expect "program that execs another" 2 "valgrind wrote an empty profile: did the program exec" -- \
	-o "$tmp/x.csv" -- "$(command -v env)" true
if [ -e "$tmp/x.csv" ] || ls "$tmp"/x.csv.tmp.* >/dev/null 2>&1; then
	not_ok "failed runs left output behind"
else
	ok "failed runs left no output"
fi
expect "--keep-failed keeps the trace" 0 "lu exited with status 2; trace kept" -- \
	--keep-failed -o "$tmp/failed.csv" -- "$workload" 0
if grep -q '^# exit_status=2$' "$tmp/failed.csv"; then
	ok "exit_status=2 recorded"
else
	not_ok "exit_status=2 recorded"
fi
# Killed by a signal: the trace is kept, but the run is a failure all the same (status 2), as
# profile --keep-failed says (issue 25, item 8).
expect "--keep-failed, killed by SIGINT: kept, status 2" 2 "sh was killed by signal 2; trace kept" -- \
	--keep-failed -o "$tmp/killed.csv" -- sh -c 'kill -INT $$'
if [ -s "$tmp/killed.csv" ]; then
	ok "the killed command's trace was written"
else
	not_ok "the killed command's trace was written"
fi

# --- a real recording, checked against callgrind run directly ------------------------------------
geometry="--I1=32768,8,64 --D1=32768,8,64 --LL=2097152,16,64"
mkdir "$tmp/private"
# shellcheck disable=SC2086
TMPDIR=$tmp/private $mpxkit record -o "$tmp/lu.csv.gz" -i 20000 --clean-env \
	--env PATH=/usr/bin:/bin --meta input=none -- "$workload" 1 >"$tmp/lu.out" 2>"$tmp/err"
status=$?
if [ $status -eq 0 ] && grep -q '^n 160 ' "$tmp/lu.out"; then
	ok "recording ran the program with its stdout"
else
	not_ok "recording: status $status"
	sed 's/^/#   /' "$tmp/err"
fi
if [ -z "$(ls -A "$tmp/private")" ]; then
	ok "private dump directory removed"
else
	not_ok "private dump directory left behind: $(ls "$tmp/private")"
fi
gzip -dc "$tmp/lu.csv.gz" >"$tmp/lu.csv"

# The same program, options and environment, once without periodic dumps: callgrind's summary.
# stdout goes to a regular file in every run, since stdio buffers differently for /dev/null.
# shellcheck disable=SC2086
env -i PATH=/usr/bin:/bin valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes $geometry \
	--callgrind-out-file="$tmp/ref.out" "$workload" 1 >"$tmp/ref.stdout" 2>"$tmp/ref.log"
want_events=$(sed -n 's/^==[0-9]*== Events *: //p' "$tmp/ref.log")
want_totals=$(sed -n 's/^==[0-9]*== Collected : //p' "$tmp/ref.log")
got_events=$(grep -v '^#' "$tmp/lu.csv" | head -n 1 | cut -d, -f2- | tr , ' ')
got_totals=$(grep -v '^#' "$tmp/lu.csv" | awk -F, 'NR > 1 { for (i = 2; i <= NF; i++) s[i] += $i }
	END { for (i = 2; i <= NF; i++) printf "%s%.0f", (i > 2 ? " " : ""), s[i]; print "" }')
if [ -n "$want_events" ] && [ "$got_events" = "$want_events" ]; then
	ok "columns are callgrind's events: $got_events"
else
	not_ok "columns '$got_events', callgrind '$want_events'"
fi
if [ -n "$want_totals" ] && [ "$got_totals" = "$want_totals" ]; then
	ok "column sums equal callgrind's totals of an undumped run: $got_totals"
else
	not_ok "column sums '$got_totals', callgrind '$want_totals'"
fi

# One row per dump file of the same run with the same interval.
mkdir "$tmp/dumps"
# shellcheck disable=SC2086
env -i PATH=/usr/bin:/bin valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes $geometry \
	--dump-every-bb=20000 --callgrind-out-file="$tmp/dumps/cg.out" "$workload" 1 \
	>"$tmp/ref.stdout" 2>/dev/null
files=$(ls "$tmp/dumps" | wc -l)
rows=$(grep -v '^#' "$tmp/lu.csv" | tail -n +2 | wc -l)
if [ "$files" -gt 5 ] && [ "$rows" -eq "$files" ]; then
	ok "$rows rows for $files dump files"
else
	not_ok "$rows rows for $files dump files"
fi

vg_version=$(valgrind --version | sed 's/^valgrind-//')
for line in "tool=callgrind" "valgrind=$vg_version" "command=$workload 1" "interval_bb=20000" \
	"cache_I1=32768,8,64" "cache_D1=32768,8,64" "cache_LL=2097152,16,64" "exit_status=0" \
	"env=PATH=/usr/bin:/bin" "input=none"; do
	if grep -q -x -F "# $line" "$tmp/lu.csv"; then
		ok "metadata $line"
	else
		not_ok "metadata $line missing"
	fi
done

# Determinism: the same recording again gives the same bytes.
# shellcheck disable=SC2086
$mpxkit record -o "$tmp/again.csv.gz" -i 20000 --clean-env --env PATH=/usr/bin:/bin \
	--meta input=none -- "$workload" 1 >"$tmp/again.out" 2>/dev/null
if cmp -s "$tmp/lu.csv.gz" "$tmp/again.csv.gz"; then
	ok "re-recording gives an identical file"
else
	not_ok "re-recording differs"
fi

# Inherited signal dispositions do not leak in: gzip installs its handlers only for signals
# that are not ignored, so under nohup (SIGHUP ignored) its counts would otherwise change.
if command -v gzip >/dev/null 2>&1; then
	head -c 100000 "$tmp/lu.csv" >"$tmp/input"
	gz=$(command -v gzip)
	# shellcheck disable=SC2086
	$mpxkit record -o "$tmp/hup1.csv" -i 20000 --clean-env -- "$gz" -c "$tmp/input" \
		>"$tmp/gz1.out" 2>/dev/null
	# shellcheck disable=SC2086
	(trap '' HUP; $mpxkit record -o "$tmp/hup2.csv" -i 20000 --clean-env -- "$gz" -c "$tmp/input" \
		>"$tmp/gz2.out" 2>/dev/null)
	if [ -s "$tmp/hup1.csv" ] && cmp -s "$tmp/hup1.csv" "$tmp/hup2.csv"; then
		ok "an ignored SIGHUP in the caller does not change the recording"
	else
		not_ok "an ignored SIGHUP in the caller changed the recording"
	fi
fi

# shellcheck source=ctests/children.sh
. "$top_srcdir/ctests/children.sh"
# A signal sent to the recorder alone stops the program and leaves nothing behind: valgrind
# gone, and no private directory (or valgrind FIFO) in TMPDIR.  SIGKILL cannot be caught:
# valgrind dies with the recorder, and only the private directory stays.
# signalled SIG: starts a recording of sleep 60 in the background, sends SIG to the recorder
# once valgrind runs; $status, $left (what TMPDIR holds) and $child_left (valgrind's pid, if
# it still runs) describe the outcome.
signalled() {
	mkdir "$tmp/sig-$1"
	# shellcheck disable=SC2086
	TMPDIR="$tmp/sig-$1" $mpxkit record -o "$tmp/sig-$1.csv" -- sleep 60 \
		>/dev/null 2>"$tmp/sig-$1.err" &
	rec=$!
	# valgrind running the program, once the recorder's child has exec'd it.  Not 'sleep 60'
	# alone: a subshell of a wrapper still running before the recorder (libtool's, under
	# check-valgrind) has the recorder's command line too, and a signal sent then reached the
	# wrapper (SIGHUP killed it, a background shell ignores SIGINT) on a loaded machine.
	child=$(first_child "$rec" 'tool=callgrind.*sleep 60')
	sleep 0.5 # valgrind has started the program
	kill -s "$1" "$rec"
	wait "$rec"
	status=$?
	# After a SIGKILL, valgrind ends by its parent-death signal, which takes effect later, not
	# at once (10 to 56 ms seen, more under memcheck on a loaded machine): up to 10 s for it.
	child_left=
	_i=0
	while [ -n "$child" ] && still_runs "$child" && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ -n "$child" ] && still_runs "$child" && child_left=$child
	left=$(ls -A "$tmp/sig-$1")
	[ -n "$child_left" ] && kill -KILL "$child_left"
}
for sig in TERM INT HUP; do
	signalled $sig
	num=$(kill -l $sig)
	if [ -n "$child" ] && [ "$status" -eq 2 ] && [ -z "$child_left" ] && [ -z "$left" ] &&
		grep -q "sleep was killed by signal $num" "$tmp/sig-$sig.err" && [ ! -e "$tmp/sig-$sig.csv" ]; then
		ok "SIG$sig to the recorder: valgrind stopped, nothing left, status 2"
	else
		not_ok "SIG$sig: child '$child', status $status, still running '$child_left', left '$left': $(cat "$tmp/sig-$sig.err")"
	fi
done
signalled KILL
if [ -n "$child" ] && [ -z "$child_left" ]; then
	ok "SIGKILL to the recorder: valgrind killed with it"
else
	not_ok "SIGKILL: child '$child' still running '$child_left'"
fi

exit $failed
