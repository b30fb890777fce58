#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Records the development corpus (data/corpus/NAME.csv.gz) again with `mpxkit record`; see data/README.md.
#
# usage: data/record-corpus.sh [-m MPXKIT] [-s SET] [-o OUTDIR] [-w WORKDIR] [-l] [NAME...]
#   -m  the mpxkit binary (default: $MPXKIT, else mpxkit on PATH)
#   -s  corpus (default: training, validation and test programs), heldout (programs
#       recorded for schedules' held-out side, doc/schedules.md; never trained or tuned on),
#       heldout2 (a second, fresh held-out set, scored once; doc/schedules.md) or heldout3
#       (a third, fresh held-out set, scored once)
#   -o  where the traces go (default: data/SET here)
#   -w  scratch directory for binaries and inputs (default: /tmp/mpxkit-corpus)
#   -l  list the workloads and exit
# With NAMEs, only those workloads are recorded.
#
# Every recording runs with a fixed, minimal environment (--clean-env) from the scratch directory
# with relative file names, and writes stdout and stderr to regular files (not a terminal,
# which some tools probe, nor /dev/null, which stdio buffers differently and GNU grep treats
# as -q), so re-recording on the same system gives identical files.  Only
# Debian packages are needed; the script says which are missing.  The Rodinia suite is the
# project's held-out evaluation set and must never be added here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
mpxkit=${MPXKIT:-mpxkit}
out=
set_name=corpus
work=/tmp/mpxkit-corpus
list_only=0

while getopts m:s:o:w:lh opt; do
	case $opt in
	m) mpxkit=$OPTARG ;;
	s) set_name=$OPTARG ;;
	o) out=$OPTARG ;;
	w) work=$OPTARG ;;
	l) list_only=1 ;;
	h) sed -n '3,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-m MPXKIT] [-s SET] [-o OUTDIR] [-w WORKDIR] [-l] [NAME...]" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
case $set_name in
corpus | heldout | heldout2 | heldout3) ;;
*) echo "$0: -s takes corpus, heldout, heldout2 or heldout3, not '$set_name'" >&2; exit 1 ;;
esac
[ -n "$out" ] || out=$here/$set_name

# rec NAME INTERVAL_BB STDIN INPUT CMD [ARGS...]: records one workload (or lists it with -l).
rec() {
	name=$1 interval=$2 stdin=$3 input=$4
	shift 4
	if [ -n "$selected" ]; then
		case " $selected " in *" $name "*) ;; *) return 0 ;; esac
	fi
	if [ "$list_only" = 1 ]; then
		printf '%s|%s|%s|%s\n' "$name" "$interval" "$*" "$input"
		return 0
	fi
	printf 'recording %s (interval_bb=%s): %s\n' "$name" "$interval" "$*" >&2
	# shellcheck disable=SC2086 # OMP holds whole --env options
	if ! "$mpxkit" record -o "$out/$name.csv.gz" --interval-bb "$interval" \
		--clean-env --env PATH=/usr/bin:/bin --env LC_ALL=C --env HOME=/nonexistent ${OMP:-} \
		--env PYTHONHASHSEED=0 --meta "name=$name" --meta "input=$input" \
		-- "$@" <"$stdin" >"$name.out" 2>"$name.err"; then
		failed="$failed $name"
	fi
	cat "$name.err" >&2
	rm -f "$name.out" "$name.err"
}

jq_program='[.[] | select(.active) | {name, score}] | group_by(.name) | map({name: .[0].name, total: (map(.score) | add)}) | sort_by(.total) | reverse | .[:20]'

