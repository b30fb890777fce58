#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit eval end to end: usage, one-line errors, hand-computed scores, csv = table = json, plots.
set -u
: "${MPXKIT:?run through make check}"

for tool in jq xmllint gzip awk; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$tool is not installed (build-aux/debian-packages lists it): skipping"
		exit 77
	fi
done
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
mpxkit="${MPXKIT_VALGRIND:-} $MPXKIT"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-eval-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0

ok() {
	echo "ok - $1"
}

not_ok() {
	echo "not ok - $1"
	failed=1
}

# run ARGS...: runs mpxkit eval, leaving stdout in $tmp/out, stderr in $tmp/err, status in $status.
run() {
	# shellcheck disable=SC2086
	$mpxkit eval "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}

# expect DESCRIPTION STATUS PATTERN ARGS...: that status, nothing on stdout, one stderr line matching.
expect() {
	desc=$1 want=$2 pattern=$3
	shift 3
	run "$@"
	lines=$(wc -l <"$tmp/err")
	if [ "$status" -eq "$want" ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		grep -q -- "$pattern" "$tmp/err"; then
		ok "$desc"
	else
		not_ok "$desc: status $status (want $want), $lines stderr lines, stdout $(wc -c <"$tmp/out") bytes:"
		sed 's/^/#   /' "$tmp/err"
	fi
}

# Two events, one counter: G = 2, two rotations.  a is seen in slice 0 (10, 20) and
# truly counts 40 and 40; b is seen in slice 1 (3, 2) and truly counts 4 and 4.
cat >"$tmp/small.csv" <<'EOF'
# program=hand
step,a,b
0,10,1
1,30,3
2,20,2
3,20,2
EOF
printf 'step,a,b\n0,1,2\n1,3\n' >"$tmp/ragged.csv"
mkdir "$tmp/dir"
cp "$tmp/small.csv" "$tmp/dir/one.csv"
gzip -c "$tmp/small.csv" >"$tmp/dir/two.csv.gz"
echo "not a trace" >"$tmp/dir/notes.txt"

# --- usage ------------------------------------------------------------------------------------
run --help
if [ "$status" -eq 0 ] && grep -q '^usage: mpxkit eval' "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "--help: usage on stdout, status 0"
else
	not_ok "--help: status $status"
fi
# - is standard input, read once: the same scores as the file, under the name "-".
# shellcheck disable=SC2086
$mpxkit eval -f csv -e fixed,cam - <"$tmp/small.csv" >"$tmp/out" 2>"$tmp/err"
sed 's/^-,/FILE,/' "$tmp/out" >"$tmp/stdin.out"
run -f csv -e fixed,cam "$tmp/small.csv"
sed "s|^$tmp/small.csv,|FILE,|" "$tmp/out" >"$tmp/file.out"
if [ "$status" -eq 0 ] && [ -s "$tmp/file.out" ] && cmp -s "$tmp/stdin.out" "$tmp/file.out"; then
	ok "- reads the trace from standard input"
else
	not_ok "- (standard input): $(head -c 300 "$tmp/stdin.out")"
fi
expect "standard input twice" 1 "'-' (standard input) given twice" - "$tmp/small.csv" -
expect "unknown option" 1 "unknown option '--bogus'.*try 'mpxkit eval --help'" --bogus "$tmp/small.csv"
expect "option without a value" 1 "option '--counters' needs an argument" "$tmp/small.csv" --counters
expect "zero counters" 1 "--counters 0: not a whole number in \[1, 1048576\]" -c 0 "$tmp/small.csv"
expect "too many counters" 1 "--counters 99999999999: not a whole number in \[1, 1048576\]" \
	-c 99999999999 "$tmp/small.csv"
expect "bad format" 1 "--format takes table, csv or json" -f xml "$tmp/small.csv"
expect "unknown estimator" 1 "unknown estimator 'magic'" -e fixed,magic "$tmp/small.csv"
expect "ref-rate without reference" 1 "estimator ref-rate needs --reference" -e ref-rate "$tmp/small.csv"
expect "no trace" 1 "no trace given"
expect "plot without event" 1 "--plot, --trace and --event go together" --plot "$tmp/p.svg" --trace "$tmp/small.csv"

# --- bad input --------------------------------------------------------------------------------
expect "ragged trace" 2 "ragged.csv:3: ragged row: 2 fields, the header has 3" "$tmp/ragged.csv"
expect "bad trace among good ones: no partial output" 2 "ragged.csv:3: ragged row" \
	"$tmp/small.csv" "$tmp/ragged.csv"
expect "missing trace" 2 "missing.csv: No such file or directory" "$tmp/missing.csv"
expect "unknown reference" 2 "no reference event 'zz'" -r zz "$tmp/small.csv"
expect "too short after cleaning" 2 "4 steps leave nothing after tail truncation" --clean "$tmp/small.csv"
expect "nothing from --from-step on" 2 "small.csv: 4 steps leave nothing from step 4 on" \
	--from-step 4 "$tmp/small.csv"
expect "negative --from-step" 1 "--from-step -1: not a whole number in \[0, 1099511627776\]" \
	--from-step -1 "$tmp/small.csv"
printf 'step,a,b\n0,1,2\n' >"$tmp/one-row.csv"
expect "one slice, two groups" 2 "1 slices make no whole window of 2 slices" -c 1 "$tmp/one-row.csv"
printf 'a\nzz\n' >"$tmp/groups.txt"
expect "group file naming a missing event" 2 "groups.txt:2: .*small.csv has no event 'zz'" \
	-g "$tmp/groups.txt" "$tmp/small.csv"
mkdir "$tmp/empty"
expect "unknown schedule, no such file" 1 \
	"no schedule named 'nosuch' and no group file 'nosuch' (schedules: round-robin, groups, prior, adaptive)" \
	-s nosuch "$tmp/small.csv"
expect "bad schedule key" 1 "schedule 'adaptive:speed=2': adaptive has no setting 'speed'; it takes floor=M, startup=S, weight=K, decay=D, keep=F, measure=B, power=A" \
	-s round-robin,adaptive:speed=2 "$tmp/small.csv"
expect "groups without a file" 1 "schedule groups needs --groups FILE" -s groups "$tmp/small.csv"
printf 'a a\n' >"$tmp/dup-groups.txt"
expect "bad group file as a schedule" 2 "dup-groups.txt:1: event 'a' is already in group 1" \
	-s "$tmp/dup-groups.txt" "$tmp/small.csv"
expect "zero window" 1 "--window takes a whole number >= 1" -w 0 "$tmp/small.csv"
expect "directory without traces" 2 "no \*.csv or \*.csv.gz trace" "$tmp/empty"

# --- hand-computed scores ---------------------------------------------------------------------
# fixed: a = 2x(10, 20) = (20, 40) against (40, 40): RA = 1 - 20/80 = 0.75, total 0.75,
#        DTW on log10(1+x) = log10(41) - log10(21) = 0.290565 (the diagonal; the second cell costs 0).
#        b = (6, 4) against (4, 4): RA = 1 - 2/8 = 0.75, DTW = log10(7/5) = 0.146128.
# linear-dira: a = (2x10 + (20-10)/2, 2x20) = (25, 40): RA = 1 - 15/80 = 0.8125,
#        DTW = log10(41/26) = 0.197811.
# linear-tam: b = (2x3, 2x(3+2)/2 + (2-3)/2) = (6, 4.5): RA = 1 - 2.5/8 = 0.6875.
run -c 1 -f csv "$tmp/small.csv"
check_csv() {
	line=$(grep -F ",$1,$2," "$tmp/out" | cut -d, -f1-7)
	if [ "$line" = "$tmp/small.csv,$1,$2,$3,round-robin" ]; then
		ok "csv: $1 by $2 = $3"
	else
		not_ok "csv: $1 by $2: got '$line', want '...,$3'"
	fi
}
if [ "$status" -eq 0 ] && [ "$(head -1 "$tmp/out")" = "trace,event,estimator,ra,total_accuracy,dtw,schedule,interval_coverage,total_in_interval,half_width,merge,total_half_width" ] &&
	[ "$(wc -l <"$tmp/out")" -eq 11 ]; then
	ok "csv: header and 2 events x 5 estimators"
else
	not_ok "csv: status $status, $(wc -l <"$tmp/out") lines"
fi
check_csv a fixed "0.750000,0.750000,0.290565"
check_csv b fixed "0.750000,0.750000,0.146128"
check_csv a linear-dira "0.812500,0.812500,0.197811"
case $(grep -F ',b,linear-tam,' "$tmp/out") in
*,b,linear-tam,0.687500,*) ok "csv: b by linear-tam RA 0.6875" ;;
*) not_ok "csv: b by linear-tam" ;;
esac
cp "$tmp/out" "$tmp/small.out.csv"

