#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit predict end to end: usage, one-line errors (exit 1 usage, 2 bad data), train, apply,
# eval with its JSON keys and plot, record and --live on a fake sysfs tree with a replayed trace.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-predict-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
# Never the machine's own cpufreq: every run reads this tree unless a case says otherwise.
MPXKIT_SYSFS_ROOT="$tmp/empty-root"
export MPXKIT_SYSFS_ROOT
unset HWLOC_FSROOT MPXKIT_REPLAY
mkdir "$tmp/empty-root"
# The topology comes from the (fake) sysfs; hwloc's x86 backend would add a line of its own on
# stderr under valgrind (make check-valgrind).
HWLOC_COMPONENTS=-x86
export HWLOC_COMPONENTS

# expect DESCRIPTION STATUS PATTERN ARGS...: `mpxkit predict ARGS` fails with that status and
# one stderr line matching PATTERN (cli_lib.sh's expect_fail: nothing on stdout, no temporary
# file left).
expect() {
	desc=$1 want=$2 pattern=$3
	shift 3
	expect_fail "$desc" "$want" "$pattern" predict "$@"
}

# expect_ok DESCRIPTION ARGS...: exit 0, nothing on stderr.
expect_ok() {
	desc=$1
	shift
	run predict "$@"
	if [ "$status" -eq 0 ] && [ ! -s "$tmp/err" ]; then
		ok "$desc"
	else
		not_ok "$desc (status $status, stderr: $(cat "$tmp/err"))"
	fi
}

# A synthetic dataset: 8 workloads on big (1000, 2000 MHz) and little (500, 1000 MHz).
awk 'BEGIN {
	print "# mpxkit-predict=1"
	print "# dataset=syn"
	print "# role.cycles=CYC"
	print "# role.instructions=INS"
	print "# role.misses=MISS"
	print "workload,core,freq_mhz,threads,run,sample,time_s,power_w,voltage_v,CYC,INS,MISS"
	n = 1e9
	for (w = 0; w < 8; w++)
		for (c = 0; c < 2; c++)
			for (k = 0; k < 2; k++) {
				f = c ? 0.5 * (k + 1) : k + 1
				mpi = 0.0005 * (w + 1)
				cpi = (c ? 1.5 : 1) * (0.8 + 0.1 * w) + mpi * 30 * f
				t = cpi / f + 0.02 * (w % 3)
				v = 0.8 + 0.2 * f
				p = 0.1 + 0.3 * v * v * cpi * n / (t * n)
				printf "w%d,%s,%g,1,0,,%.9g,%.6g,%.3f,%.0f,%.0f,%.0f\n", w,
					c ? "little" : "big", 1000 * f, t * n * 1e-9, p, v, cpi * n, n, mpi * n
			}
}' >"$tmp/syn.csv"
# The same three events replayed: 10 steps.
awk 'BEGIN { print "step,CYC,INS,MISS"; for (s = 0; s < 10; s++) printf "%d,%d,%d,%d\n", s, 2000000 + 1000 * s, 1500000, 900 + s }' >"$tmp/replay.csv"

# ---- usage -------------------------------------------------------------------------------------
run predict --help
if [ "$status" -eq 0 ] && grep -q '^usage: mpxkit predict' "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "--help to stdout, exit 0"
else
	not_ok "--help (status $status)"
fi
for sub in import record list train apply eval; do
	run predict "$sub" --help
	if [ "$status" -eq 0 ] && grep -q "^usage: mpxkit predict $sub" "$tmp/out"; then
		ok "$sub --help"
	else
		not_ok "$sub --help (status $status)"
	fi