workloads() {
	gen="generated in the kernel (fixed seed)"
	rec stencil 150000 /dev/null "$gen" ./stencil
	rec spmv 130000 /dev/null "$gen" ./spmv
	rec bfs 140000 /dev/null "$gen" ./bfs
	rec kmeans 450000 /dev/null "$gen" ./kmeans
	rec lu 120000 /dev/null "$gen" ./lu
	rec nbody 140000 /dev/null "$gen, scale 14" ./nbody 14
	rec fft 300000 /dev/null "$gen" ./fft
	rec sort-kernel 370000 /dev/null "$gen" ./sort
	rec gzip 750000 /dev/null "small.txt (gendata text 30000)" gzip -9 -c small.txt
	rec gunzip 240000 /dev/null "big.txt.gz (gzip -9 of gendata text 500000)" \
		gzip -d -c big.txt.gz
	rec bzip2 650000 /dev/null "text.txt (gendata text 100000)" bzip2 -9 -c text.txt
	rec xz 900000 /dev/null "small.txt (gendata text 30000)" xz -6 -T1 -c small.txt
	rec unxz 520000 /dev/null "big.txt.xz (xz -6 of gendata text 500000)" \
		xz -d -T1 -c big.txt.xz
	rec zstd 600000 /dev/null "small.txt (gendata text 30000)" \
		zstd -15 -T1 --single-thread -c small.txt
	rec lz4 600000 /dev/null "small.txt (gendata text 30000)" lz4 -9 -c small.txt
	rec sqlite3 1250000 workload.sql "workload.sql on stdin (gendata sql 60000)" \
		sqlite3 :memory:
	rec python3 700000 /dev/null "workload.py over text.txt: word counts, 9-queens, sieve" \
		/usr/bin/python3 -s -S workload.py text.txt
	rec perl 520000 /dev/null "workload.pl over tiny.txt: regex tokens, bigram counts" \
		perl workload.pl tiny.txt
	rec coreutils-sort 150000 /dev/null "text.txt (gendata text 100000)" \
		sort --parallel=1 -S 512M -k2,2 -k1,1 text.txt
	rec awk 850000 /dev/null "sales.csv (gendata csv 400000), workload.awk: group sums" \
		awk -F, -f workload.awk sales.csv
	rec jq 520000 /dev/null "items.json (gendata json 15000): filter, group, sort" \
		jq -c "$jq_program" items.json
	rec grep 500000 /dev/null "tiny.txt (gendata text 10000), a back-reference regex" \
		grep -c -E '\b([a-z]{3})[a-z]* [a-z ]*\b\1' tiny.txt
	rec sed 220000 /dev/null "tiny.txt (gendata text 10000)" \
		sed -E 's/([a-z]+)(ka|ri|to)\b/\2-\1/g; s/ +/ /g' tiny.txt
	rec sha256sum 75000 /dev/null "big.txt (gendata text 500000)" sha256sum big.txt
	rec cc1 1000000 /dev/null "kernels.i: data/kernels/*.c as one unit (cc -E -P)" \
		./cc1 -quiet -O2 -o /dev/null kernels.i
	rec bc 2000000 workload.bc "workload.bc on stdin: pi and e to 1200 digits" bc -l
}

# Held out for schedules (doc/schedules.md): OpenMP and MPI-style kernels and more Debian tools,
# recorded after every schedule setting was chosen, and never trained or tuned on.
heldout() {
	gen="generated in the kernel (fixed seed)"
	OMP="--env OMP_NUM_THREADS=2 --env OMP_WAIT_POLICY=passive"
	rec omp-heat 90000 /dev/null "$gen; OpenMP, 2 threads" ./omp_heat
	rec omp-matmul 250000 /dev/null "$gen; OpenMP, 2 threads" ./omp_matmul
	rec omp-hist 43000 /dev/null "$gen; OpenMP, 2 threads" ./omp_hist
	OMP=
	rec halo 75000 /dev/null "$gen; 4 x 4 ranks in one process" ./halo
	rec cg 120000 /dev/null "$gen; 8 ranks in one process" ./cg
	rec bunzip2 250000 /dev/null "text.txt.bz2 (bzip2 -9 of gendata text 100000)" \
		bzip2 -d -c text.txt.bz2
	rec unzstd 60000 /dev/null "big.txt.zst (zstd -19 of gendata text 500000)" \
		zstd -d -T1 -c big.txt.zst
	rec wc 60000 /dev/null "big.txt (gendata text 500000)" wc -lwm big.txt
	rec base64 60000 /dev/null "big.txt (gendata text 500000)" base64 big.txt
	rec sort-numeric 600000 /dev/null "sales.csv (gendata csv 400000), by the 4th field" \
		sort --parallel=1 -S 512M -t, -k4,4n -k1,1 sales.csv
	rec gzip-fast 400000 /dev/null "big.txt (gendata text 500000)" gzip -1 -c big.txt
	rec tac 90000 /dev/null "big.txt (gendata text 500000)" tac big.txt
}

# A second held-out set (doc/schedules.md, "A fresh held-out set"), recorded after the first had
# been scored twice, with every setting and model frozen, and scored once.  No program of the
# corpus, heldout, threads or threads-dev sets; half new kernels, half more Debian tools.
heldout2() {
	gen="generated in the kernel (fixed seed)"
	OMP="--env OMP_NUM_THREADS=2 --env OMP_WAIT_POLICY=passive"
	rec omp-bitonic 300000 /dev/null "$gen; OpenMP, 2 threads" ./omp_bitonic
	rec omp-floyd 150000 /dev/null "$gen; OpenMP, 2 threads" ./omp_floyd
	OMP=
	rec pagerank 150000 /dev/null "$gen; 8 ranks in one process" ./pagerank
	rec sptrsv 90000 /dev/null "$gen" ./sptrsv
	rec hashjoin 55000 /dev/null "$gen" ./hashjoin
	rec lzss 220000 /dev/null "$gen" ./lzss
	rec od 700000 /dev/null "tiny.txt (gendata text 10000)" od -A d -t x2 -t c tiny.txt
	rec tr 400000 text.txt "text.txt on stdin (gendata text 100000)" tr -s 'a-z ' 'n-za-m_'
	rec cut 220000 /dev/null "sales.csv (gendata csv 400000)" cut -d, -f2,4-5 sales.csv
	rec join 180000 /dev/null "left.txt, right.txt (regions and products of sales.csv, sorted)" \
		join -t, left.txt right.txt
	rec uniq-c 90000 /dev/null "words.txt (the words of text.txt, one a line, sorted)" \
		uniq -c words.txt
	rec factor 180000 numbers.txt "numbers.txt on stdin (seq 10^12 + 1 by 997, 30000 numbers)" \
		factor
	rec objdump 750000 /dev/null "sort-static (data/kernels/sort.c, cc -O2 -static)" \
		objdump -d sort-static
}

