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
section "mpxkit stat: 6 software events of $(basename "$workload") multiplexed on 2 counters (default estimator), next to each counted all the time"
"$mpxkit" stat -e "$events" -c 2 -o "$tmp/mpx" -- "$workload" >/dev/null
"$mpxkit" stat -e "$events" -c 6 -o "$tmp/exact" -- "$workload" >/dev/null
# Both reports list the events in the same order: value, name, then "(counted P%)".
printf '%-22s %16s %10s %16s %10s\n' event multiplexed counted exact error
paste "$tmp/mpx" "$tmp/exact" | awk '$2 ~ /^perf::/ && $2 == $6 {
	sub(/\)$/, "", $4)
	err = $5 > 0 ? sprintf("%+.1f%%", 100 * ($1 - $5) / $5) : ($1 == 0 ? "0" : "-")
	printf "%-22s %16s %10s %16s %10s\n", $2, $1, $4, $5, err }'
echo "(page faults come in bursts, so a slice-sampled estimate can miss them: the problem mpxkit's estimators address)"

estimators=fixed,linear-dira,linear-tam,cam,dcam,ref-rate,mlp,bigru
section "Multiplexing estimators scored on the bundled traces: mpxkit eval --counters 4 --reference Ir -e $estimators $corpus"
echo "(Ir, instructions, is counted in every slice as a fixed counter would; ref-rate uses it."
echo " mlp and bigru are the learned estimators, with the models in data/models; they were trained"
echo " on most of these traces, so doc/estimators.md scores them on the held-out ones)"
"$mpxkit" eval --counters 4 --reference Ir -e "$estimators" "$corpus"
