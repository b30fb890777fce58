#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs bench/pcz_bench over the recorded per-thread data: one table, every method, one process each.
# usage: pcz-bench.sh [PATH/TO/pcz_bench [DATA_DIR]]   (or: make pcz-bench)
set -eu
bench=${1:-bench/pcz_bench}
data=${2:-$(dirname "$0")/../data/threads}
[ -x "$bench" ] || { echo "pcz-bench.sh: build $bench first (make check or make pcz-bench)" >&2; exit 1; }
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
# Sorted, so runs compare line by line.
# shellcheck disable=SC2046
"$bench" $(ls "$data"/*.csv | sort)
