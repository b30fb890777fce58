#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The measurements behind the forms of doc/predict.md: every variant of each equation evaluated
# on the TRAINING part of each data set only (eval --validate: leave one training workload out),
# so the test workloads stay unseen until the one final evaluation.  Needs ../shared/data/dvfs.
#   bench/predict-validate.sh [MPXKIT] [WORKDIR]
# Each row: MAPE % of the summaries, the baseline in brackets.  Eq. (1) first (the power columns
# there use the defaults), then eq. (7) with the form of eq. (1) chosen for that data set.
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
# PARSEC's four training workloads pooled with cBench's fifteen (same board, sensor and tool):
# the union of the authors' two split files.
cat "$data/nikov/cBench/cbench_split.data" "$data/nikov/PARSEC/PARSEC_split.data" \
	>"$work/nikov-split.data"

# The split of each data set: the authors' files for Nikov, the documented hash for GemStone.
split_of() {
	case $1 in
	nikov-cbench) echo "$data/nikov/cBench/cbench_split.data" ;;
	nikov-parsec) echo "$data/nikov/PARSEC/PARSEC_split.data" ;;
	pooled) echo "$work/nikov-split.data" ;;
	*) echo hash ;;
	esac
}

files_of() {
	case $1 in
	pooled) echo "$work/nikov-cbench.csv $work/nikov-parsec.csv" ;;
	*) echo "$work/$1.csv" ;;
	esac
}

# One line per variant: the summary MAPEs of the data set (pooled: PARSEC's), model (baseline).
row() {
	set=$1
	label=$2
	shift 2
	# shellcheck disable=SC2046 # the file list splits on purpose
	nice "$mpxkit" predict eval --validate --split "$(split_of "$set")" --format csv "$@" \
		$(files_of "$set") >"$work/out.csv"
	awk -F, -v set="$set" -v label="$label" '
		NR > 1 && (set != "pooled" || $1 == "nikov-parsec") {
			v[$2 "/" $3] = sprintf("%.2f (%.2f)", $6, $8)
		}
		END {
			printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", set, label,
				v["time/adjacent"], v["time/extreme"], v["time/all"],
				v["power/same"], v["power/all"], v["energy/all"]
		}' "$work/out.csv"
}

# The form of eq. (1) each data set's power rows use: the one chosen below (doc/predict.md).
met_of() {
	case $1 in
	nikov-parsec | pooled) echo none ;;
	*) echo cpi ;;
	esac
}

echo "| data set | variant | time adjacent | time extreme | time all | power same f | power other f | energy other f |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for set in nikov-cbench nikov-parsec gemstone-date18 gemstone-asrtpm; do
	for met in none linear mlp cpi auto; do
		row "$set" "--met $met" --met "$met"
	done
done
for set in nikov-cbench nikov-parsec pooled gemstone-date18 gemstone-asrtpm; do
	met=$(met_of "$set")
	for power in per-freq per-freq-v voltage; do
		for events in auto roles all; do
			for fit in "" --robust; do
				# shellcheck disable=SC2086 # an empty $fit is no argument
				row "$set" "--met $met --power $power --power-events $events${fit:+ $fit}" \
					--met "$met" --power "$power" --power-events "$events" $fit
			done
		done
	done
	row "$set" "--met $met --ridge 0.01" --met "$met" --ridge 0.01
	row "$set" "--met $met --unweighted" --met "$met" --unweighted
	row "$set" "--met $met --no-anchor" --met "$met" --no-anchor
done
# PARSEC with cBench: the events both data sets name by role.
for power in per-freq voltage; do
	for fit in "" --robust; do
		# shellcheck disable=SC2086
		row pooled "--met none --power $power --power-events cycles,instructions,dcache,branches${fit:+ $fit}" \
			--met none --power "$power" --power-events cycles,instructions,dcache,branches $fit
	done
done

# Cross-core: 7 workloads, no split to choose on; every form under leave-one-out, and auto,
# which chooses inside each fold on the other six.
echo
echo "| cross-core (LOO, 7 workloads) | time cross | constant CPI ratio |"
echo "| --- | --- | --- |"
for met in auto cpi none; do
	for x in ratio cpi cpi-mpki auto; do
		nice "$mpxkit" predict eval --split loo --format csv --met "$met" --xcore "$x" \
			"$work/nikov-cbench.csv" "$work/nikov-crosscore.csv" >"$work/out.csv"
		awk -F, -v x="$x" -v met="$met" '
			$1 == "nikov-crosscore" && $2 == "time" && $3 == "cross" {
				printf "| --met %s --xcore %s | %.2f | %.2f |\n", met, x, $6, $8 }' \
			"$work/out.csv"
	done
done
