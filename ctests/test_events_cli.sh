#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Event names through the CLI (doc/events.md): mpxkit list against perf list, tracepoint and msr
# counts of mpxkit stat against perf stat, one-line errors, the default domain, refused opens.
set -u
: "${MPXKIT:=utils/mpxkit}"
: "${top_builddir:=.}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
. "${top_srcdir:-.}/ctests/cli_lib.sh"
workload=$top_builddir/ctests/syscalls
have_perf=no
perf stat -e task-clock -- true >/dev/null 2>&1 && have_perf=yes

# Usage and bad names: one line each, exit 1 or 2, before anything runs.
expect_fail "list: a bad format" 1 "^mpxkit list: --format takes table or json, not 'csv'" list --format csv
expect_fail "list: two patterns" 1 "unexpected argument 'b'" list a b
expect_fail "stat: an unknown name names the closest" 2 \
	"^mpxkit stat: task-clok: no such event; closest: task-clock" stat -e task-clok -- true
expect_fail "stat: a bad modifier" 2 "^mpxkit stat: cycles:x: bad modifier 'x'" stat -e cycles:x -- true
expect_fail "stat: a modifier counting no mode" 2 "count in no mode" stat -e task-clock:u=0 -- true
expect_fail "stat: a sysfs name without its closing slash" 2 "msr/tsc: no closing '/'" \
	stat -e msr/tsc -- true

# A PMU with a cpumask (RAPL's power, uncore) is refused per task, on a fake sysfs tree.
mkdir -p "$tmp/sys/power/events" "$tmp/sys/power/format"
echo 23 >"$tmp/sys/power/type"
echo 0 >"$tmp/sys/power/cpumask"
echo config:0-7 >"$tmp/sys/power/format/event"
echo event=0x02 >"$tmp/sys/power/events/energy-pkg"
echo 2.3283064365386962890625e-10 >"$tmp/sys/power/events/energy-pkg.scale"
echo Joules >"$tmp/sys/power/events/energy-pkg.unit"
MPXKIT_TEST_SYSFS=$tmp/sys expect_fail "stat: a per-CPU PMU per task" 2 \
	"power/energy-pkg/: power counts per CPU (it has a cpumask), not per task; it needs system-wide counting" \
	stat -e power/energy-pkg/ -- true
MPXKIT_TEST_SYSFS=$tmp/sys run list sysfs
if [ "$status" -eq 0 ] && grep -Eq '^power/energy-pkg/ +Joules +scale 2.3283064365386963e-10; event=0x02' "$tmp/out"; then
	ok "list: a sysfs alias with its unit and scale"
else
	not_ok "list: sysfs unit and scale: $(cat "$tmp/out" "$tmp/err")"
fi

# The list by kind, and as JSON.
run list
if [ "$status" -eq 0 ] && grep -q '^# software: ' "$tmp/out" && grep -q '^perf::TASK-CLOCK  *ns ' "$tmp/out"; then
	ok "list: headed by kind"
else
	not_ok "list: $(head -3 "$tmp/out") $(cat "$tmp/err")"
fi
run list --format json
if [ "$status" -eq 0 ] && jq -e 'length > 0 and all(.[]; (.name | type) == "string" and (.kind | type) == "string")' "$tmp/out" >/dev/null &&
	[ "$(jq -r '.[] | select(.name == "perf::TASK-CLOCK") | .kind + " " + .unit' "$tmp/out")" = "software ns" ]; then
	ok "list --format json: name and kind for each"
else
	not_ok "list --format json: $(head -c 300 "$tmp/out") $(cat "$tmp/err")"
fi

# The same tracepoints and sysfs PMU events as perf list, name for name.
if [ $have_perf = yes ] && [ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ]; then
	perf list tracepoint 2>/dev/null | awk '$1 ~ /:/ {print $1}' | sort >"$tmp/perf.tp"
	$MPXKIT list tracepoint | grep -v '^#' | sort >"$tmp/mpxkit.tp"
	if [ -s "$tmp/perf.tp" ] && cmp -s "$tmp/perf.tp" "$tmp/mpxkit.tp"; then
		ok "list tracepoint: the $(wc -l <"$tmp/perf.tp") of perf list tracepoint"
	else
		not_ok "list tracepoint differs from perf list: $(diff "$tmp/perf.tp" "$tmp/mpxkit.tp" | head -5)"
	fi
