#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit stat -r (repeats, perf stat's spread) and -I (intervals) of a command: the spread
# recomputed by hand from the printed runs, the intervals added up against exact counts.
set -u
: "${MPXKIT:=utils/mpxkit}"
: "${top_builddir:=.}"
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
work="$top_builddir/ctests/workload_pages" # PAGES MS STATUS: MS of CPU, PAGES pages touched
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=ctests/stat_common.sh
. "${top_srcdir:-.}/ctests/stat_common.sh"
skip_without_perf

# -r 3, CSV: each run's rows, then the means.  Task clock and page faults on one counter (so
# multiplexed, and different from run to run), with the exact counts; the last run's exit
# status (3) is stat's.
$MPXKIT stat -r 3 -e perf::TASK-CLOCK,perf::PAGE-FAULTS -c 1 --slice-us 1000 --exact -f csv \
	-o "$tmp/r.csv" -- "$work" 300 120 3
status=$?
cat "$tmp/r.csv"
[ $status = 3 ] || fail "stat -r 3 exited $status, not CMD's 3"
head -n 1 "$tmp/r.csv" |
	grep -qx 'run,event,estimate,counted_pct,lo,hi,spread_pct,exact,error_pct,error_abs' ||
	fail "-r: header $(head -n 1 "$tmp/r.csv")"
[ "$(grep -c '^[123],' "$tmp/r.csv")" = 6 ] || fail "-r 3: not 3 runs of 2 events"
# Each run's row has its interval around its estimate; the means' rows have none (-r's spread
# is theirs).
awk -F, 'NR > 1 && $1 != "" && $3 != "" && ($5 == "" || $5 > $3 || ($6 != "" && $3 > $6)) { bad = 1 }
	NR > 1 && $1 == "" && ($5 != "" || $6 != "") { bad = 1 } END { exit bad }' "$tmp/r.csv" ||
	fail "-r: a run's estimate outside its interval, or a mean with one: $(cat "$tmp/r.csv")"
[ "$(grep -c '^,' "$tmp/r.csv")" = 2 ] || fail "-r 3: not 2 means"
# By hand, from the printed runs: the mean, and perf stat's spread, the standard error of
# the mean over the mean (tools/perf/util/stat.c: sqrt(s^2 / n) / mean, s^2 with n - 1).
for ev in perf::TASK-CLOCK perf::PAGE-FAULTS; do
	awk -F, -v ev="$ev" '
		$2 != ev { next }
		$1 != "" { if ($3 != "") { x[++n] = $3; s += $3 }; e[++m] = $8; next }
		{ mean = $3; spread = $7; exact = $8 }
		END {
			if (n < 2) { print ev ": counted in " n " runs"; exit 1 }
			mu = s / n
			for (i = 1; i <= n; i++) ss += (x[i] - mu) ^ 2
			se = sqrt(ss / (n - 1) / n)
			want = mu ? 100 * se / mu : 0
			for (i = 1; i <= m; i++) es += e[i]
			# The printed figures are rounded: the mean to a whole count, the spread to
			# 0.01, and the runs each to a whole count.
			d = spread - want; if (d < 0) d = -d
			dm = mean - mu; if (dm < 0) dm = -dm
			dx = exact - es / m; if (dx < 0) dx = -dx
			# Fixed scaling estimates 0 where every counted slice saw 0 (a burst of page
			# faults can fall in the slices of the task clock every run): the mean is
			# then 0, its spread too, and there is nothing to divide by.
			tol = mu ? 0.005 + 100 * 0.5 / mu : 0.005
			if (dm > 1 || d > tol || dx > 1) {
				printf "%s: mean %s spread %s exact %s; by hand %.2f %.4f %.2f\n", ev, mean, spread, exact, mu, want, es / m
				exit 1
			}
			printf "ok: %s mean %s (by hand %.2f), spread %s%% (by hand %.4f%%)\n", ev, mean, mu, spread, want
		}' "$tmp/r.csv" || fail "-r: mean or spread of $ev"
done
# Every run's exact page faults: at least the 300 pages the workload touched.
awk -F, '$1 != "" && $2 == "perf::PAGE-FAULTS" && $8 < 300 { exit 1 }' "$tmp/r.csv" ||
	fail "-r: a run with fewer page faults than pages"

# The table: perf stat's "(3 runs)" and its spread "( +- x.xx% )" after the counted share.
$MPXKIT stat -r 3 -e perf::TASK-CLOCK,perf::CONTEXT-SWITCHES:u -c 2 -o "$tmp/r.txt" -- \
	"$work" 100 30 0 || fail "stat -r 3 exited $?"
