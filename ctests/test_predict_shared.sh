#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit predict on the public measurements in ../shared/data/dvfs (never committed): the
# importers on the real files, a held-out evaluation below the f/f' baseline, the shipped model.
# SKIP (77) where the data is not there.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

data="${MPXKIT_SHARED:-$top_srcdir/../shared}/data/dvfs"
[ -d "$data/gemstone" ] && [ -d "$data/nikov" ] || { echo "SKIP: no $data"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-predict-shared.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# import NAME ROWS ARGS...: the dataset has ROWS rows.
import() {
	name=$1 rows=$2
	shift 2
	# shellcheck disable=SC2086
	if $mpxkit predict import --dataset "$name" -o "$tmp/$name.csv" "$@" 2>"$tmp/err" &&
		[ "$(grep -vc '^#' "$tmp/$name.csv")" -eq $((rows + 1)) ]; then
		ok "import $name: $rows rows"
	else
		not_ok "import $name: $(cat "$tmp/err") $(grep -vc '^#' "$tmp/$name.csv" 2>/dev/null)"
	fi
}
import gemstone-date18 621 --from gemstone "$data/gemstone/date-18-A15-experiment-breakdown.csv"
import gemstone-asrtpm 2160 --from gemstone "$data/gemstone/asrtpm-A15-powmon-data.csv"
# 30 benchmarks x 3 frequencies x 2 runs; 9 x 3 x 2 x (1 or 2 cores): 108; 84 cross-core runs
import nikov-cbench 180 --from nikov "$data"/nikov/cBench/xu3_*.data \
	"$data/nikov/cBench/runtime_cBench_A15.csv"
import nikov-parsec 108 --from nikov "$data"/nikov/PARSEC/xu3_*.data \
	"$data/nikov/PARSEC/runtime_PARSEC_A15.csv"
import nikov-crosscore 84 --from nikov "$data/nikov/cross_core/runtime_cBench7_A7_A15.csv"

# The authors' split: held-out time below pure f/f' scaling, over all pairs.
# shellcheck disable=SC2086
$mpxkit predict eval --split "$data/nikov/cBench/cbench_split.data" --format csv \
	"$tmp/nikov-cbench.csv" >"$tmp/eval.csv" 2>"$tmp/err"
if awk -F, '$2 == "time" && $3 == "all" { found = 1; exit !($6 < $8) } END { if (!found) exit 1 }' \
	"$tmp/eval.csv"; then
	ok "cBench held out: time below f/f' scaling"
else
	not_ok "cBench eval: $(cat "$tmp/err") $(grep time "$tmp/eval.csv")"
fi

# The shipped model reads the imported dataset: 180 rows x 8 configurations.
# shellcheck disable=SC2086
$mpxkit predict apply -m "$top_srcdir/data/predict/odroid-xu3-cbench.mpxp" --format csv \
	"$tmp/nikov-cbench.csv" >"$tmp/apply.csv" 2>"$tmp/err"
[ "$(wc -l <"$tmp/apply.csv")" -eq 1441 ] && ok "shipped model applies to cBench" ||
	not_ok "shipped model: $(cat "$tmp/err")"
exit "$failed"
