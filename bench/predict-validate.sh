#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The measurements behind the forms of doc/predict.md: every variant of each equation evaluated
# on the TRAINING part of each data set only (eval --validate: leave one training workload out),
# so the test workloads stay unseen until the one final evaluation.  Needs ../shared/data/dvfs.
#   bench/predict-validate.sh [MPXKIT] [WORKDIR]
set -eu
mpxkit=${1:-./utils/mpxkit}
work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/predict-validate.XXXXXX")}
data=${DVFS_DATA:-$(dirname "$0")/../../shared/data/dvfs}
[ -d "$data" ] || { echo "predict-validate: no data at $data" >&2; exit 77; }
mkdir -p "$work"

import() {
	name=$1
	shift
	[ -s "$work/$name.csv" ] || nice "$mpxkit" predict import --dataset "$name" \
		-o "$work/$name.csv" "$@"
}
import gemstone-date18 --from gemstone "$data/gemstone/date-18-A15-experiment-breakdown.csv"
import gemstone-asrtpm --from gemstone "$data/gemstone/asrtpm-A15-powmon-data.csv"
import nikov-cbench --from nikov "$data"/nikov/cBench/xu3_*.data "$data/nikov/cBench/runtime_cBench_A15.csv"
import nikov-parsec --from nikov "$data"/nikov/PARSEC/xu3_*.data "$data/nikov/PARSEC/runtime_PARSEC_A15.csv"
import nikov-crosscore --from nikov "$data/nikov/cross_core/runtime_cBench7_A7_A15.csv"

# The split of each data set: the authors' files for Nikov, the documented hash for GemStone.
split_of() {
	case $1 in
	nikov-cbench) echo "$data/nikov/cBench/cbench_split.data" ;;
	nikov-parsec) echo "$data/nikov/PARSEC/PARSEC_split.data" ;;
	*) echo hash ;;
	esac
}

# One line per variant: the summary MAPEs, model (baseline).
row() {
	set=$1
	label=$2
	shift 2
	nice "$mpxkit" predict eval --validate --split "$(split_of "$set")" --format csv "$@" \
		"$work/$set.csv" >"$work/out.csv"
	awk -F, -v set="$set" -v label="$label" '
		NR > 1 { v[$2 "/" $3] = sprintf("%.2f (%.2f)", $6, $8) }
		END {
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", set, label,
				v["time/adjacent"], v["time/extreme"], v["time/all"],
				v["power/same"], v["power/all"], v["energy/all"]
		}' "$work/out.csv"
}

echo "| data set | variant | time adjacent | time extreme | time all | power same f | power other f | energy other f |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for set in nikov-cbench nikov-parsec gemstone-date18 gemstone-asrtpm; do
	for met in none linear mlp auto; do
		row "$set" "--met $met" --met "$met"
	done
	row "$set" "--met auto --unweighted" --unweighted
	for power in per-freq per-freq-v voltage; do
		for events in auto roles all; do
			row "$set" "--power $power --power-events $events" --power "$power" \
				--power-events "$events"
		done
	done
	row "$set" "--power-events auto --ridge 0.01" --ridge 0.01
	row "$set" "defaults, --no-anchor" --no-anchor
done

# Cross-core: 7 workloads, no split to choose on; every form under leave-one-out, and auto,
# which chooses inside each fold on the other six.
echo
echo "| cross-core (LOO, 7 workloads) | time cross | constant CPI ratio |"
echo "| --- | --- | --- |"
for x in ratio cpi cpi-mpki auto; do
	nice "$mpxkit" predict eval --split loo --format csv --xcore "$x" "$work/nikov-cbench.csv" \
		"$work/nikov-crosscore.csv" >"$work/out.csv"
	awk -F, -v x="$x" '$1 == "nikov-crosscore" && $2 == "time" && $3 == "cross" {
		printf "| --xcore %s | %.2f | %.2f |\n", x, $6, $8 }' "$work/out.csv"
done