done
run predict
[ "$status" -eq 1 ] && ok "no command: exit 1" || not_ok "no command (status $status)"
expect "unknown command" 1 "'frobnicate' is not a predict command" frobnicate
expect "unknown option" 1 "unknown option '--bogus'" train --bogus
expect "train without -o" 1 "-o MODEL.mpxp is required" train "$tmp/syn.csv"
expect "train without data" 1 "no dataset" train -o "$tmp/m.mpxp"
expect "bad --met" 1 "--met x: expected" train --met x -o "$tmp/m.mpxp" "$tmp/syn.csv"
expect "bad --ridge" 1 "--ridge -1: expected" train --ridge -1 -o "$tmp/m.mpxp" "$tmp/syn.csv"
expect "import without --from" 1 "--from gemstone|nikov is required" import -o "$tmp/x.csv" "$tmp/syn.csv"
expect "import --from other" 1 "--from csv: expected gemstone or nikov" import --from csv -o "$tmp/x.csv" "$tmp/syn.csv"
expect "bad split percentage" 1 "hash:0" eval --split hash:0 "$tmp/syn.csv"
expect "apply without a model" 1 "-m MODEL.mpxp is required" apply "$tmp/syn.csv"
expect "--live without a model" 1 "--live needs -m" --live -- true
expect "--live without a command" 1 "no command to run" --live -m "$tmp/m.mpxp"
expect "bad --from" 1 "expected CORE@MHZ" --live -m "$tmp/m.mpxp" --from big -- true

# ---- bad data: one line, exit 2 ----------------------------------------------------------------
expect "dataset is /dev/zero" 2 "NUL byte" train -o "$tmp/m.mpxp" /dev/zero
expect "dataset missing" 2 "$tmp/none.csv" train -o "$tmp/m.mpxp" "$tmp/none.csv"
expect "dataset is a directory" 2 "Is a directory" train -o "$tmp/m.mpxp" "$tmp"
expect "model into a missing directory" 2 "$tmp/no/m.mpxp" train -o "$tmp/no/m.mpxp" "$tmp/syn.csv"
printf 'workload,core\n' >"$tmp/notdata.csv"
expect "not a dataset" 2 "not a predict dataset" eval "$tmp/notdata.csv"
expect "import /dev/zero" 2 "NUL byte" import --from gemstone -o "$tmp/x.csv" /dev/zero
expect "import of another layout" 2 "not a GemStone powmon table" import --from gemstone -o "$tmp/x.csv" "$tmp/syn.csv"
expect "nikov import of another layout" 2 "not a Nikov sample file" import --from nikov -o "$tmp/x.csv" "$tmp/syn.csv"
[ ! -e "$tmp/x.csv" ] && ok "no output after a failed import" || not_ok "a failed import left output"
expect "split file missing" 2 "$tmp/none.split" eval --split "$tmp/none.split" "$tmp/syn.csv"
# Impossible rows are refused with their file and line wherever a dataset is read, and by the
# importers with the row (doc/predict-format.md, "Plausibility"; issue 25).
g="$top_srcdir/ctests/golden/pdata"
for sub in train eval; do
	expect "$sub: a wrapped counter" 2 \
		"bad-wrapped-counter.csv:6: CYC = 1.8446744073709552e+19: 2^63 or more, a counter that wrapped" \
		$sub -o "$tmp/implausible.out" "$g/bad-wrapped-counter.csv"
	expect "$sub: more cycles than the clock gives" 2 \
		"bad-cycles-past-clock.csv:5: CYC = 8000000001 cycles in 2 s at 1000 MHz on 2 threads: more than 8000000000 (freq x time x threads x 2)" \
		$sub -o "$tmp/implausible.out" "$g/bad-cycles-past-clock.csv"
	expect "$sub: a clock of 1e20 MHz" 2 "bad-freq-range.csv:3: freq_mhz 1e+20: outside the plausible 1 to 100000 MHz" \
		$sub -o "$tmp/implausible.out" "$g/bad-freq-range.csv"
done
expect "apply: a wrapped counter" 2 "bad-wrapped-counter.csv:6: CYC = 1.8446744073709552e+19" \
	apply -m "$top_srcdir/ctests/golden/pmodel/minimal.mpxp" "$g/bad-wrapped-counter.csv"
tail -n +2 "$top_srcdir/ctests/golden/import/gemstone.imp" | sed '2s/\t600\t/\t1e20\t/' >"$tmp/gem-1e20.txt"
expect "import: a clock of 1e20 MHz" 2 "gem-1e20.txt:2: row of qsort: freq_mhz 1e+20: outside" \
	import --from gemstone -o "$tmp/implausible.csv" "$tmp/gem-1e20.txt"
[ ! -e "$tmp/implausible.out" ] && [ ! -e "$tmp/implausible.csv" ] && ok "nothing written from an impossible row" ||
	not_ok "output written from an impossible row"
