#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit profile and analyze on real programs: three of the corpus's Debian tools on the corpus's
# generated inputs (data/README.md), and the OpenMP kernel bench/omp_kernel under 4 threads.
# usage: bench/spacetime-real.sh BUILDDIR WORKDIR   (callgrind: a few CPU minutes; uses nice)
set -eu
build=$(cd "$1" && pwd)
mkdir -p "$2"
cd "$2"
mpxkit=$build/utils/mpxkit
[ -f small.txt ] || "$build/data/kernels/gendata" text 30000 >small.txt
[ -f tiny.txt ] || "$build/data/kernels/gendata" text 10000 >tiny.txt
[ -f workload.sql ] || "$build/data/kernels/gendata" sql 60000 >workload.sql
export PATH=/usr/bin:/bin LC_ALL=C
# Intervals from the corpus's total_bb, for about 200 windows.
nice "$mpxkit" profile -o gzip.prof -i 1700000 -- gzip -9 -c small.txt >/dev/null
nice "$mpxkit" profile -o sed.prof -i 650000 -- \
	sed -E 's/([a-z]+)(ka|ri|to)\b/\2-\1/g; s/ +/ /g' tiny.txt >/dev/null
nice "$mpxkit" profile -o sqlite3.prof -i 2750000 -- sqlite3 :memory: <workload.sql >/dev/null
OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive nice "$mpxkit" profile -o omp.prof -i 1000000 -- \
	"$build/bench/omp_kernel" 1024 4 >/dev/null
for p in gzip sed sqlite3 omp; do
	"$mpxkit" analyze -q -n 5 "$p.prof" --html "$p.html"
	echo
done
