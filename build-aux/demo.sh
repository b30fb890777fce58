#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job of README's quick start: the component inside PAPI, then the estimators scored.
# usage: demo.sh PAPI_PREFIX|none MPXKIT_BINARY CORPUS_DIR WORKLOAD
set -eu
papi_prefix=$1
mpxkit=$2
corpus=$3
workload=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

section() { printf '\n==== %s\n' "$1"; }

if [ "$papi_prefix" != none ]; then
	section "PAPI with the mpxkit component: $papi_prefix/bin/papi_component_avail"
	"$papi_prefix/bin/papi_component_avail" | sed -n '/^Active components/,/^Inactive components/p' |
		grep -v '^Inactive components'
	"$papi_prefix/bin/papi_component_avail" | grep -q 'Name:   mpxkit' ||
		{ echo "demo: mpxkit is not an active PAPI component" >&2; exit 1; }

	section "Counting through the component: papi_command_line mpxkit:::perf::TASK-CLOCK mpxkit:::perf::PAGE-FAULTS"
	"$papi_prefix/bin/papi_command_line" mpxkit:::perf::TASK-CLOCK mpxkit:::perf::PAGE-FAULTS
else
	section "PAPI was not built (--disable-papi): skipping the component part"
fi

events=perf::TASK-CLOCK,perf::CPU-CLOCK,perf::PAGE-FAULTS,perf::MINOR-FAULTS,perf::MAJOR-FAULTS,perf::CONTEXT-SWITCHES
# The best schedule and estimator on the training and validation programs (doc/schedules.md).
best_schedule=adaptive
best_estimator=linear-dira
section "mpxkit stat: 6 software events of $(basename "$workload") on 2 counters: round-robin with fixed (PAPI's and perf's way), $best_schedule with $best_estimator, and each event counted all the time"
"$mpxkit" stat -e "$events" -c 2 -o "$tmp/rr" -- "$workload" >/dev/null
"$mpxkit" stat -e "$events" -c 2 --schedule "$best_schedule" --estimator "$best_estimator" \
	-o "$tmp/best" -- "$workload" >/dev/null
"$mpxkit" stat -e "$events" -c 6 -o "$tmp/exact" -- "$workload" >/dev/null
# The reports list the events in the same order: value, name, then "(counted P%)".
printf '%-22s %14s %8s %14s %8s %14s\n' event round-robin error "$best_schedule" error exact
paste "$tmp/rr" "$tmp/best" "$tmp/exact" | awk '$2 ~ /^perf::/ && $2 == $6 && $2 == $10 {
	e1 = $9 > 0 ? sprintf("%+.1f%%", 100 * ($1 - $9) / $9) : ($1 == 0 ? "0" : "-")
	e2 = $9 > 0 ? sprintf("%+.1f%%", 100 * ($5 - $9) / $9) : ($5 == 0 ? "0" : "-")
	printf "%-22s %14s %8s %14s %8s %14s\n", $2, $1, e1, $5, e2, $9 }'
echo "(three runs of the program: the exact column is another run's, so a few tenths of a per cent"
echo " of the clocks are the program's own variation; page faults come in one burst at start-up,"
echo " which round-robin sees only when the faults' group happens to count then)"

section "Schedules and estimators scored on the bundled traces: mpxkit eval --counters 4 --schedule round-robin,$best_schedule -e fixed,$best_estimator $corpus"
"$mpxkit" eval --counters 4 --schedule "round-robin,$best_schedule" -e "fixed,$best_estimator" "$corpus"