# --- --from-step ------------------------------------------------------------------------------
# From step 1: one rotation of steps 1-2 (step 3 is a partial rotation).  a is seen in step 1
# (30), so fixed gives 60 against 30 + 20 = 50: RA = TA = 1 - 10/50 = 0.8, DTW log10(61/51) =
# 0.077760; b is seen in step 2 (2): 4 against 3 + 2 = 5, RA 0.8, DTW log10(6/5) = 0.079181.
run -c 1 -f csv -e fixed --from-step 1 "$tmp/small.csv"
if [ "$status" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 3 ] &&
	cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/small.csv,a,fixed,0.800000,0.800000,0.077760,round-robin" &&
	cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/small.csv,b,fixed,0.800000,0.800000,0.079181,round-robin"; then
	ok "--from-step 1: hand-computed scores of the rotation after it"
else
	not_ok "--from-step 1: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
run -c 1 -e fixed --from-step 2 "$tmp/small.csv"
if [ "$status" -eq 0 ] && grep -q '^# counted from step 2 of each trace$' "$tmp/out"; then
	ok "--from-step: the table says where counting started"
else
	not_ok "--from-step table: status $status"
fi

# --- group file --------------------------------------------------------------------------------
# Groups "b" then "a": a is now seen in slice 1 (30, 20), so fixed gives (60, 40) against (40, 40):
# RA 0.75 and DTW log10(61/41) = 0.172546; b comes first in the output.
printf '# b alone, then a\nb\n\na\n' >"$tmp/ba.txt"
run -c 1 -f csv -e fixed -g "$tmp/ba.txt" "$tmp/small.csv"
if [ "$status" -eq 0 ] && [ "$(sed -n 2p "$tmp/out" | cut -d, -f2)" = b ] &&
	cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/small.csv,a,fixed,0.750000,0.750000,0.172546,groups"; then
	ok "group file: order and slice follow the file"
