#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit train end to end: usage, one-line errors, a model the loader accepts, the same bits twice.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-train-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# expect DESCRIPTION STATUS PATTERN ARGS...: mpxkit train ARGS gives that status and one stderr
# line matching PATTERN.
expect() {
	desc=$1 want=$2 pattern=$3
	shift 3
	run train "$@"
	if [ "$status" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q -- "$pattern" "$tmp/err"; then
		ok "$desc"
	else
		not_ok "$desc (status $status, stderr: $(cat "$tmp/err"))"
	fi
}

# Four small programs, 5 events, 80 steps each, with different rhythms (deterministic awk).
for p in 1 2 3 4; do
	awk -v p="$p" 'BEGIN {
		print "step,a,b,c,d,e"
		for (s = 0; s < 80; s++)
			printf "%d,%d,%d,%d,%d,%d\n", s, 1000 + 100 * p * (s % (3 + p)),
				(s * 37 * p) % 500, 50 * p + s, (s % 7 == 0) ? 3000 : 10,
				int(200 + 150 * sin(s / (p + 1)))
	}' >"$tmp/prog$p.csv"
done
printf 'step,a\n0,1\n' >"$tmp/short.csv"
printf 'not,a,trace\n1,2\n' >"$tmp/bad.csv"

run train --help
if [ "$status" -eq 0 ] && grep -q '^usage: mpxkit train' "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "--help to stdout, exit 0"
else
	not_ok "--help (status $status)"
fi
expect "no output named" 1 "no model file named" "$tmp/prog1.csv"
expect "no corpus" 1 "no corpus given" -o "$tmp/m.mpxm"
expect "bad --epochs" 1 "--epochs 0: not a whole number in \[1, 100000\]" -o "$tmp/m.mpxm" --epochs 0 "$tmp/prog1.csv"
expect "bad --seed" 1 "--seed x: not a whole number in \[0, 2147483647\]" -o "$tmp/m.mpxm" --seed x "$tmp/prog1.csv"
expect "bad --loss" 1 "--loss takes ra or mse" -o "$tmp/m.mpxm" --loss l1 "$tmp/prog1.csv"
expect "bad --hidden" 1 "--hidden 0: not a whole number in \[1, 1024\]" -o "$tmp/m.mpxm" --hidden 0 "$tmp/prog1.csv"
expect "bad --dropout" 1 "--dropout takes" -o "$tmp/m.mpxm" --dropout 1 "$tmp/prog1.csv"
expect "bad --model" 1 "--model takes mlp, bigru, prior or interval" -o "$tmp/m.mpxm" --model lstm "$tmp/prog1.csv"
expect "bigru --hidden too wide" 1 "--hidden takes 1 to 512 for a bigru" -o "$tmp/m.mpxm" \
	--model bigru --hidden 513 "$tmp/prog1.csv"
expect "too few programs" 1 "at least 3" -o "$tmp/m.mpxm" "$tmp/prog1.csv" "$tmp/prog2.csv"
expect "unreadable trace" 2 "missing.csv" -o "$tmp/m.mpxm" "$tmp/prog1.csv" "$tmp/prog2.csv" \
	"$tmp/missing.csv"
expect "malformed trace" 2 "bad.csv" -o "$tmp/m.mpxm" "$tmp/prog1.csv" "$tmp/prog2.csv" \
	"$tmp/bad.csv"
if [ ! -e "$tmp/m.mpxm" ]; then ok "no model left after a failure"; else not_ok "model left"; fi

run train -o "$tmp/m1.mpxm" --epochs 2 --seed 7 "$tmp/prog1.csv" "$tmp/prog2.csv" "$tmp/prog3.csv" \
	"$tmp/prog4.csv" "$tmp/short.csv"
if [ "$status" -eq 0 ] && [ -s "$tmp/m1.mpxm" ] && grep -q '^test ' "$tmp/out" &&
	grep -q '^split .*fixed .*linear .*nonlinear .*mlp$' "$tmp/out"; then
	ok "trains and reports RA per split and estimator"
else
	not_ok "training (status $status, stderr: $(cat "$tmp/err"))"
fi
# stderr is a file here: one whole line per epoch, no carriage return (issue 25).
if [ "$(grep -c '^mpxkit train: epoch [12]/2: loss [0-9.]*, validation [0-9.]*$' "$tmp/err")" -eq 2 ] &&
	[ "$(wc -l <"$tmp/err")" -eq 2 ] && ! grep -q "$(printf '\r')" "$tmp/err"; then
	ok "a line per epoch in a log"
