#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The main job of README's quick start: the component inside PAPI, then the estimators scored.
# usage: demo.sh PAPI_PREFIX|none MPXKIT_BINARY CORPUS_DIR
set -eu
papi_prefix=$1
mpxkit=$2
corpus=$3

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

section "Multiplexing estimators scored on the bundled traces: mpxkit eval --counters 4 $corpus"
"$mpxkit" eval --counters 4 "$corpus"