else
	not_ok "group file: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi

# --- table = csv ------------------------------------------------------------------------------
run -c 1 "$tmp/small.csv"
cp "$tmp/out" "$tmp/small.table"
# Rebuild every table cell from the csv rounded to 3 decimals and compare with what the table says.
awk -F, 'NR == FNR { if (FNR > 1) { ra[$2 "," $3] = sprintf("%.3f", $4); dtw[$2 "," $3] = sprintf("%.3f", $6) }; next }
	FNR == 2 { for (i = 2; i <= NF; i++) est[i - 1] = $i; n = NF - 1; next }
	FNR > 3 && ($1 == "a" || $1 == "b") {
		for (i = 1; i <= n; i++) {
			cells++
			if ($(2 * i) != ra[$1 "," est[i]] || $(2 * i + 1) != dtw[$1 "," est[i]]) {
				print "mismatch " $1 " " est[i] ": " $(2 * i) " " $(2 * i + 1); bad = 1
			}
		}
	}
	END { if (cells != 10) { print "cells " cells; bad = 1 }; exit bad }' FS=, "$tmp/small.out.csv" FS=' ' "$tmp/small.table" >"$tmp/cmp"
if [ $? -eq 0 ] && [ "$status" -eq 0 ]; then
	ok "table: every per-event cell equals the csv value"
else
	not_ok "table differs from csv"
	sed 's/^/#   /' "$tmp/cmp" "$tmp/small.table"
fi
if grep -q '^RA < 0.9 *2 *2 ' "$tmp/small.table" && grep -q '^min RA *0.750 ' "$tmp/small.table"; then
	ok "table: summary rows"
else
	not_ok "table: summary rows"
	sed 's/^/#   /' "$tmp/small.table"
fi

# --- json -------------------------------------------------------------------------------------
run -c 1 -f json -r b "$tmp/small.csv"
if [ "$status" -eq 0 ] &&
	jq -e 'type == "array" and length == 6 and
		all(.[]; (keys == ["dtw", "estimator", "event", "half_width", "interval_coverage", "merge", "ra",
				  "schedule", "total_accuracy", "total_half_width", "total_in_interval", "trace"])
			and (.ra | type) == "number" and (.dtw | type) == "number")' "$tmp/out" >/dev/null &&
	[ "$(jq -r '[.[].estimator] | join(",")' "$tmp/out")" = "fixed,linear-dira,linear-tam,cam,dcam,ref-rate" ] &&
	[ "$(jq -r '[.[].event] | unique | join(",")' "$tmp/out")" = "a" ]; then
	ok "json: parses, 6 objects with the right fields, reference b not scored, ref-rate added"
else
	not_ok "json: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
# ref-rate with a single group (C = 2, b the reference): a is seen in every slice, so exact.
if [ "$(jq -r '.[] | select(.estimator == "ref-rate") | .ra' "$tmp/out")" = "1" ]; then
	ok "json: ref-rate exact when G = 1"
else
	not_ok "json: ref-rate RA $(jq -r '.[] | select(.estimator == "ref-rate") | .ra' "$tmp/out")"
fi

