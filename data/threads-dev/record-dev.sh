#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Records the .pcz development set (README.md): every program below through ../threads/record.sh.
# usage: record-dev.sh OUTDIR [NAME...]   (needs valgrind, gcc -fopenmp, xz, zstd, pigz, pbzip2,
# lbzip2, plzip, pixz; writes OUTDIR/tune/NAME.csv.gz and OUTDIR/valid/NAME.csv.gz)
set -eu
[ $# -ge 1 ] || { echo "usage: record-dev.sh OUTDIR [NAME...]" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
mkdir -p "$out/tune" "$out/valid"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -fopenmp "$here/omp_kernels.c" -o "$work/omp_kernels" -lm
k="$work/omp_kernels"
# The inputs of the threaded tools: 1.1 MB of numbers (small enough for valgrind), and a
# compressed copy for the decompressors.
seq 1 90000 | awk '{print ($1*7919)%100003, $1}' >"$work/in.txt"
xz -T1 -6 -c "$work/in.txt" >"$work/in.txt.xz"
lbzip2 -n 1 -c "$work/in.txt" >"$work/in.txt.bz2"
in="$work/in.txt"
# libgomp's idle threads spin by default, which callgrind would count as work.
export OMP_WAIT_POLICY=passive

# NAME SPLIT DUMP_EVERY_BB COMMAND...: split by program, never by row (a program's files all
# go to one side).
run() {
	name=$1 split=$2 every=$3
	shift 3
	if [ -n "$only" ] && ! echo " $only " | grep -q " $name "; then return 0; fi
	echo "recording $name ($split)" >&2
	"$here/../threads/record.sh" "$name" "$every" "$work/$name.csv" -- "$@"
	# The scratch directory's name is no part of the program.
	sed "s|$work/||g" "$work/$name.csv" | gzip -9 -n >"$out/$split/$name.csv.gz"
}
only="$*"

# Tuning programs.
run omp-triad-4 tune 200000 "$k" triad 4 200000 60
run omp-spmv-6 tune 300000 "$k" spmv 6 60000 30
run omp-spmv-16 tune 300000 "$k" spmv 16 60000 20
run omp-nbody-16 tune 400000 "$k" nbody 16 300 8
run omp-scan-3 tune 250000 "$k" scan 3 300000 30
run omp-mergesort-4 tune 300000 "$k" mergesort 4 150000 4
run omp-histo-10 tune 250000 "$k" histo 10 200000 30
run xz-T2 tune 400000 xz -T2 -3 --block-size=131072 -c "$in"
run zstd-T3 tune 400000 zstd -T3 -5 -B262144 -q -c "$in"
run pigz-p4 tune 300000 pigz -p 4 -b 64 -9 -c "$in"
run lbzip2-n3 tune 400000 lbzip2 -n 3 -c "$in"
run sort-parallel-2 tune 300000 sort --parallel=2 -S 1M -k2,2n "$in"

# Validation programs.
run omp-jacobi2d-8 valid 300000 "$k" jacobi2d 8 400 40
run omp-jacobi2d-2 valid 300000 "$k" jacobi2d 2 300 40
run omp-gemm-4 valid 300000 "$k" gemm 4 128 3
run omp-montecarlo-2 valid 200000 "$k" montecarlo 2 200000 20
run omp-mandel-8 valid 300000 "$k" mandel 8 240 4
run omp-cg-12 valid 300000 "$k" cg 12 120000 30
run omp-cg-3 valid 300000 "$k" cg 3 120000 30
run omp-collatz-5 valid 300000 "$k" collatz 5 40000 4
run xz-T8 valid 400000 xz -T8 -6 --block-size=65536 -c "$in"
run zstd-T6 valid 400000 zstd -T6 -12 -B262144 -q -c "$in"
run pigz-p12 valid 300000 pigz -p 12 -b 32 -1 -c "$in"
run pbzip2-p6 valid 400000 pbzip2 -p6 -b1 -c "$in"
run plzip-n4 valid 400000 plzip -n 4 -B 65536 -c "$in"
run pixz-p6 valid 400000 pixz -p 6 -i "$in" -o "$work/out.pxz"
run lbzip2-d-n4 valid 300000 lbzip2 -d -n 4 -c "$work/in.txt.bz2"
run sort-parallel-8 valid 300000 sort --parallel=8 -S 512K -n "$in"