else
	echo "ok - list tracepoint against perf list # SKIP no perf or no tracefs mounted here"
fi
if [ $have_perf = yes ]; then
	perf list pmu 2>/dev/null | awk '$1 ~ /\/$/ {print $1}' | sort >"$tmp/perf.pmu"
	$MPXKIT list sysfs | grep -v '^#' | awk '{print $1}' | sort >"$tmp/mpxkit.pmu"
	if cmp -s "$tmp/perf.pmu" "$tmp/mpxkit.pmu"; then
		ok "list sysfs: the $(wc -l <"$tmp/perf.pmu") kernel PMU events of perf list pmu"
	else
		not_ok "list sysfs differs from perf list pmu: $(diff "$tmp/perf.pmu" "$tmp/mpxkit.pmu" | head -5)"
	fi
fi

# Everything below counts: skip where the kernel refuses perf_event_open altogether.
if ! $MPXKIT stat -e task-clock -- true >/dev/null 2>"$tmp/err"; then
	echo "SKIP: perf_event_open is refused here: $(cat "$tmp/err")"
	exit 77
fi

# Known system calls: N opens and M writes, counted by mpxkit stat and perf stat alike.
N=37 M=211
if $MPXKIT list tracepoint | grep -qx 'syscalls:sys_enter_openat' && $MPXKIT list tracepoint | grep -qx 'syscalls:sys_enter_write'; then
	$MPXKIT stat -e syscalls:sys_enter_openat,syscalls:sys_enter_write -c 2 -f csv -o "$tmp/stat.csv" \
		-- "$workload" $N $M || not_ok "stat of the workload exited $?"
	opens=$(awk -F, '$1 == "syscalls:sys_enter_openat" {print $2}' "$tmp/stat.csv")
	writes=$(awk -F, '$1 == "syscalls:sys_enter_write" {print $2}' "$tmp/stat.csv")
	if [ "$opens" = $N ] && [ "$writes" = $M ]; then
		ok "stat: syscalls:sys_enter_openat $opens, sys_enter_write $writes for $N opens, $M writes"
	else
		not_ok "stat: $opens opens, $writes writes, not $N and $M: $(cat "$tmp/stat.csv")"
	fi
	if [ $have_perf = yes ]; then
		perf stat -x, -e syscalls:sys_enter_openat,syscalls:sys_enter_write -- "$workload" $N $M 2>"$tmp/perf.csv"
		p_opens=$(awk -F, '$3 == "syscalls:sys_enter_openat" {print $1}' "$tmp/perf.csv")
		p_writes=$(awk -F, '$3 == "syscalls:sys_enter_write" {print $1}' "$tmp/perf.csv")
		if [ "$p_opens" = "$opens" ] && [ "$p_writes" = "$writes" ]; then
			ok "stat: the same tracepoint counts as perf stat ($p_opens, $p_writes)"
		else
			not_ok "perf stat counts $p_opens opens, $p_writes writes; mpxkit $opens, $writes"
		fi
	fi
else
	echo "ok - tracepoint counts # SKIP no syscalls tracepoints here (tracefs not mounted?)"
fi