# time=window rows are means over a window that does not end with the work: their cycles are not
# bounded by the window (GemStone's), so such a row is kept.
{
	printf '# mpxkit-predict=1\n# time=window\n# role.cycles=CYC\n# role.instructions=INS\n'
	printf 'workload,core,freq_mhz,threads,run,sample,time_s,power_w,voltage_v,CYC,INS\n'
	printf 'w,big,1000,1,0,,0.2,1,1,3e9,1e9\nv,big,1000,1,0,,0.2,1,1,2e9,1e9\n'
} >"$tmp/window.csv"
run predict train -o "$tmp/window.mpxp" "$tmp/window.csv"
! grep -q "cycles in" "$tmp/err" && ok "window rows: cycles are not bounded by the window" ||
	not_ok "window rows refused: $(cat "$tmp/err")"
# The library's "predict eval: ..." under "mpxkit predict eval:" is said once (issue 25).
printf 'zz\tzzz\n' >"$tmp/elsewhere.split"
expect "a split of other workloads, the command named once" 2 \
	"^mpxkit predict eval: the split holds out no workload$" eval --split "$tmp/elsewhere.split" "$tmp/syn.csv"

# ---- train, apply, eval ------------------------------------------------------------------------
expect_ok "train" train -o "$tmp/m.mpxp" "$tmp/syn.csv"
head -c 4 "$tmp/m.mpxp" | od -An -tx1 | grep -q '89 50 52 44' && ok "model magic \\x89PRD" ||
	not_ok "model magic"
expect_ok "apply as CSV" apply -m "$tmp/m.mpxp" --format csv "$tmp/syn.csv"
# 32 rows x 4 configurations + the header
[ "$(wc -l <"$tmp/out")" -eq 129 ] && ok "apply: one line per row and configuration" ||
	not_ok "apply: $(wc -l <"$tmp/out") lines"
head -1 "$tmp/out" | grep -qx 'row,workload,from,to,time_s,cpi,power_w,energy_j,ips' &&
	ok "apply CSV header" || not_ok "apply CSV header: $(head -1 "$tmp/out")"
# -f is --format, as in eval, report, simt and analyze (issue 25).
cp "$tmp/out" "$tmp/apply-format.csv"
expect_ok "apply -f csv" apply -m "$tmp/m.mpxp" -f csv "$tmp/syn.csv"
cmp -s "$tmp/out" "$tmp/apply-format.csv" && ok "apply: -f csv is --format csv" || not_ok "apply -f csv differs"
expect_ok "eval -f json" eval -f json "$tmp/syn.csv"
head -c 1 "$tmp/out" | grep -q '\[' && ok "eval: -f json is JSON" || not_ok "eval -f json: $(head -c 80 "$tmp/out")"
# Numbers are written as %.9g writes them: awk's printf gives each field back unchanged.
awk -F, 'NR > 1 { for (i = 5; i <= 9; i++) if ($i != "" && sprintf("%.9g", $i) != $i) bad++ }
	END { exit bad > 0 }' "$tmp/out" && ok "apply numbers as %.9g" || not_ok "apply number format"
expect_ok "apply as JSON" apply -m "$tmp/m.mpxp" --format json "$tmp/syn.csv"
if command -v jq >/dev/null; then
	[ "$(jq length "$tmp/out")" -eq 128 ] && ok "apply JSON: 128 objects" || not_ok "apply JSON"
fi
head -c 100 "$tmp/m.mpxp" >"$tmp/cut.mpxp"
expect "truncated model" 2 "cut.mpxp" apply -m "$tmp/cut.mpxp" "$tmp/syn.csv"
expect "model is /dev/zero" 2 "/dev/zero" apply -m /dev/zero "$tmp/syn.csv"
expect "model is a dataset" 2 "not a predict model file" apply -m "$tmp/syn.csv" "$tmp/syn.csv"
# A row without instructions (an idle period) is predicted as unknown, not refused.
awk -F, -v OFS=, '!/^#/ && $1 == "w0" && $2 == "big" && $3 == 1000 { $11 = 0 } { print }' \
	"$tmp/syn.csv" >"$tmp/idle.csv"
expect_ok "apply to a row without instructions" apply -m "$tmp/m.mpxp" --format csv "$tmp/idle.csv"
[ "$(grep -c '^1,w0,big@1000,[a-z]*@[0-9]*,,,,,$' "$tmp/out")" -eq 4 ] &&
	ok "apply: that row's predictions are empty" || not_ok "apply: $(sed -n 2p "$tmp/out")"
