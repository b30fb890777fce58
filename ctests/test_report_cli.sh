#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit report on a merged job whose figures are worked out by hand below: totals, spreads, imbalance, heat map.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-report-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# Four ranks of two threads; stop.total holds A and B per thread:
#   rank 0: 100 0, 100 0    rank 1: 100 0, 100 0    rank 2: 100 0, 130 0    rank 3: 300 5, 100 0
# and a series region "stop" (7 and 1 per step, two steps) that the default summary leaves out.
# A: total 1030; threads 100 x6, 130, 300: min 100, median 100, max 300; ranks 200 200 230 400:
#    median 215.  Beyond 1.25 x: rank 3 (400/215 = 1.86), threads 130 (1.3) and 300 (3).
# B: total 5; every median 0, so rank 3 and its thread with 5 are imbalanced.
vals="100 0 100 0  100 0 100 0  100 0 130 0  300 5 100 0"
set -- $vals
for r in 0 1 2 3; do
	{
		printf '# job.launcher=slurm\n# job.id=99.0\n# job.size=4\n# job.rank=%s\n' "$r"
		printf 'region,unit,start_ns,end_ns,cpu,numa,A,B\n'
		printf 'stop.total,thread%s1,0,10,0,0,%s,%s\n' "$r" "$1" "$2"
		printf 'stop.total,thread%s2,0,10,1,0,%s,%s\n' "$r" "$3" "$4"
		printf 'stop,thread%s1,0,5,0,0,7,1\nstop,thread%s1,5,10,0,0,7,1\n' "$r" "$r"
	} >"$tmp/r$r.csv"
	shift 4
	$MPXKIT pack "$tmp/r$r.csv" -o "$tmp/job.$r.pcz" || exit 99
done
$MPXKIT merge -o "$tmp/job.pcz" "$tmp"/job.[0-3].pcz || exit 99

run report --help
if [ "$status" -eq 0 ] && grep -q "^usage: mpxkit report" "$tmp/out"; then ok "report --help"; else not_ok "report --help"; fi

expect_out "csv summary" "event,total,thread_min,thread_median,thread_max,rank_min,rank_median,rank_max,imbalanced_ranks,imbalanced_threads
A,1030,100,100,300,200,215,400,1,2
B,5,0,0,5,0,0,5,1,1" report -f csv "$tmp/job.pcz"

expect_out "csv imbalance, worst first" "level,rank,thread,event,count,median,ratio
rank,3,,B,5,0,
thread,3,thread31,B,5,0,
thread,3,thread31,A,300,100,3.00
rank,3,,A,400,215,1.86
thread,2,thread22,A,130,100,1.30" report -f csv --imbalance "$tmp/job.pcz"

expect_out "a larger factor flags less" "level,rank,thread,event,count,median,ratio
rank,3,,B,5,0,
thread,3,thread31,B,5,0,
thread,3,thread31,A,300,100,3.00
rank,3,,A,400,215,1.86" report -f csv --imbalance --factor 1.5 "$tmp/job.pcz"

# --region stop: each thread that has a series, 2 steps of 7 and 1: four ranks, four units.
expect_out "another region" "event,total,thread_min,thread_median,thread_max,rank_min,rank_median,rank_max,imbalanced_ranks,imbalanced_threads
A,56,14,14,14,14,14,14,0,0
B,8,2,2,2,2,2,2,0,0" report -f csv -r stop "$tmp/job.pcz"

# One rank's own dump: its rank from the metadata.
expect_out "one rank's dump" "event,total,thread_min,thread_median,thread_max,rank_min,rank_median,rank_max,imbalanced_ranks,imbalanced_threads
A,400,100,200,300,400,400,400,0,2
B,5,0,2.5,5,5,5,5,0,2" report -f csv "$tmp/job.3.pcz"

run report -f json "$tmp/job.pcz"
if [ "$status" -eq 0 ] && command -v jq >/dev/null 2>&1; then
	got=$(jq -c '[.regions, .ranks, .units, .factor, (.events | map(.total)), (.imbalance | length)]' "$tmp/out")
	[ "$got" = '["stop.total",4,8,1.25,[1030,5],5]' ] && ok "json" || not_ok "json: $got"
elif [ "$status" -eq 0 ] && grep -q '"total": 1030' "$tmp/out"; then
	ok "json (no jq: totals only)"
else
	not_ok "json: status $status"
fi