cat "$tmp/r.txt"
grep -q "^ Performance counter stats for '$work 100 30 0' (3 runs) (mpxkit: 2 events" "$tmp/r.txt" ||
	fail "-r: header"
grep -Eq '^ +[0-9]+  perf::TASK-CLOCK +\(counted 100[.]0%\)  \( \+- +[0-9]+[.][0-9]{2}% \)$' \
	"$tmp/r.txt" || fail "-r: no spread for the task clock"
# Context switches are 0 in user mode every run: perf prints no spread that is 0.
grep -Eq '^ +0  perf::CONTEXT-SWITCHES:u +\(counted 100[.]0%\)$' "$tmp/r.txt" ||
	fail "-r: a spread of 0 shown"
grep -Eq '^ [0-9]+ rotations? in 3 runs$' "$tmp/r.txt" || fail "-r: rotations"
grep -Eq '^ +[0-9.]+ \+- [0-9.]+ seconds time elapsed' "$tmp/r.txt" || fail "-r: elapsed"
if command -v jq >/dev/null 2>&1; then
	$MPXKIT stat -r 2 -e perf::TASK-CLOCK -f json -o "$tmp/r.json" -- true ||
		fail "stat -r 2 -f json exited $?"
	[ "$(jq -c '[.[] | .run]' "$tmp/r.json")" = "[1,2,null]" ] || fail "-r json: $(cat "$tmp/r.json")"
fi

# -I of a command, not multiplexed (2 events, 2 counters): the page faults' rows add up to
# exactly what the exact rows add up to, at least the 300 pages; the task clock's within 0.1 %
# (the engine scales each slice to the slice's clock: 35 us of 151 ms seen under load).
# Counted all the time, each row's interval is the row's estimate itself (zero width).
$MPXKIT stat -I 20 -e perf::TASK-CLOCK,perf::PAGE-FAULTS -c 2 --exact -f csv -o "$tmp/i.csv" -- \
	"$work" 300 150 0 || fail "stat -I exited $?"
head -n 1 "$tmp/i.csv" | grep -qx 'time_s,event,estimate,counted_pct,lo,hi,exact,error_pct,error_abs' ||
	fail "-I: header $(head -n 1 "$tmp/i.csv")"
awk -F, 'NR > 1 { e[$2] += $3; x[$2] += $7; n[$2]++; if ($5 != $3 || $6 != $3) bad = 1 }
	END {
		for (ev in e) {
			printf "%s: %d rows, %d estimated, %d exact\n", ev, n[ev], e[ev], x[ev]
			d = e[ev] - x[ev]; if (d < 0) d = -d
			if (n[ev] < 2 || (ev == "perf::PAGE-FAULTS" && d != 0) || d > 0.001 * x[ev]) bad = 1
		}
		if (x["perf::PAGE-FAULTS"] < 300) bad = 1
		exit bad
	}' "$tmp/i.csv" || fail "-I: rows do not add up: $(cat "$tmp/i.csv")"
# Multiplexed (one counter), to stderr as they come: the estimated task clock's rows add up
# to the exact rows' sum within 1 %; each interval's counted share is between 0 and 100 %, and
# each row has its interval, "+- x%" after the share.
$MPXKIT stat -I 20 -e perf::TASK-CLOCK,perf::CPU-CLOCK -c 1 --slice-us 1000 --exact -- \
	"$work" 1 150 0 2>"$tmp/i.txt" || fail "stat -I -c 1 exited $?"
own_lines "$tmp/i.txt"
head -n 1 "$tmp/i.txt" | grep -Eq '^# +time +counts  events$' || fail "-I: header $(head -n 1 "$tmp/i.txt")"
awk '$3 == "perf::TASK-CLOCK" && $4 == "(counted" {
		pct = $5; sub(/%\)/, "", pct); if (pct + 0 < 0 || pct + 0 > 100) bad = 1
		if ($6 != "+-" || $7 !~ /^([0-9]+[.][0-9]{2}|inf)%$/ || $8 != "exact") bad = 1
		e += $2; x += $9
	}
	END { d = e - x; if (d < 0) d = -d; printf "task clock rows: %d estimated, %d exact\n", e, x
		exit bad || x == 0 || d > 0.01 * x }' "$tmp/i.txt" ||
	fail "-I -c 1: $(cat "$tmp/i.txt")"

echo "PASS: mpxkit stat -r and -I"
