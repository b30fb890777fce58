#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs bench/pcz_bench over recorded per-thread data: one table, every method, one process.
# usage: pcz-bench.sh [PATH/TO/pcz_bench [DATA_DIR...]]   (or: make pcz-bench)
# The default data are the validation files of data/threads-dev (issue 16's goals are read on
# them); data/threads and data/threads-dev/tune can be given instead.
set -eu
bench=${1:-bench/pcz_bench}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$(dirname "$0")/../data/threads-dev/valid"
[ -x "$bench" ] || { echo "pcz-bench.sh: build $bench first (make check or make pcz-bench)" >&2; exit 1; }
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -m), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
# Sorted, so runs compare line by line.
files=$(for d in "$@"; do ls "$d"/*.csv "$d"/*.csv.gz 2>/dev/null; done | sort)
# shellcheck disable=SC2086
"$bench" $files