sed 's/,little,/,medium,/' "$tmp/syn.csv" >"$tmp/medium.csv"
expect "core kind the model lacks" 2 "core kind 'medium' is not in the model" apply -m "$tmp/m.mpxp" "$tmp/medium.csv"

expect_ok "eval, leave one out, with a plot" eval --split loo --plot "$tmp/p.svg" "$tmp/syn.csv"
grep -q '^# split loo: 8 held-out workloads in 8 folds' "$tmp/out" && ok "eval says its split" ||
	not_ok "eval comment: $(head -2 "$tmp/out")"
grep -q '^syn  *time  *all' "$tmp/out" && ok "eval: time over all pairs" || not_ok "eval table"
grep -q '^syn  *time  *cross' "$tmp/out" && ok "eval: cross-core time" || not_ok "eval cross"
if command -v xmllint >/dev/null; then
	xmllint --noout "$tmp/p.svg" 2>/dev/null && ok "plot is well-formed SVG" || not_ok "plot"
fi
expect_ok "eval as JSON" eval --split loo --format json "$tmp/syn.csv"
if command -v jq >/dev/null; then
	keys=$(jq -r '.[0] | keys_unsorted | join(",")' "$tmp/out")
	[ "$keys" = "dataset,target,from,to,n,mape,baseline,baseline_mape" ] && ok "eval JSON keys" ||
		not_ok "eval JSON keys: $keys"
	[ "$(jq '[.[] | select(.target == "time" and .from == "all")] | length' "$tmp/out")" -eq 1 ] &&
		ok "eval JSON: one summary of all time pairs" || not_ok "eval JSON summary"
fi
printf '#Train\tTest\nw0\tw1\nw2\tw3\nw4\nw5\n' >"$tmp/split.data"
expect_ok "eval --validate on a split file" eval --validate --split "$tmp/split.data" "$tmp/syn.csv"
grep -q '4 held-out workloads in 4 folds' "$tmp/out" && ok "validation: training workloads only" ||
	not_ok "validation: $(head -1 "$tmp/out")"

# ---- the machine -------------------------------------------------------------------------------
expect_ok "list on a tree without anything" list
grep -q '^predict record cannot run here: no cpufreq' "$tmp/out" && ok "list says what is missing" ||
	not_ok "list: $(cat "$tmp/out")"
expect "record without cpufreq" 2 "no cpufreq: $tmp/empty-root/sys/devices/system/cpu/cpu" record -o "$tmp/r.csv" -- true
[ ! -e "$tmp/r.csv" ] && ok "no dataset after a refused record" || not_ok "record left output"

# A fake tree: the first CPU this shell may use, cpufreq at 800 and 1600 MHz, one RAPL package.
cpu=$(awk '/^Cpus_allowed_list/ { split($2, a, /[-,]/); print a[1] }' /proc/self/status)
fake="$tmp/fake"
d="$fake/sys/devices/system/cpu/cpu$cpu"
mkdir -p "$d/cpufreq" "$d/topology" "$fake/sys/bus/cpu/devices" "$fake/sys/class/powercap/intel-rapl:0"
echo "$cpu" >"$fake/sys/devices/system/cpu/online"
echo "$cpu" >"$fake/sys/devices/system/cpu/possible"
echo "$cpu" >"$fake/sys/devices/system/cpu/present"
echo 1 >"$d/online"
echo 1024 >"$d/cpu_capacity"
echo "$cpu" >"$d/topology/core_id"
echo 0 >"$d/topology/physical_package_id"
printf '%x\n' $((1 << cpu)) >"$d/topology/thread_siblings"
printf '%x\n' $((1 << cpu)) >"$d/topology/core_siblings"
echo "800000 1600000" >"$d/cpufreq/scaling_available_frequencies"
echo 800000 >"$d/cpufreq/scaling_min_freq"
echo 1600000 >"$d/cpufreq/scaling_max_freq"
ln -s "../../../devices/system/cpu/cpu$cpu" "$fake/sys/bus/cpu/devices/cpu$cpu"
echo package-0 >"$fake/sys/class/powercap/intel-rapl:0/name"
echo 1000 >"$fake/sys/class/powercap/intel-rapl:0/energy_uj"