# A third held-out set (data/README.md, "A third held-out set"), recorded with every setting and
# model frozen and scored once.  No program of the corpus, heldout, heldout2, threads or
# threads-dev sets; the mix (6 new kernels, 7 more Debian tools) was fixed before recording.
heldout3() {
	gen="generated in the kernel (fixed seed)"
	OMP="--env OMP_NUM_THREADS=2 --env OMP_WAIT_POLICY=passive"
	rec omp-conv2d 420000 /dev/null "$gen; OpenMP, 2 threads" ./omp_conv2d
	rec omp-barnes 100000 /dev/null "$gen; OpenMP, 2 threads" ./omp_barnes
	OMP=
	rec samplesort 222000 /dev/null "$gen; 8 ranks in one process" ./samplesort
	rec strmatch 625000 /dev/null "$gen" ./strmatch
	rec spgemm 480000 /dev/null "$gen" ./spgemm
	rec btree 100000 /dev/null "$gen" ./btree
	rec b2sum 11000 /dev/null "big.txt, sales.csv, text.txt, words.txt, tail-words.txt" \
		b2sum big.txt sales.csv text.txt words.txt tail-words.txt
	rec nl 100000 /dev/null "text.txt (gendata text 100000)" nl -ba -nrz -w8 -s: text.txt
	rec fold 640000 /dev/null "big.txt (gendata text 500000)" fold -s -w 37 big.txt
	rec comm 233000 /dev/null \
		"words.txt, tail-words.txt (the words of text.txt and of big.txt's last 100000 lines, sorted)" \
		comm -3 words.txt tail-words.txt
	rec tsort 32000 /dev/null "dag.txt (awk: 90000 edges of a generated DAG)" tsort dag.txt
	rec shuf 160000 /dev/null "words.txt, random bytes from big.txt" \
		shuf --random-source=big.txt words.txt
	rec xxd 228000 /dev/null "tiny.txt (gendata text 10000)" xxd -g 4 tiny.txt
}

selected="$*"
failed=
if [ "$list_only" = 1 ]; then
	case $set_name in
	heldout) heldout ;; heldout2) heldout2 ;; heldout3) heldout3 ;; *) workloads ;;
	esac
	exit 0
fi

if ! command -v "$mpxkit" >/dev/null 2>&1; then
	echo "$0: mpxkit not found: build it and pass -m path/to/utils/mpxkit" >&2
	exit 2