# --- merging steps into slices ----------------------------------------------------------------
# 9 steps of a and b on one counter; --merge 2 sums steps 2j and 2j+1 into slice j (step 8 left
# out): a 4 12 4 4, b 2 2 4 4, the trace coarse.csv holds by hand.  G = 2: a is seen in slices 0
# and 2 (4, 4) and truly counts 16 and 8, so fixed's 8 and 8 score RA 1 - 8/24 = 0.666667 and
# total accuracy 1 - 8/24; b is seen in slices 1 and 3 (2, 4) for 4 and 8: fixed is exact.
printf 'step,a,b\n0,1,2\n1,3,0\n2,5,1\n3,7,1\n4,2,2\n5,2,2\n6,4,0\n7,0,4\n8,9,9\n' >"$tmp/fine.csv"
printf 'step,a,b\n0,4,2\n2,12,2\n4,4,4\n6,4,4\n' >"$tmp/coarse.csv"
run -c 1 -f csv -e fixed,linear-dira,cam --merge 2 "$tmp/fine.csv"
cut -d, -f2-10,12 "$tmp/out" >"$tmp/merged.out"
if [ "$status" -eq 0 ] && [ "$(cut -d, -f11 "$tmp/out" | sort -u)" = "$(printf '2\nmerge')" ] &&
	cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/fine.csv,a,fixed,0.666667,0.666667,[0-9.]*,round-robin" &&
	cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/fine.csv,b,fixed,1.000000,1.000000,0.000000,round-robin"; then
	ok "--merge 2: fixed's hand-computed scores, merge column 2"
else
	not_ok "--merge 2: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
run -c 1 -f csv -e fixed,linear-dira,cam "$tmp/coarse.csv"
cut -d, -f2-10,12 "$tmp/out" >"$tmp/coarse.out"
if [ "$status" -eq 0 ] && [ "$(wc -l <"$tmp/coarse.out")" -eq 7 ] && cmp -s "$tmp/merged.out" "$tmp/coarse.out"; then
	ok "--merge 2 scores as the trace summed by hand, for every estimator"
else
	not_ok "--merge 2 differs from the hand-merged trace"
	diff "$tmp/merged.out" "$tmp/coarse.out" | sed 's/^/#   /'
fi
run -c 1 -f json -e fixed --merge 1,2 "$tmp/fine.csv"
if [ "$status" -eq 0 ] && jq -e 'length == 4 and ([.[].merge] | unique) == [1, 2]' "$tmp/out" >/dev/null; then
	ok "--merge 1,2: a row per value"
else
	not_ok "--merge 1,2 json: status $status"
fi
run -c 1 -e fixed --merge 1,2 "$tmp/fine.csv"
if [ "$status" -eq 0 ] && grep -q '^# slices of 1 step$' "$tmp/out" && grep -q '^# slices of 2 steps$' "$tmp/out" &&
	[ "$(grep -c '^mean' "$tmp/out")" -eq 2 ]; then
	ok "table: one table per --merge value"
else
	not_ok "table with --merge: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
expect "--merge 0" 1 "--merge takes whole numbers >= 1, comma-separated" --merge 0 "$tmp/fine.csv"
expect "--merge x" 1 "--merge takes whole numbers >= 1, comma-separated" --merge 2,x "$tmp/fine.csv"
expect "--merge twice" 1 "--merge: 2 given twice" --merge 2,2 "$tmp/fine.csv"
expect "--merge past the trace" 2 "fine.csv: trace: 9 steps are fewer than the 10 of one merged step" \
	--merge 10 "$tmp/fine.csv"
expect "--plot with two --merge values" 1 "--plot takes one --merge value" --merge 1,2 \
	--plot "$tmp/m.svg" --trace "$tmp/fine.csv" --event a

# --- intervals --------------------------------------------------------------------------------
# With b the reference and one counter, G = 1: every estimator counts a in every slice, so its
# intervals are the counts themselves: every window and the total hold the truth, half-width 0,
# the total's too.
if jq -e 'all(.[]; .interval_coverage == 1 and .total_in_interval == true and .half_width == 0 and
		.total_half_width == 0)' \
	"$tmp/out" >/dev/null; then
	ok "json: the intervals of an event counted all the time are exact"
else
	not_ok "json: intervals at G = 1"
	sed 's/^/#   /' "$tmp/out"
fi
# Round-robin, G = 2: fixed's first window of a has no spread yet (a's one counted slice so
# far), an open bound, so a's median half-width over its 2 windows is infinite.
if [ "$(grep -F ',a,fixed,' "$tmp/small.out.csv" | cut -d, -f8-10)" = "1.000000,true,inf" ]; then
	ok "csv: an open bound holds the truth and has an infinite half-width"