MPXKIT_SYSFS_ROOT=$fake expect_ok "list on the fake tree" list
grep -q 'frequencies (MHz): 800 1600' "$tmp/out" && ok "list: the two frequencies" ||
	not_ok "list: $(cat "$tmp/out")"
# The program record runs is an input: an output onto it is refused before it runs (issue 25).
cp /bin/true "$tmp/prog" && cp "$tmp/prog" "$tmp/prog.before"
MPXKIT_SYSFS_ROOT=$fake expect "record -o the program it runs" 2 \
	"cannot write $tmp/prog: it is the same file as the input $tmp/prog" record -o "$tmp/prog" -- "$tmp/prog"
cmp -s "$tmp/prog" "$tmp/prog.before" && ok "record: the program unchanged" || not_ok "record replaced its program"
MPXKIT_SYSFS_ROOT=$fake MPXKIT_REPLAY=$tmp/replay.csv expect_ok "record with a replayed trace" \
	record -q --runs 2 -e CYC,INS,MISS --role cycles=CYC --role instructions=INS \
	--role misses=MISS -o "$tmp/r.csv" -- true
[ "$(grep -c '^true,kind0,' "$tmp/r.csv")" -eq 4 ] && ok "record: 2 frequencies x 2 runs" ||
	not_ok "record rows: $(cat "$tmp/r.csv")"
grep -q '^true,kind0,800,1,0,,[0-9.e-]*,0,,20045000,15000000,9045$' "$tmp/r.csv" &&
	ok "record: the trace's totals, power 0 from a counter that never moved" ||
	not_ok "record values: $(grep '^true' "$tmp/r.csv" | head -1)"
[ "$(cat "$d/cpufreq/scaling_max_freq")" = 1600000 ] && ok "record restored cpufreq" ||
	not_ok "cpufreq left at $(cat "$d/cpufreq/scaling_max_freq")"
MPXKIT_SYSFS_ROOT=$fake MPXKIT_REPLAY=$tmp/replay.csv expect "record of a failing command" 2 \
	"'false' exited with status 1" record -q -e CYC,INS --role cycles=CYC \
	--role instructions=INS -o "$tmp/r2.csv" -- false

# --live: periods of 3 slices of 10 ms over 10 replayed steps: 4 periods x 4 configurations.
MPXKIT_REPLAY=$tmp/replay.csv expect_ok "--live with a replayed trace" --live -m "$tmp/m.mpxp" \
	--from big@1000 --period-ms 30 --slice-us 10000 --format csv -- true
[ "$(wc -l <"$tmp/out")" -eq 17 ] && ok "--live: 4 periods x 4 configurations" ||
	not_ok "--live output: $(cat "$tmp/out")"
grep -q '^3,0.09,0.1,big@2000,' "$tmp/out" && ok "--live: the last, shorter period" ||
	not_ok "--live last period: $(tail -1 "$tmp/out")"
# A command that ends before the first rotation (3 events on 1 counter, `true` is over before
# a slice): one row per configuration from the engine's totals at the exit, not a header alone
# (the replay's virtual clock has not moved, so the values are unknown); CPU time is labelled
# so (issue 25).
head -3 "$tmp/replay.csv" >"$tmp/replay2.csv"
MPXKIT_REPLAY=$tmp/replay2.csv MPXKIT_COUNTERS=1 expect_ok "--live of a short command" \
	--live -m "$tmp/m.mpxp" --from big@1000 --format csv -- true
[ "$(wc -l <"$tmp/out")" -eq 5 ] && [ "$(grep -c '^0,0,[0-9.e-]*,[a-z]*@[0-9]*,' "$tmp/out")" -eq 4 ] &&
	ok "--live of a short command: a final row per configuration" ||
	not_ok "--live of a short command: $(cat "$tmp/out")"
head -1 "$tmp/out" | grep -q '^period,t0_s,t1_s,to,cpu_time_s,' && ok "--live: the CPU time column is cpu_time_s" ||
	not_ok "--live header: $(head -1 "$tmp/out")"
MPXKIT_REPLAY=$tmp/replay.csv expect "--live from a core kind the model lacks" 2 \
	"core kind 'medium': not in the model" --live -m "$tmp/m.mpxp" --from medium@1000 -- true
expect "--live without cpufreq and without --from" 2 "no cpufreq" --live -m "$tmp/m.mpxp" -- true

exit "$failed"
