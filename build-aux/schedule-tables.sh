#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The settings tables of doc/schedules.md: the training (18) and validation (3) programs of
# seed 1 (never the held-out ones), C = 4.  usage: build-aux/schedule-tables.sh (MPXKIT=binary)
# These tables were made before "Tuning adaptive": A spells out adaptive's settings of then.
# The tuning tables are build-aux/schedule-tune.py's.
cd "$(dirname "$0")/.."
M=${MPXKIT:-./utils/mpxkit}
A=adaptive:measure=0:startup=3
V="data/corpus/awk.csv.gz data/corpus/bfs.csv.gz data/corpus/coreutils-sort.csv.gz"
T=$(ls data/corpus/*.csv.gz | grep -v -e fft -e grep -e sort-kernel -e spmv -e zstd -e awk -e bfs -e coreutils-sort)
row() { # row SPEC ESTIMATORS
	printf "| %s |" "$1"
	for set in "$T" "$V"; do
		$M eval -s "$1" -e "$2" $set | awk '/^mean/{for(i=2;i<=NF;i+=2) ra[i/2]=$i} /^total/{for(i=3;i<=NF;i++) ta[i-2]=$i} END{for(i=1;i<=length(ta);i++) printf " %s / %s |", ra[i], ta[i]}'
	done
	echo
}
echo "## schedules x estimators (RA / TA), train then val"
for s in round-robin prior $A; do row $s fixed,linear-dira,linear-tam,cam,dcam; done
echo "## prior floor (dira, dcam)"
for f in 6 8 12 16 24; do row prior:floor=$f linear-dira,dcam; done
echo "## adaptive floor"
for f in 6 8 12 16 24; do row $A:floor=$f linear-dira,dcam; done
echo "## adaptive startup"
for st in 0 1 2 3 4 6; do row adaptive:measure=0:startup=$st linear-dira,dcam; done
echo "## adaptive weight"
for w in 0 0.5 2 8 32 1000; do row $A:weight=$w linear-dira,dcam; done
echo "## adaptive decay"
for d in 1 0.99 0.95 0.9; do row $A:decay=$d linear-dira,dcam; done
echo "## window W (adaptive, dira, dcam)"
for w in 2 4 8; do printf "W=%s " $w; for set in "$T" "$V"; do $M eval -s $A -w $w -e linear-dira,dcam $set | awk '/^mean/{printf "%s %s ", $2, $4}'; done; echo; done
echo "## per event, validation: round-robin fixed vs adaptive linear-dira / dcam"
$M eval -s round-robin,$A -e fixed,linear-dira,dcam $V
echo "## per event, training"
$M eval -s round-robin,$A -e fixed,linear-dira,dcam $T