else
	not_ok "csv: open bound: $(grep -F ',a,fixed,' "$tmp/small.out.csv")"
fi
expect "bad --level" 1 "--level takes a number above 0 and at most 0.99" --level 1 "$tmp/small.csv"
expect "bad --level text" 1 "--level takes" --level 0.9x "$tmp/small.csv"
run -c 1 -f csv -e linear-dira --level 0.5 "$tmp/small.csv"
narrow=$(grep -F ',a,linear-dira,' "$tmp/out" | cut -d, -f10)
run -c 1 -f csv -e linear-dira --level 0.99 "$tmp/small.csv"
wide=$(grep -F ',a,linear-dira,' "$tmp/out" | cut -d, -f10)
if [ -n "$narrow" ] && awk -v a="$narrow" -v b="$wide" 'BEGIN { exit !(a + 0 > 0 && a + 0 < b + 0) }'; then
	ok "--level: a higher level, a wider interval ($narrow < $wide)"
else
	not_ok "--level: half-widths $narrow and $wide"
fi
run -c 1 "$tmp/small.csv"
if [ "$status" -eq 0 ] && grep -q '^coverage ' "$tmp/out" && grep -q '^total cov\. ' "$tmp/out" &&
	grep -q '^half-width ' "$tmp/out" && grep -q '^total width ' "$tmp/out"; then
	ok "table: coverage and width per estimator"
else
	not_ok "table: interval rows"
fi

# --- schedules ---------------------------------------------------------------------------------
# Two schedules x two estimators: 2 events x 4 rows, each with its schedule; windows of 2 slices.
run -c 1 -f json -w 2 -s round-robin,adaptive -e fixed,linear-dira "$tmp/small.csv"
if [ "$status" -eq 0 ] &&
	jq -e 'length == 8 and ([.[].schedule] | unique) == ["adaptive", "round-robin"] and
		all(.[]; has("schedule"))' "$tmp/out" >/dev/null; then
	ok "--schedule: one row per trace, event, schedule and estimator, with its schedule"
else
	not_ok "--schedule json: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
# A group file given as the schedule is --groups FILE.
run -c 1 -f csv -e fixed -s "$tmp/ba.txt" "$tmp/small.csv"
if [ "$status" -eq 0 ] && cut -d, -f1-7 "$tmp/out" | grep -qx "$tmp/small.csv,a,fixed,0.750000,0.750000,0.172546,$tmp/ba.txt"; then
	ok "--schedule FILE: the group file's groups"
else
	not_ok "--schedule FILE: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
run -c 1 -s round-robin,prior "$tmp/small.csv"
if [ "$status" -eq 0 ] && grep -q '^# schedule prior, windows of G slices$' "$tmp/out" &&
	grep -q 'round-robin/fixed' "$tmp/out" && grep -q 'prior/dcam' "$tmp/out"; then
	ok "table: a column per schedule and estimator"
else
	not_ok "table with schedules: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi

# --- directories --------------------------------------------------------------------------------
run -c 1 -f csv -e fixed "$tmp/dir"
if [ "$status" -eq 0 ] && [ "$(cut -d, -f1 "$tmp/out" | sort -u | grep -c .)" -eq 3 ] &&
	grep -q "^$tmp/dir/one.csv,a,fixed,0.750000," "$tmp/out" &&
	grep -q "^$tmp/dir/two.csv.gz,a,fixed,0.750000," "$tmp/out"; then
	ok "DIR: its .csv and .csv.gz traces, same scores"
else
	not_ok "DIR: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi

