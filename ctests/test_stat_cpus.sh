#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit stat -a: every CPU, against the exact counts of the same run and of a workload counted
# inside it; refused in one line to a user who may not count every CPU.
set -u
: "${MPXKIT:=utils/mpxkit}"
: "${top_builddir:=.}"
# MPXKIT_VALGRIND runs mpxkit itself under memcheck in `make check-valgrind`; word splitting intended.
MPXKIT="${MPXKIT_VALGRIND:-} $MPXKIT"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=ctests/stat_common.sh
. "${top_srcdir:-.}/ctests/stat_common.sh"
skip_without_perf

# -a: every CPU while CMD runs.  CMD is mpxkit stat itself counting a workload exactly: the
# system's page faults and task clock are at least the workload's, and the task clock of every
# CPU, multiplexed, is its exact count within 2 %.  Without the right to count every CPU: one
# line saying what is needed, exit 2.
pages="$top_builddir/ctests/workload_pages"
$MPXKIT stat -a -e perf::TASK-CLOCK -- true >/dev/null 2>"$tmp/err"
status=$?
if [ $status = 2 ]; then
	own_lines "$tmp/err"
	grep -q "^mpxkit stat: counting every CPU needs CAP_PERFMON (or root) or kernel.perf_event_paranoid <= 0: " \
		"$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] || fail "-a refused: $(cat "$tmp/err")"
	echo "SKIP: -a is refused here: $(cat "$tmp/err")"
	exit 77
fi
[ $status = 0 ] || fail "stat -a exited $status: $(cat "$tmp/err")"
$MPXKIT stat --multiplex all -a -e perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CPU-CLOCK -c 2 --slice-us 1000 \
	--exact -f csv -o "$tmp/a.csv" -- \
	$MPXKIT stat -e perf::TASK-CLOCK,perf::PAGE-FAULTS --exact -f csv -o "$tmp/in.csv" -- \
	"$pages" 300 200 0 || fail "stat -a -- stat exited $?"
cat "$tmp/a.csv" "$tmp/in.csv"
for ev in perf::TASK-CLOCK perf::PAGE-FAULTS; do
	all=$(field "$tmp/a.csv" $ev exact)
	one=$(field "$tmp/in.csv" $ev exact)
	[ -n "$all" ] && [ -n "$one" ] && [ "$all" -ge "$one" ] ||
		fail "-a: $ev $all system-wide, below the workload's $one"
done
[ "$(field "$tmp/in.csv" perf::PAGE-FAULTS exact)" -ge 300 ] || fail "-a: workload faults"
est=$(field "$tmp/a.csv" perf::TASK-CLOCK estimate)
exact=$(field "$tmp/a.csv" perf::TASK-CLOCK exact)
near "$est" "$exact" 2 || fail "-a: task clock estimated $est, exact $exact"
echo "ok: -a: task clock $est estimated, $exact exact"

# A PMU with a cpumask (RAPL, uncore) counts on its mask's CPUs alone: elsewhere the kernel would
# count the package again.  On a fake sysfs tree, "one" is the software PMU's cpu-clock with the
# first online CPU as its mask, "rest" with the others and "every" with all of them: one and
# rest, each counted on its own CPUs, add up to every, exactly and multiplexed (an estimate
# scaled by the wrong CPUs' time came out twice the truth on two CPUs).  Not one = every / CPUs:
# each CPU's count starts when its descriptors are enabled, one CPU after another, and a
# preemption between two CPUs would tell them apart; not each estimate against its exact count
# either: the exact counts run longer than the engine's (5 % of 0.3 s under memcheck).
online=$(awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); for (c = r[1]; c <= r[n]; c++) print c } }' \
	/sys/devices/system/cpu/online)
first=$(echo "$online" | head -n 1)
rest=$(echo "$online" | tail -n +2 | paste -sd, -)
for pmu in one rest every none; do
	mkdir -p "$tmp/sys/$pmu/format" "$tmp/sys/$pmu/events"
	echo 1 >"$tmp/sys/$pmu/type" # PERF_TYPE_SOFTWARE; config 0 is PERF_COUNT_SW_CPU_CLOCK
	echo config:0-63 >"$tmp/sys/$pmu/format/event"
	echo event=0x0 >"$tmp/sys/$pmu/events/clock"
