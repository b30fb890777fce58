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
# The schedule and estimator recommended on the training and validation programs
# (doc/schedules.md): within 0.01 of the best mean RA there, the best total accuracy, no model.
best_schedule=adaptive
best_estimator=linear-dira
section "mpxkit stat --multiplex all --exact: 6 software events of $(basename "$workload") multiplexed on 2 counters on purpose (by default they take no counter and are counted all the time), each run also counting them all the time"
echo "-- round-robin with fixed, as PAPI and perf multiplex:"
"$mpxkit" stat --multiplex all -e "$events" -c 2 --exact -o "$tmp/rr" -- "$workload" >/dev/null
sed -n '/perf::/p' "$tmp/rr"
echo "-- $best_schedule with $best_estimator:"
"$mpxkit" stat --multiplex all -e "$events" -c 2 --schedule "$best_schedule" \
	--estimator "$best_estimator" \
	--exact -o "$tmp/best" -- "$workload" >/dev/null
sed -n '/perf::/p' "$tmp/best"
echo "(page faults come in one burst at start-up, which round-robin sees only when their group"
echo " happens to count then; $best_schedule counts the burst-prone events first)"
echo "-- the default, --multiplex hardware: software events take no counter, each counted all the time:"
"$mpxkit" stat -e "$events" -c 2 --exact -o "$tmp/along" -- "$workload" >/dev/null
sed -n '/perf::/p' "$tmp/along"

section "Schedules and estimators scored on the bundled traces: mpxkit eval --counters 4 --schedule round-robin,$best_schedule -e fixed,$best_estimator,mlp,bigru $corpus"
"$mpxkit" eval --counters 4 --schedule "round-robin,$best_schedule" -e "fixed,$best_estimator,mlp,bigru" "$corpus"
echo "(mlp and bigru are the learned estimators, with the models in data/models; they were trained"
echo " on most of these traces, so doc/estimators.md scores them on the held-out ones)"