else
	not_ok "epoch lines in a log: $(cat "$tmp/err")"
fi
# 5 programs (one too short for a rotation, which adds no samples) split 3:1:1.
for s in train validation test; do
	if [ "$(grep -c "^$s programs:" "$tmp/out")" -eq 1 ]; then
		ok "$s programs listed"
	else
		not_ok "$s programs listed"
	fi
done
# A trace whose metadata names its split keeps it (data/real's recordings name theirs, fixed by
# program when the corpus was written); a split that is none of the three is refused.
for p in 1 2 3 4; do
	case $p in 3) split=validation ;; 4) split=test ;; *) split=train ;; esac
	{ echo "# split=$split"; cat "$tmp/prog$p.csv"; } >"$tmp/named$p.csv"
done
cp "$tmp/out" "$tmp/mlp.out"
run train -o "$tmp/m2.mpxm" --epochs 1 "$tmp/named4.csv" "$tmp/named3.csv" "$tmp/named1.csv" \
	"$tmp/named2.csv"
if [ "$status" -eq 0 ] &&
	grep -qx "train programs: $tmp/named1.csv $tmp/named2.csv" "$tmp/out" &&
	grep -qx "validation programs: $tmp/named3.csv" "$tmp/out" &&
	grep -qx "test programs: $tmp/named4.csv" "$tmp/out"; then
	ok "a trace's own split is kept"
else
	not_ok "named splits (status $status): $(grep programs: "$tmp/out") $(cat "$tmp/err")"
fi
{ echo "# split=dev"; cat "$tmp/prog1.csv"; } >"$tmp/dev.csv"
expect "a split that is none" 1 "dev.csv: split 'dev' is not train, validation or test" \
	-o "$tmp/m3.mpxm" "$tmp/dev.csv" "$tmp/prog2.csv" "$tmp/prog3.csv" "$tmp/prog4.csv"
# The header of the model file (doc/model-format.md): magic, version 1, 76 inputs
# (2 (2H + 1) + 10 + 6 x 8 at H = 4, doc/estimators.md), 1 output.
if [ "$(od -An -tx1 -N16 "$tmp/m1.mpxm" | tr -d ' \n')" = "4d50584d010000004c00000001000000" ]; then
	ok "model header"
else
	not_ok "model header: $(od -An -tx1 -N16 "$tmp/m1.mpxm")"
fi
run train -o "$tmp/m2.mpxm" --epochs 2 --seed 7 "$tmp/prog1.csv" "$tmp/prog2.csv" "$tmp/prog3.csv" \
	"$tmp/prog4.csv" "$tmp/short.csv"
if [ "$status" -eq 0 ] && cmp -s "$tmp/m1.mpxm" "$tmp/m2.mpxm"; then
	ok "same seed, same model bit for bit"
else
	not_ok "same seed gave a different model"
fi
# --merge 2 trains on the traces summed two steps at a time: the same model bit for bit as the
# traces merged by hand (awk), one step left out of none (80 steps).
for p in 1 2 3 4; do
	awk -F, 'NR == 1 { print; next }
		(NR % 2) == 0 { for (i = 2; i <= NF; i++) s[i] = $i; first = $1; next }
		{ printf "%d", first; for (i = 2; i <= NF; i++) printf ",%d", s[i] + $i; print "" }' \
		"$tmp/prog$p.csv" >"$tmp/half$p.csv"
done
run train -o "$tmp/mm.mpxm" --epochs 2 --seed 7 --merge 2 "$tmp/prog1.csv" "$tmp/prog2.csv" \
	"$tmp/prog3.csv" "$tmp/prog4.csv"
run train -o "$tmp/mh.mpxm" --epochs 2 --seed 7 "$tmp/half1.csv" "$tmp/half2.csv" "$tmp/half3.csv" \
	"$tmp/half4.csv"
if [ "$status" -eq 0 ] && [ -s "$tmp/mm.mpxm" ] && cmp -s "$tmp/mm.mpxm" "$tmp/mh.mpxm"; then
	ok "--merge 2: the model of the traces merged by hand, bit for bit"
else
	not_ok "--merge 2 differs from the traces merged by hand (status $status)"
fi
expect "bad --merge" 1 "--merge 0: not a whole number" -o "$tmp/m.mpxm" --merge 0 "$tmp/prog1.csv"
expect "--merge past a trace" 2 "short.csv: trace: 1 step is fewer than the 2 of one merged step" \
	-o "$tmp/m.mpxm" --merge 2 "$tmp/prog1.csv" "$tmp/prog2.csv" "$tmp/short.csv"