done
echo "$first" >"$tmp/sys/one/cpumask"
echo "${rest:-4095}" >"$tmp/sys/rest/cpumask"
cat /sys/devices/system/cpu/online >"$tmp/sys/every/cpumask"
echo 4095 >"$tmp/sys/none/cpumask"
[ -n "$rest" ] || skip_rest="one CPU online: rest not counted"
MPXKIT_TEST_SYSFS=$tmp/sys $MPXKIT stat --multiplex all -a -c 1 --slice-us 1000 --exact -f csv \
	-o "$tmp/mask.csv" -e one/clock/,${rest:+rest/clock/,}every/clock/,perf::CPU-CLOCK -- sleep 0.3 ||
	fail "stat -a with cpumask PMUs exited $?"
cat "$tmp/mask.csv"
every=$(field "$tmp/mask.csv" every/clock/ exact)
one=$(field "$tmp/mask.csv" one/clock/ exact)
near "$every" "$(field "$tmp/mask.csv" perf::CPU-CLOCK exact)" 1 || fail "-a: every CPU's mask"
if [ -n "$rest" ]; then
	near $((one + $(field "$tmp/mask.csv" rest/clock/ exact))) "$every" 1 ||
		fail "-a: one and rest do not add up to every"
	[ "$one" -lt "$every" ] || fail "-a: a one-CPU mask counted as much as every CPU"
	near $(($(field "$tmp/mask.csv" one/clock/ estimate) + $(field "$tmp/mask.csv" rest/clock/ estimate))) \
		"$(field "$tmp/mask.csv" every/clock/ estimate)" 2 ||
		fail "-a: one and rest, multiplexed, do not add up to every"
else
	echo "not checked: $skip_rest"
	near "$(field "$tmp/mask.csv" one/clock/ estimate)" "$(field "$tmp/mask.csv" every/clock/ estimate)" 2 ||
		fail "-a: one CPU's mask, multiplexed, is not every CPU's"
fi
MPXKIT_TEST_SYSFS=$tmp/sys expect_line 2 "^mpxkit stat: none/clock/: none of the CPUs counted is in none's cpumask$" \
	$MPXKIT stat -a -e none/clock/ -- true
echo "ok: -a: a cpumask PMU on its mask's CPUs alone"

# As a user who may not count every CPU (kernel.perf_event_paranoid > 0, no capability).
level=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" = 0 ] && [ "$level" -gt 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all true 2>/dev/null &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		$MPXKIT list >/dev/null 2>&1; then
	expect_line 2 "^mpxkit stat: counting every CPU needs CAP_PERFMON \(or root\) or kernel.perf_event_paranoid <= 0: perf::TASK-CLOCK: not allowed \(perf_event_open: Permission denied; kernel.perf_event_paranoid=$level\)" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		$MPXKIT stat -a -e perf::TASK-CLOCK -- true
	echo "ok: -a refused to an unprivileged user in one line"
else
	echo "not checked: -a refused to an unprivileged user (not root, paranoid <= 0, or no setpriv)"
fi

# SIGINT to -a without CMD: the report, and exit 128 + 2.
$MPXKIT stat --multiplex all -a -e perf::TASK-CLOCK -o "$tmp/a.txt" 2>"$tmp/err" &
stat=$!
counting $stat
kill -INT $stat
wait $stat
status=$?
[ $status = 130 ] || fail "stat -a after SIGINT exited $status: $(cat "$tmp/err")"
grep -q "Performance counter stats for 'system wide'" "$tmp/a.txt" || fail "-a: $(cat "$tmp/a.txt")"
grep -Eq '^ +[0-9]+  perf::TASK-CLOCK ' "$tmp/a.txt" || fail "-a: no task clock"
echo "PASS: mpxkit stat -a"