run report "$tmp/job.pcz" -o "$tmp/report.txt" --svg "$tmp/heat.svg"
if [ "$status" -eq 0 ] && [ ! -s "$tmp/out" ] && grep -q '^A  *1,030 ' "$tmp/report.txt" &&
	grep -q '^# imbalance: 5 counts' "$tmp/report.txt"; then
	ok "table to a file"
else
	not_ok "table: $(cat "$tmp/err" "$tmp/report.txt")"
fi
# The heat map: 4 ranks x 2 events, the two imbalanced cells of rank 3 outlined.
outlined=$(grep -c 'stroke="#d00000"' "$tmp/heat.svg")
if grep -q '>rank 3<' "$tmp/heat.svg" && [ "$outlined" -eq 2 ] &&
	{ ! command -v xmllint >/dev/null 2>&1 || xmllint --noout "$tmp/heat.svg"; }; then
	ok "heat map: ranks x events, 2 cells outlined"
else
	not_ok "heat map: $outlined outlined"
fi

# Intervals (doc/pcz-format.md, "Intervals"): two ranks of one thread, A and B with bounds;
# 18446744073709551615 is 2^64-1 (unbounded above, or, as lo with value 0 and hi 0, not counted).
#   rank 0: A 100 in [90, 120], B not counted;   rank 1: A 50 in [50, 50], B 7 in [7, 2^64-1]
# A: total 150 in [140, 170], 0 not counted; B: 7 in [7, unbounded], 1 not counted, and only
# rank 1 is in B's spread (rank 0 has no count of it: never flagged as imbalanced).
max=18446744073709551615
for r in 0 1; do
	{
		printf '# job.launcher=slurm\n# job.id=98.0\n# job.size=2\n# job.rank=%s\n' "$r"
		printf '# interval_level=0.9\nregion,unit,start_ns,end_ns,A,A.lo,A.hi,B,B.lo,B.hi\n'
		[ "$r" -eq 0 ] && printf 'stop.total,thread1,0,10,100,90,120,0,%s,0\n' "$max"
		[ "$r" -eq 1 ] && printf 'stop.total,thread1,0,10,50,50,50,7,7,%s\n' "$max"
	} >"$tmp/iv$r.csv"
	$MPXKIT pack "$tmp/iv$r.csv" -o "$tmp/iv.$r.pcz" || exit 99
done
$MPXKIT merge -o "$tmp/iv.pcz" "$tmp"/iv.[01].pcz || exit 99
expect_out "intervals: bounds summed, not counted apart" "event,total,lo,hi,not_counted,thread_min,thread_median,thread_max,rank_min,rank_median,rank_max,imbalanced_ranks,imbalanced_threads
A,150,140,170,0,50,75,100,50,75,100,2,2
B,7,7,,1,7,7,7,7,7,7,0,0" report -f csv "$tmp/iv.pcz"
if $MPXKIT report "$tmp/iv.0.pcz" >"$tmp/out" 2>&1 && grep -q '^B  *<not counted> ' "$tmp/out" &&
	grep -q '90 % intervals' "$tmp/out"; then
	ok "a total none of whose values was counted shows <not counted>"
else
	not_ok "not counted: $(cat "$tmp/out")"
fi
# The same columns in version 1, which has no intervals: three plain events each.
$MPXKIT pack -c zstd "$tmp/iv1.csv" -o "$tmp/plain.1.pcz" || exit 99
expect_fail "merge: intervals and none" 2 "plain.1.pcz has no intervals" merge -o "$tmp/mixed.pcz" "$tmp/iv.0.pcz" "$tmp/plain.1.pcz"

expect_fail "no dump" 1 "need exactly one dump" report
expect_fail "bad format" 1 "table, csv or json" report -f xml "$tmp/job.pcz"
expect_fail "factor 1" 1 "--factor '1': a number above 1" report --factor 1 "$tmp/job.pcz"
expect_fail "no such region" 2 "no region named nosuch" report -r nosuch "$tmp/job.pcz"
expect_fail "not a dump" 2 "/dev/zero" report /dev/zero
expect_fail "full disk" 2 "/dev/full" report "$tmp/job.pcz" -o /dev/full
printf '# merge.ranks=1\nregion,unit,start_ns,end_ns,A\nr,thread1,0,1,1\n' >"$tmp/fake.csv"
$MPXKIT pack "$tmp/fake.csv" -o "$tmp/fake.pcz" || exit 99
expect_fail "merged file without rank prefixes" 2 "rank<R>.<unit>" report "$tmp/fake.pcz"

exit $failed