run train -o "$tmp/m3.mpxm" --epochs 2 --seed 8 "$tmp/prog1.csv" "$tmp/prog2.csv" "$tmp/prog3.csv" \
	"$tmp/prog4.csv" "$tmp/short.csv"
if [ "$status" -eq 0 ] && ! cmp -s "$tmp/m1.mpxm" "$tmp/m3.mpxm"; then
	ok "another seed, another model"
else
	not_ok "seed ignored"
fi
run train -o "$tmp/m4.mpxm" --epochs 2 --seed 7 --loss mse --hidden 8 --dropout 0.3 "$tmp/prog1.csv" \
	"$tmp/prog2.csv" "$tmp/prog3.csv" "$tmp/prog4.csv"
if [ "$status" -eq 0 ] && [ -s "$tmp/m4.mpxm" ] && ! cmp -s "$tmp/m1.mpxm" "$tmp/m4.mpxm"; then
	ok "--loss mse --hidden --dropout train another model"
else
	not_ok "--loss mse (status $status, stderr: $(cat "$tmp/err"))"
fi

# The bigru: the same split and report, a version-2 file (a GRU layer), the same bits twice.
progs="$tmp/prog1.csv $tmp/prog2.csv $tmp/prog3.csv $tmp/prog4.csv $tmp/short.csv"
# shellcheck disable=SC2086
run train -o "$tmp/g1.mpxm" --model bigru --epochs 2 --seed 7 $progs
if [ "$status" -eq 0 ] && [ -s "$tmp/g1.mpxm" ] && grep -q '^test ' "$tmp/out" &&
	grep -q '^split .*fixed .*linear .*nonlinear .*bigru$' "$tmp/out" &&
	grep -q '^[0-9]* training and [0-9]* validation series' "$tmp/out"; then
	ok "bigru trains and reports RA per split and estimator"
else
	not_ok "bigru training (status $status, stderr: $(cat "$tmp/err"))"
fi
# Same split as the mlp: the seed decides it, not the model.
for s in train validation test; do
	if [ "$(grep "^$s programs:" "$tmp/out")" = "$(grep "^$s programs:" "$tmp/mlp.out")" ]; then
		ok "bigru: same $s programs as mlp"
	else
		not_ok "bigru: $s programs differ from mlp's"
	fi
done
# Magic, version 2, 76 inputs, 1 output, 3 layers (dense, GRU, dense), feature set 2, H = 4.
if [ "$(od -An -tx1 -N28 "$tmp/g1.mpxm" | tr -d ' \n')" = \
	"4d50584d020000004c00000001000000030000000200000004000000" ]; then
	ok "bigru model header"
else
	not_ok "bigru model header: $(od -An -tx1 -N28 "$tmp/g1.mpxm")"
fi
# shellcheck disable=SC2086
run train -o "$tmp/g2.mpxm" --model bigru --epochs 2 --seed 7 $progs
if [ "$status" -eq 0 ] && cmp -s "$tmp/g1.mpxm" "$tmp/g2.mpxm"; then
	ok "bigru: same seed, same model bit for bit"
else
	not_ok "bigru: same seed gave a different model"
fi
# shellcheck disable=SC2086
run train -o "$tmp/g3.mpxm" --model bigru --epochs 2 --seed 7 --hidden 4 --loss mse --dropout 0.2 $progs
if [ "$status" -eq 0 ] && [ "$(wc -c <"$tmp/g3.mpxm")" -lt "$(wc -c <"$tmp/g1.mpxm")" ] &&
	! cmp -s "$tmp/g1.mpxm" "$tmp/g3.mpxm"; then
	ok "bigru --hidden 4 --loss mse --dropout: a smaller, other model"
else
	not_ok "bigru --hidden (status $status, stderr: $(cat "$tmp/err"))"
fi
# The prior schedule's table is reproduced byte for byte by its command (doc/schedules.md).
run train -o "$tmp/prior_table.c" --model prior --seed 1 "$top_srcdir/data/corpus"
if [ "$status" -eq 0 ] && cmp -s "$tmp/prior_table.c" "$top_srcdir/schedules/prior_table.c"; then
	ok "prior: the shipped table is its command's output"
else
	not_ok "prior: schedules/prior_table.c differs from its command's output (status $status)"
