#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The intervals' calibration, measured (doc/estimators.md, "Intervals"): for each schedule x
# estimator, the share of windows and of run totals whose interval holds the truth, the median
# relative half-widths of windows and totals, and the estimator's real error (mean RA, total
# accuracy), at C = 4.
# usage: build-aux/interval-tables.sh [-l LEVEL] [-c C] [TRACE|DIR...]
#   default: the held-out callgrind sets (the corpus's test programs of seed 1, data/heldout,
#   data/heldout2, data/heldout3); name data/real (or any traces) to measure those instead.
#   MPXKIT=binary (default ./utils/mpxkit); MPXKIT_DATADIR as for mpxkit eval (default data).
cd "$(dirname "$0")/.." || exit 2
M=${MPXKIT:-./utils/mpxkit}
export MPXKIT_DATADIR="${MPXKIT_DATADIR:-data}"
level=0.9
counters=4
while getopts l:c: opt; do
	case $opt in
	l) level=$OPTARG ;;
	c) counters=$OPTARG ;;
	*) exit 1 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
	set -- data/corpus/fft.csv.gz data/corpus/grep.csv.gz data/corpus/sort-kernel.csv.gz \
		data/corpus/spmv.csv.gz data/corpus/zstd.csv.gz data/heldout data/heldout2 data/heldout3
fi
S=round-robin,adaptive
E=fixed,linear-dira,linear-tam,cam,dcam,mlp,bigru,bigru-full
# The table's summary rows, one line per SCHEDULE/ESTIMATOR column.
rows() {
	awk -v S="$S" '
		/^event/ { n = split($0, h, " "); for (i = 2; i <= n; i++) col[i - 1] = h[i] }
		/^mean/ { for (i = 2; i <= NF; i += 2) ra[i / 2] = $i }
		/^total acc\./ { for (i = 3; i <= NF; i++) ta[i - 2] = $i }
		/^coverage/ { for (i = 2; i <= NF; i++) cov[i - 1] = $i }
		/^total cov\./ { for (i = 3; i <= NF; i++) tc[i - 2] = $i }
		/^half-width/ { for (i = 2; i <= NF; i++) hw[i - 1] = $i }
		/^total width/ { for (i = 3; i <= NF; i++) tw[i - 2] = $i }
		END {
			for (i = 1; i in cov; i++) {
				label = col[i]
				if (index(S, ",") == 0)
					label = S "/" label
				split(label, p, "/")
				printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], cov[i], tc[i],
					hw[i], tw[i], ra[i], ta[i]
			}
		}'
}
echo "# mpxkit eval --level $level -c $counters on: $*"
echo "| schedule | estimator | windows covered | totals covered | median half-width | median total half-width | mean RA | total accuracy |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
$M eval --level "$level" -c "$counters" -s $S -e $E "$@" | rows || exit 2
# ref-rate needs a reference: the first column, as a fixed counter counts instructions.
first=$(for a in "$@"; do
	if [ -d "$a" ]; then ls "$a"/*.csv* | head -1; else echo "$a"; fi
done | head -1)
ref=$(gzip -dcf "$first" | grep -v '^#' | head -1 | cut -d, -f2)
$M eval --level "$level" -c "$counters" -r "$ref" -s $S -e ref-rate "$@" | rows | sed "s#| ref-rate |#| ref-rate (reference $ref) |#" || exit 2
