# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the mpxkit stat tests (test_stat_cli.sh, test_stat_attach.sh, test_stat_cpus.sh,
# test_stat_runs.sh) and test_record_perf_cli.sh, after they set $tmp, their scratch directory.

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

# own_lines FILE: FILE without valgrind's own lines (under MPXKIT_VALGRIND, on stderr with ours).
own_lines() {
	grep -Ev '^(--|==)[0-9]+(--|==)' "$1" >"$1.own"
	mv "$1.own" "$1"
}

# expect_line STATUS PATTERN CMD...: as expect, and stderr is that one line.
expect_line() {
	expect "$@"
	shift 2
	own_lines "$tmp/err"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: more than one line: $(cat "$tmp/err")"
}

# skip_without_perf: exit 77 (SKIP) where the kernel refuses perf_event_open altogether.
# mpxkit list opens nothing (doc/events.md), so a count tells whether perf_event_open works.
skip_without_perf() {
	if ! $MPXKIT stat -e task-clock -- true >/dev/null 2>"$tmp/err"; then
		echo "SKIP: perf_event_open is refused here: $(cat "$tmp/err")"
		exit 77
	fi
}

# tasks PID: how many threads PID has now (0 once it is gone).
tasks() {
	ls "/proc/$1/task" 2>/dev/null | wc -l
}

# counting PID [N]: waits until mpxkit (PID) has N threads (default 2): its rotation threads
# exist once every engine started, so the counters (the exact ones first) are all enabled.
# Only an engine that multiplexes has one: the stat runs it waits for say --multiplex all
# (under the default, hardware, software events are counted all the time, with no thread).
counting() {
	_n=${2:-2}
	_i=0
	while [ "$(tasks "$1")" -lt "$_n" ]; do
		[ -d "/proc/$1" ] || fail "mpxkit ended before it counted: $(cat "$tmp/err" 2>/dev/null)"
		_i=$((_i + 1))
		[ $_i -lt 600 ] || fail "mpxkit has not started counting after 60 s"
		sleep 0.1
	done
}

# field FILE EVENT COLUMN [COMM]: a column of EVENT's CSV row (of thread COMM under --per-thread).
field() {
	awk -F, -v ev="$2" -v col="$3" -v comm="${4:-}" '
		NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		$k["event"] == ev && (comm == "" || $k["comm"] == comm) { print $k[col] }' "$1"
}

# wait_asleep PID COMM: waits (up to 10 s) until PID runs COMM and sleeps, its CPU time
# (/proc/PID/schedstat) the same at two looks 50 ms apart: a program still in its exec or
# loader would be counted.  False when it never settled.
wait_asleep() {
	_i=0
	_was=
	while [ $_i -lt 200 ]; do
		_now=$(cut -d' ' -f1 "/proc/$1/schedstat" 2>/dev/null)
		if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] &&
			[ "$(sed 's/.*) //; s/ .*//' "/proc/$1/stat" 2>/dev/null)" = S ] &&
			[ -n "$_now" ] && [ "$_now" = "$_was" ]; then
			return 0
		fi
		_was=$_now
		sleep 0.05
		_i=$((_i + 1))
	done
	return 1
}

# near E X PCT: E within PCT percent of X (both whole numbers, X > 0).
near() {
	awk -v e="$1" -v x="$2" -v p="$3" 'BEGIN { d = e - x; if (d < 0) d = -d; exit !(x > 0 && d <= p / 100 * x) }'
}