fi
mpxkit=$(command -v "$mpxkit")
case $mpxkit in /*) ;; *) mpxkit=$(pwd)/$mpxkit ;; esac

missing=
for tool in cc valgrind gzip bzip2 xz zstd lz4 sqlite3 perl sort awk jq grep sed sha256sum bc \
	objdump b2sum nl fold comm tsort shuf xxd; do
	command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -x /usr/bin/python3 ] || missing="$missing python3"
if [ -n "$missing" ]; then
	echo "$0: missing:$missing" >&2
	echo "$0: apt-get install gcc valgrind gzip bzip2 xz-utils zstd lz4 sqlite3 perl coreutils mawk jq grep sed bc python3 binutils xxd" >&2
	exit 2
fi

mkdir -p "$work" "$out"
out=$(cd "$out" && pwd)
cd "$work"

# Inputs: built once, deterministic (fixed seeds), reused when present.
for k in stencil spmv bfs kmeans lu nbody fft sort gendata halo cg pagerank sptrsv hashjoin lzss \
	samplesort strmatch spgemm btree; do
	[ -x "$k" ] || cc -O2 -o "$k" "$here/kernels/$k.c" -lm
done
for k in omp_heat omp_matmul omp_hist omp_bitonic omp_floyd omp_conv2d omp_barnes; do
	[ -x "$k" ] || cc -O2 -fopenmp -o "$k" "$here/kernels/$k.c" -lm
done
[ -f text.txt ] || ./gendata text 100000 >text.txt
[ -f small.txt ] || ./gendata text 30000 >small.txt
[ -f tiny.txt ] || ./gendata text 10000 >tiny.txt
[ -f big.txt ] || ./gendata text 500000 >big.txt
[ -f big.txt.gz ] || gzip -9 -n -c big.txt >big.txt.gz
[ -f big.txt.xz ] || xz -6 -T1 -c big.txt >big.txt.xz
[ -f big.txt.zst ] || zstd -q -19 -T1 -c big.txt >big.txt.zst
[ -f text.txt.bz2 ] || bzip2 -9 -c text.txt >text.txt.bz2
[ -f sales.csv ] || ./gendata csv 400000 >sales.csv
[ -f items.json ] || ./gendata json 15000 >items.json
[ -f workload.sql ] || ./gendata sql 60000 >workload.sql
# cc1's input: all kernels in one translation unit, their clashing names renamed by macros.
if [ ! -f kernels.i ]; then
	for h in complex float math stdint stdio stdlib string; do
		echo "#include <$h.h>"
	done >kernels.c
	for k in stencil spmv bfs kmeans lu nbody fft sort gendata; do
		for id in main rng next uniform xmalloc; do echo "#define $id ${id}_$k"; done
		echo "#include \"$k.c\""
		for id in main rng next uniform xmalloc; do echo "#undef $id"; done
	done >>kernels.c
	cc -E -P -I "$here/kernels" kernels.c >kernels.i
fi
[ -x sort-static ] || cc -O2 -static -o sort-static "$here/kernels/sort.c"
# join's inputs: region,product pairs and product,price pairs of sales.csv, sorted as join wants.
[ -f left.txt ] || tail -n +2 sales.csv | cut -d, -f3,2 | awk -F, '{ print $2 "," $1 }' |
	LC_ALL=C sort -t, -k1,1 >left.txt
[ -f right.txt ] || tail -n +2 sales.csv | cut -d, -f3,5 | LC_ALL=C sort -t, -k1,1 -u >right.txt
[ -f words.txt ] || tr -s ' ' '\n' <text.txt | LC_ALL=C sort >words.txt
[ -f numbers.txt ] || seq 1000000000001 997 1000029910001 >numbers.txt
[ -f tail-words.txt ] || tail -n 100000 big.txt | tr -s ' ' '\n' | LC_ALL=C sort >tail-words.txt
# tsort's input: edges from each of 30000 nodes to 3 later ones, by fixed arithmetic (acyclic).
[ -f dag.txt ] || awk 'BEGIN { for (i = 1; i <= 30000; i++) for (e = 1; e <= 3; e++)
	printf "n%d n%d\n", i, i + 1 + (i * 7919 + e * 104729) % (50 * e) }' >dag.txt
cc1=$(cc -print-prog-name=cc1)
[ -x "$cc1" ] && ln -sf "$cc1" cc1

cat >workload.py <<'EOF'
import sys
from collections import Counter

words = Counter()
with open(sys.argv[1]) as f:
    for line in f:
        words.update(line.split())
top = sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:10]

def queens(n, row=0, cols=0, d1=0, d2=0):
    if row == n:
        return 1
    total = 0
    free = ~(cols | d1 | d2) & ((1 << n) - 1)
    while free:
        bit = free & -free
        free ^= bit
        total += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1)
    return total

sieve = bytearray([1]) * 2000000
sieve[0:2] = b"\0\0"
for i in range(2, 1415):
    if sieve[i]:
        sieve[i * i::i] = bytes(len(range(i * i, 2000000, i)))
print(len(words), top[0], queens(9), sum(sieve))
EOF

cat >workload.pl <<'EOF'
use strict;
my (%count, %bigram, $prev);
while (my $line = <>) {
    for my $w ($line =~ /([a-z]+)/g) {
        my $stem = $w =~ s/(ka|ri|to|men)$//r;
        $count{$stem}++;
        $bigram{"$prev $stem"}++ if defined $prev;
        $prev = $stem;
    }
}
my @top = (sort { $bigram{$b} <=> $bigram{$a} || $a cmp $b } keys %bigram)[0 .. 9];
print scalar(keys %count), " $top[0]\n";
EOF

cat >workload.awk <<'EOF'
NR > 1 { qty[$2] += $4; revenue[$2 "," $3] += $4 * $5; n++ }
END {
	for (k in revenue) if (revenue[k] > best) { best = revenue[k]; arg = k }
	printf "%d rows, best %s %.2f, north %d\n", n, arg, best, qty["north"]
}
EOF

printf 'scale=1200\n4*a(1)\ne(1)\n' >workload.bc

case $set_name in
heldout) heldout ;; heldout2) heldout2 ;; heldout3) heldout3 ;; *) workloads ;;
esac
if [ -n "$failed" ]; then
	echo "$0: failed:$failed" >&2
	exit 1
fi