# msr/tsc/ counts per task (the msr PMU has no cpumask): TSC cycles per task-clock ns, as perf's.
busy() { "$@" -- sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'; }
if $MPXKIT list sysfs | grep -q '^msr/tsc/'; then
	busy $MPXKIT stat -e msr/tsc/,task-clock -c 2 -f csv -o "$tmp/tsc.csv" || not_ok "stat msr/tsc/ exited $?"
	rate=$(awk -F, '$1 == "msr/tsc/" {t = $2} $1 == "task-clock" {c = $2} END {if (c > 0) printf "%.3f", t / c}' "$tmp/tsc.csv")
	if [ $have_perf = yes ]; then
		busy perf stat -x, -e msr/tsc/,task-clock 2>"$tmp/perf-tsc.csv"
		# perf stat -x gives task-clock in msec
		p_rate=$(awk -F, '$3 == "msr/tsc/" {t = $1} $3 == "task-clock" {c = $2 == "msec" ? $1 * 1e6 : $1} END {if (c > 0) printf "%.3f", t / c}' "$tmp/perf-tsc.csv")
		if awk -v a="$rate" -v b="$p_rate" 'BEGIN {exit !(a > 0 && b > 0 && a / b > 0.8 && a / b < 1.25)}'; then
			ok "stat: msr/tsc/ at $rate TSC cycles per task ns (perf stat: $p_rate)"
		else
			not_ok "msr/tsc/: $rate per ns, perf stat $p_rate: $(cat "$tmp/tsc.csv")"
		fi
	elif awk -v a="$rate" 'BEGIN {exit !(a > 0.1 && a < 10)}'; then
		ok "stat: msr/tsc/ at $rate TSC cycles per task ns"
	else
		not_ok "msr/tsc/: $rate per ns"
	fi
else
	echo "ok - msr/tsc/ # SKIP no msr PMU here"
fi

# power/*: the real RAPL PMU, read with its scale and unit where the kernel has it.
if ls /sys/bus/event_source/devices/power/events/energy-* >/dev/null 2>&1; then
	ev=$(basename "$(ls /sys/bus/event_source/devices/power/events/energy-* | grep -v '\.' | head -n 1)")
	run list "power/$ev/"
	unit=$(cat "/sys/bus/event_source/devices/power/events/$ev.unit")
	if grep -q "^power/$ev/ *$unit " "$tmp/out"; then
		ok "list: power/$ev/ in $unit"
	else
		not_ok "list power/$ev/: $(cat "$tmp/out")"
	fi
	expect_fail "stat: power/$ev/ per task" 2 "needs system-wide counting" stat -e "power/$ev/" -- true
else
	echo "ok - power/* # SKIP no RAPL PMU (power) in this kernel: a virtual machine"
fi

# The default domain: user and kernel where allowed, as root here; :u is user mode alone.
run stat -e cs,cs:u -c 2 -f csv -- sh -c 'sleep 0.01; sleep 0.01'
both=$(awk -F, '$1 == "cs" {print $2}' "$tmp/err")
user=$(awk -F, '$1 == "cs:u" {print $2}' "$tmp/err")
if [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 1 ]; then
	if [ "${both:-0}" -ge 2 ] && [ "$user" = 0 ]; then
		ok "default domain: $both context switches with kernel mode, $user with :u"
	else
		not_ok "default domain: cs $both, cs:u $user: $(cat "$tmp/err")"
	fi
fi

# Refused opens: as an unprivileged user where perf_event_paranoid forbids kernel mode.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if [ "$(id -u)" = 0 ] && [ "$paranoid" -ge 2 ] && command -v setpriv >/dev/null; then
	as_nobody="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
	$as_nobody $MPXKIT stat -e task-clock:k -- true >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
		grep -q "perf::TASK-CLOCK:k in kernel mode: not allowed (perf_event_open: Permission denied; kernel.perf_event_paranoid=$paranoid" "$tmp/err"; then
		ok "refused: one line naming kernel.perf_event_paranoid, exit 2"
	else
		not_ok "refused: exit $st, $(cat "$tmp/err")"
	fi
	# Unprivileged, the default domain is user mode only, and it counts.
	$as_nobody $MPXKIT stat -e task-clock,cs -c 2 -f csv -- true >"$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st = 0 ] && grep -q '^cs,0,' "$tmp/err"; then
		ok "unprivileged: the default is user mode, where switches count 0"
	else
		not_ok "unprivileged default: exit $st, $(cat "$tmp/err")"
	fi
else
	echo "ok - refused opens # SKIP needs root, setpriv and perf_event_paranoid >= 2"
fi

[ $failed = 0 ] && echo "PASS: event names through the CLI"
exit $failed