# --- mlp -----------------------------------------------------------------------------------------
# u32 N / u16 N: little-endian bytes.  crc32 FILE: CRC-32 as zlib computes it, from gzip's trailer.
u32() {
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
u16() {
	# shellcheck disable=SC2059
	printf "$(printf '\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)))"
}
crc32() {
	gzip -c <"$1" | tail -c 8 | head -c 4
}
floats() { # floats N BITS: N copies of one float's bit pattern
	i=0
	while [ "$i" -lt "$1" ]; do
		u32 "$2"
		i=$((i + 1))
	done
}
# mlp's feature set and its number of inputs for half-window 1 (doc/estimators.md, "mlp",
# estimators/mlp_features.h): change both when the features change.
mlp_set=2 mlp_inputs=64
# A model written byte by byte from doc/model-format.md: those features, half-window 1, one
# dense identity layer with W = 0 and b = 0, input and output unscaled: its output is y = 0
# whatever the features.  The mlp estimate (doc/estimators.md) is then linear-dira's,
# max(a, G a + (b - a)(G - 1)/2), b the next rotation's count (b = a in the last rotation).
body_size=$((16 + 4 * (2 * mlp_inputs + 2) + 4 * (mlp_inputs + 1)))
{ printf 'MPXM'; u16 1; u16 0; u32 $mlp_inputs; u32 1; u32 1; u32 $mlp_set; u32 1; u32 0
  u32 $body_size; } >"$tmp/head"
{ printf '\001\000\000\000'; u32 $mlp_inputs; u32 1; u32 0; floats $mlp_inputs 0
  floats $mlp_inputs 1065353216; u32 0; u32 1065353216; floats $((mlp_inputs + 1)) 0; } >"$tmp/body"
{ cat "$tmp/head"; crc32 "$tmp/head"; cat "$tmp/body"; crc32 "$tmp/body"; } >"$tmp/zero.mpxm"
# The model applies from MPXKIT_ESTIMATOR_MIN_LEARNED_ROTATIONS (11) rotations on
# (doc/estimators.md, "Short runs and flat windows"): long.csv has 14, G = 2, with a seen in
# slice 0 and b in slice 1, each rotation truly counting both of its steps.  The observations'
# steps differ by even numbers, so linear-dira's (b - a)/2 is whole and its rounding is exact.
# awk computes each estimate max(a, 2a + (b - a)/2) (b = a in the last rotation), then RA and
# total accuracy, from the file itself.
awk 'BEGIN { print "step,a,b"; for (s = 0; s < 28; s++)
	printf "%d,%d,%d\n", s, 10 + 2 * ((s * 7) % 11), 4 * ((s * 5) % 9) }' >"$tmp/long.csv"
closed_form() { # closed_form COLUMN: "ra,total_accuracy" of the closed form for that event
	awk -F, -v col="$1" 'NR > 1 { v[NR - 2] = $col; n = NR - 1 }
	END {
		for (k = 0; 2 * k + 1 < n; k++) {
			a = v[2 * k + col - 2]; b = 2 * k + 2 < n ? v[2 * k + 2 + col - 2] : a
			truth = v[2 * k] + v[2 * k + 1]; est = 2 * a + (b - a) / 2
			if (est < a) est = a
			err += est > truth ? est - truth : truth - est; te += truth; se += est
		}
		d = se > te ? se - te : te - se
		printf "%.6f,%.6f", 1 - err / te, 1 - d / te
	}' "$tmp/long.csv"
}
want_a=$(closed_form 2) want_b=$(closed_form 3)
run -c 1 -f csv -e mlp --model "$tmp/zero.mpxm" "$tmp/long.csv"
if [ "$status" -eq 0 ] && grep -q "^$tmp/long.csv,a,mlp,$want_a," "$tmp/out" &&
	grep -q "^$tmp/long.csv,b,mlp,$want_b," "$tmp/out"; then
	ok "mlp --model: a model written by hand gives the closed form ($want_a, $want_b)"
else
	not_ok "mlp --model: status $status, want a $want_a, b $want_b"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
# small.csv is 2 rotations: fixed's estimates, whatever the model (a: 20, 40; b: 6, 4).
run -c 1 -f csv -e fixed,mlp --model "$tmp/zero.mpxm" "$tmp/small.csv"
if [ "$status" -eq 0 ] && grep -q "^$tmp/small.csv,a,mlp,0.750000,0.750000," "$tmp/out" &&
	grep -q "^$tmp/small.csv,b,mlp,0.750000,0.750000," "$tmp/out" &&
	[ "$(grep -c ',fixed,0.750000,0.750000,' "$tmp/out")" -eq 2 ]; then
	ok "mlp on a run of 2 rotations: fixed's estimates"
else
	not_ok "mlp on a run of 2 rotations: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
run --list --model "$tmp/zero.mpxm"
if [ "$status" -eq 0 ] && grep -q '^mlp  *look-back 1, look-ahead 10 ' "$tmp/out"; then
	ok "--list --model: mlp's look-back is the model's half-window, its look-ahead 10"
else
	not_ok "--list --model: status $status"
	sed 's/^/#   /' "$tmp/out" "$tmp/err"