fi
# The intervals' calibration (doc/estimators.md, "Intervals"): a table of every registered
# estimator, each with 8 rows of 12 factors (fixed and scheduled slices: windows of sparse events
# and of dense ones, then totals of each), where fixed slices' totals are one pooled row, twice.
run train -o "$tmp/interval_table.c" --model interval --seed 7 "$tmp/prog1.csv" "$tmp/prog2.csv" \
	"$tmp/prog3.csv" "$tmp/prog4.csv" "$tmp/short.csv"
if [ "$status" -eq 0 ] && [ "$(grep -c '^const interval_calibration interval_cal_' "$tmp/interval_table.c")" -eq 9 ] &&
	[ "$(grep -cE '^		\{([0-9.]+, ){11}[0-9.]+\},$' "$tmp/interval_table.c")" -eq 72 ] &&
	awk '/^const interval_calibration/ { n = 0 } /^		\{[0-9]/ { row[++n] = $0 }
		n == 6 && row[5] != row[6] { bad = 1 } END { exit bad }' "$tmp/interval_table.c" &&
	grep -q '^bigru-full ' "$tmp/out" && grep -q 'written to' "$tmp/out"; then
	ok "interval: a calibration table of the 9 estimators"
else
	not_ok "interval (status $status, stderr: $(cat "$tmp/err"))"
fi
# Each directory is a data set, and each factor the largest of the sets' own: the table of two
# directories together is, number by number, the larger of their tables alone (each trace names
# its split, so a set's programs are split alike alone and together).  Each set has sparse events
# (under 10 counts a step) and dense ones, so each has window scores, and scheduled totals, in
# both regimes.
for d in A B; do
	mkdir -p "$tmp/$d"
	for p in 1 2 3 4; do
		case $p in 1 | 2) sp=train ;; 3) sp=validation ;; *) sp=test ;; esac
		awk -v p="$p" -v d="$d" -v sp="$sp" 'BEGIN {
			print "# split=" sp
			print "step,a,b,c,d,e"
			for (s = 0; s < 60; s++)
				if (d == "A")
					printf "%d,%d,%d,%d,%d,%d\n", s, 1000 + 100 * p * (s % (3 + p)),
						(s * 37 * p) % 500, 50 * p + s, (s % 7 == 0) ? 3000 : 10,
						(s % (7 + p) == 0) ? 3 : 0
				else
					printf "%d,%d,%d,%d,%d,%d\n", s, (s % (5 + p) == 0) ? 4 : 0,
						(s % 11 < p) ? 2 : 0, s % 3, (s % 13 == 0) ? 40 : 1,
						int(200 + 150 * sin(s / (p + 1)))
		}' >"$tmp/$d/p$p.csv"
	done
done
run train -o "$tmp/tA.c" --model interval --seed 3 "$tmp/A"/p*.csv
sa=$status
run train -o "$tmp/tB.c" --model interval --seed 3 "$tmp/B"/p*.csv
sb=$status
run train -o "$tmp/tAB.c" --model interval --seed 3 "$tmp/A"/p*.csv "$tmp/B"/p*.csv
numbers() { grep -E '^		?\{[0-9]' "$1" | tr -d '{},\t' | tr ' ' '\n' | grep .; }
if [ "$sa$sb$status" = 000 ] && [ "$(grep -c '(the table)' "$tmp/out")" -eq 63 ] &&
	[ "$(grep -cE "^fixed  *fixed  *(w sparse|w dense|totals)  *$tmp/B " "$tmp/out")" -eq 3 ] &&
	[ "$(awk -v b="$tmp/B" '$1 == "fixed" && $2 == "scheduled" && $3 == "t" && $5 == b && $6 > 0' \
		"$tmp/out" | wc -l)" -eq 2 ] &&
	numbers "$tmp/tA.c" >"$tmp/nA" && numbers "$tmp/tB.c" >"$tmp/nB" && numbers "$tmp/tAB.c" >"$tmp/nAB" &&
	[ "$(wc -l <"$tmp/nAB")" -eq 864 ] &&
	paste "$tmp/nA" "$tmp/nB" "$tmp/nAB" | awk '{ m = $1 > $2 ? $1 : $2; if (m != $3) bad = 1 } END { exit bad }' &&
	! cmp -s "$tmp/nA" "$tmp/nB"; then
	ok "interval: two directories, each factor the larger of theirs"
else
	not_ok "interval sets (status $sa $sb $status): $(head -n 5 "$tmp/out")"
fi
exit $failed