fi
# The default model: make check points MPXKIT_DATADIR at the source tree's data/.
shipped="${MPXKIT_DATADIR:-}/models/default.mpxm"
if [ -n "${MPXKIT_DATADIR:-}" ] && [ -r "$shipped" ]; then
	half=$(od -An -tu4 -j24 -N4 "$shipped" | tr -d ' ')
	run --list
	ahead=$((half > 10 ? half : 10))
	if [ "$status" -eq 0 ] && grep -q "^mlp  *look-back $half, look-ahead $ahead " "$tmp/out"; then
		ok "--list: the default model's half-window, $half"
	else
		not_ok "--list: want look-back $half from $shipped"
		sed 's/^/#   /' "$tmp/out" "$tmp/err"
	fi
	run -c 1 -f csv -e fixed,linear,nonlinear,mlp "$tmp/small.csv"
	if [ "$status" -eq 0 ] && [ "$(cut -d, -f3 "$tmp/out" | sed 1d | sort -u | tr '\n' ' ')" = \
		"cam fixed linear-dira mlp " ]; then
		ok "-e fixed,linear,nonlinear,mlp with the default model"
	else
		not_ok "-e fixed,linear,nonlinear,mlp: status $status"
		sed 's/^/#   /' "$tmp/out" "$tmp/err"
	fi
	run -c 1 -f csv -e mlp --model "$shipped" "$tmp/small.csv"
	cp "$tmp/out" "$tmp/named.csv"
	run -c 1 -f csv -e mlp "$tmp/small.csv"
	if [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/named.csv"; then
		ok "the default model is the one under MPXKIT_DATADIR"
	else
		not_ok "the default model differs from --model $shipped"
	fi
else
	not_ok "MPXKIT_DATADIR does not hold models/default.mpxm: '$shipped'"
fi
expect "missing model file" 2 "estimator mlp: cannot open $tmp/none.mpxm: No such file" \
	-e mlp --model "$tmp/none.mpxm" "$tmp/small.csv"
expect "not a model file" 2 "estimator mlp: $tmp/small.csv:0: wrong magic" \
	-e fixed,mlp --model "$tmp/small.csv" "$tmp/small.csv"
head -c 100 "$tmp/zero.mpxm" >"$tmp/short.mpxm"
expect "truncated model file" 2 "estimator mlp: $tmp/short.mpxm:100: truncated" -e mlp --model "$tmp/short.mpxm" \
	"$tmp/small.csv"
# Flip a byte of the last weight: the body checksum, at 40 + body_size, no longer matches.
end=$((40 + body_size))
{ head -c $((end - 4)) "$tmp/zero.mpxm"; printf '\001'; tail -c +$((end - 2)) "$tmp/zero.mpxm"; } \
	>"$tmp/flip.mpxm"
expect "model with a bad checksum" 2 "estimator mlp: $tmp/flip.mpxm:$end: body checksum" \
	-e mlp --model "$tmp/flip.mpxm" "$tmp/small.csv"
saved_datadir=${MPXKIT_DATADIR:-}
MPXKIT_DATADIR="$tmp/nowhere"
export MPXKIT_DATADIR
expect "no default model" 2 \
	"estimator mlp: cannot open $tmp/nowhere/models/default.mpxm: .* (the default model; " \
	-e mlp "$tmp/small.csv"
MPXKIT_DATADIR=$saved_datadir # empty is unset for mpxkit

# --- plot ---------------------------------------------------------------------------------------
run -c 1 --plot "$tmp/p.svg" --trace "$tmp/small.csv" --event a -f csv
if [ "$status" -eq 0 ] && xmllint --noout "$tmp/p.svg" 2>/dev/null &&
	[ "$(grep -c '<polyline' "$tmp/p.svg")" -eq 6 ] && [ "$(wc -l <"$tmp/out")" -eq 6 ] &&
	! ls "$tmp"/p.svg.tmp.* >/dev/null 2>&1; then
	ok "plot: well-formed SVG, OCOE + 5 series, scores of that event printed"
else
	not_ok "plot: status $status"
	sed 's/^/#   /' "$tmp/err"
fi
# The slices that counted a: slice 0 of each of the 2 windows of 2 slices, at -0.25 and 0.75.
if [ "$(grep -c '<title>counted (round-robin): x = ' "$tmp/p.svg")" -eq 2 ] &&
	grep -q '<title>counted (round-robin): x = -0.25, ' "$tmp/p.svg" &&
	grep -q '<title>counted (round-robin): x = 0.75, ' "$tmp/p.svg"; then
	ok "plot: the slices that counted the event are marked"
else
	not_ok "plot: counted slices not marked as expected"
fi
run -c 1 --log --plot "$tmp/log.svg" --trace "$tmp/small.csv" --event b -e fixed
if [ "$status" -eq 0 ] && xmllint --noout "$tmp/log.svg" 2>/dev/null &&
	grep -q 'log10(1+x) scale' "$tmp/log.svg" && [ "$(grep -c '<polyline' "$tmp/log.svg")" -eq 2 ]; then
	ok "plot: --log scale"
else
	not_ok "plot: --log, status $status"
fi
expect "plot of an unknown event" 2 "no multiplexed event 'zz'" -c 1 --plot "$tmp/q.svg" \
	--trace "$tmp/small.csv" --event zz
if [ ! -e "$tmp/q.svg" ]; then
	ok "plot: nothing written on failure"
else
	not_ok "plot: $tmp/q.svg written on failure"
fi

# DTW's band (doc/evaluation.md): 72 rotations by default, --band full for the whole matrix.
lu="$top_srcdir/data/corpus/lu.csv.gz"
$mpxkit eval -f csv "$lu" >"$tmp/band-default.csv" 2>"$tmp/err" &&
	$mpxkit eval -f csv --band 72 "$lu" >"$tmp/band-72.csv" 2>>"$tmp/err" &&
	$mpxkit eval -f csv --band full "$lu" >"$tmp/band-full.csv" 2>>"$tmp/err" &&
	$mpxkit eval -f csv --band 1000 "$lu" >"$tmp/band-1000.csv" 2>>"$tmp/err" || not_ok "band runs: $(cat "$tmp/err")"
cmp -s "$tmp/band-default.csv" "$tmp/band-72.csv" && ok "band: the default is --band 72" ||
	not_ok "band: the default is not --band 72"
cmp -s "$tmp/band-full.csv" "$tmp/band-1000.csv" && ok "band: full is a band wider than the trace" ||
	not_ok "band: --band full differs from --band 1000 on a 114-rotation trace"
# 2,400 steps of lu (600 rotations): a band only removes paths, so its cost is never below the
# full matrix's, and here it is above it somewhere (the default really is banded).
gzip -dc "$lu" | awk -F, '/^#/ { next } !h { print; h = 1; next } { r[n++] = $0 }
	END { for (i = 0; i < 2400; i++) { x = r[i % n]; sub(/^[^,]*/, i, x); print x } }' >"$tmp/long.csv"
$mpxkit eval -f csv "$tmp/long.csv" >"$tmp/long-band.csv" 2>"$tmp/err" &&
	$mpxkit eval -f csv --band full "$tmp/long.csv" >"$tmp/long-full.csv" 2>>"$tmp/err" ||
	not_ok "band on a long trace: $(cat "$tmp/err")"
# The dtw column found by its header, each file's in the pasted row.
verdict=$(paste -d, "$tmp/long-band.csv" "$tmp/long-full.csv" | awk -F, 'NR == 1 {
	m = NF / 2; for (i = 1; i <= m; i++) if ($i == "dtw") k = i; next }
	{ n++; if ($k + 1e-9 < $(m + k)) below++; if ($k > $(m + k) + 1e-6) above++ }
	END { printf "%d %d %d", n, below + 0, above + 0 }')
set -- $verdict
if [ "$1" -gt 0 ] && [ "$2" -eq 0 ] && [ "$3" -gt 0 ]; then
	ok "band on 600 rotations: never below the full matrix, above it on $3 of $1 scores"
else
	not_ok "band on 600 rotations: $1 scores, $2 below the full matrix, $3 above"
fi
expect "band: not a number" 1 "--band x: not 'full' or a whole number" --band x "$lu"

# --anchor: every estimator's run total is fixed's (so its total accuracy is fixed's, event by
# event and schedule by schedule); without it some estimator's differs, so the flag does work.
anchor_spread() { # anchor_spread FILE: (trace, event, schedule) keys whose total accuracies differ
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ k = $c["trace"] SUBSEP $c["event"] SUBSEP $c["schedule"]; v = $c["total_accuracy"]
		  if (k in lo) { if (v < lo[k]) lo[k] = v; if (v > hi[k]) hi[k] = v } else lo[k] = hi[k] = v }
		END { for (k in lo) n += hi[k] - lo[k] > 1e-9; print n + 0 }' "$1"
}
run -f csv -s round-robin,adaptive -e fixed,linear-dira,cam,mlp --anchor "$lu"
cp "$tmp/out" "$tmp/anchored.csv"
run -f csv -s round-robin,adaptive -e fixed,linear-dira,cam,mlp "$lu"
if [ "$(anchor_spread "$tmp/anchored.csv")" -eq 0 ] && [ "$(anchor_spread "$tmp/out")" -gt 0 ] &&
	[ "$(wc -l <"$tmp/anchored.csv")" -eq "$(wc -l <"$tmp/out")" ]; then
	ok "anchor: every estimator's total accuracy is fixed's"
else
	not_ok "anchor: $(anchor_spread "$tmp/anchored.csv") keys differ anchored, $(anchor_spread "$tmp/out") not"
fi

exit $failed
