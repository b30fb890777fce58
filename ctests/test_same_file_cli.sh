#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# An output that is one of the command's inputs (the same file, or a link to it) is refused
# before any work: one line, exit 2, the input unchanged (cmp), no temporary file left. Every
# command that writes files, as issue 25 reproduced them; devices keep working.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-same-file.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
MPXKIT_SYSFS_ROOT="$tmp/empty-root"
export MPXKIT_SYSFS_ROOT
unset MPXKIT_REPLAY
mkdir "$tmp/empty-root"
golden="$top_srcdir/ctests/golden"

# refused DESC INPUT ARGS...: mpxkit ARGS exits 2 with one stderr line saying the output is the
# same file as an input, prints nothing on stdout, and INPUT is byte for byte what it was.
refused() {
	desc=$1 input=$2
	shift 2
	cp "$input" "$tmp/before" || exit 99
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	if [ "$status" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q "is the same file as the input" "$tmp/err" && [ ! -s "$tmp/out" ] &&
		cmp -s "$tmp/before" "$input" && ! ls -A "$tmp" "$tmp/jobs" | grep -q '\.tmp\.'; then
		ok "$desc: $(cat "$tmp/err")"
	else
		not_ok "$desc (status $status, stdout $(wc -c <"$tmp/out") bytes, input $(cmp -s "$tmp/before" "$input" && echo unchanged || echo CHANGED), stderr: $(head -c 300 "$tmp/err"))"
	fi
}

# A job of two ranks, each rank's dump packed from CSV, and their merge (doc/mpi.md).
mkdir "$tmp/jobs"
for r in 0 1; do
	{
		printf '# job.launcher=slurm\n# job.id=7.0\n# job.size=2\n# job.rank=%s\n' "$r"
		printf 'region,unit,start_ns,end_ns,a,b\nstop.total,t0,0,10,%s,2\n' "$((r + 1))"
	} >"$tmp/rank$r.csv"
	$mpxkit pack "$tmp/rank$r.csv" -o "$tmp/jobs/job.$r.pcz" 2>/dev/null || not_ok "pack of rank $r"
done
$mpxkit merge -o "$tmp"/jj.pcz "$tmp"/jobs/job.0.pcz "$tmp"/jobs/job.1.pcz 2>/dev/null || not_ok "merge of two ranks"
ln -s job.1.pcz "$tmp"/jobs/link.pcz
ln "$tmp"/jobs/job.0.pcz "$tmp"/hard.pcz

refused "report -o its dump" "$tmp"/jj.pcz report "$tmp"/jj.pcz -o "$tmp"/jj.pcz
refused "report --svg its dump" "$tmp"/jj.pcz report "$tmp"/jj.pcz --svg "$tmp"/jj.pcz
refused "merge -o rank 0's dump" "$tmp"/jobs/job.0.pcz merge -o "$tmp"/jobs/job.0.pcz "$tmp"/jobs/job.0.pcz "$tmp"/jobs/job.1.pcz
refused "merge -o a link to rank 1's dump" "$tmp"/jobs/job.1.pcz merge -o "$tmp"/jobs/link.pcz "$tmp"/jobs/job.0.pcz "$tmp"/jobs/job.1.pcz
refused "merge -o rank 1's dump given through a link" "$tmp"/jobs/job.1.pcz merge -o "$tmp"/jobs/job.1.pcz "$tmp"/jobs/job.0.pcz "$tmp"/jobs/link.pcz
refused "merge -o a hard link of rank 0's dump" "$tmp"/jobs/job.0.pcz merge -o "$tmp"/hard.pcz "$tmp"/jobs/job.0.pcz "$tmp"/jobs/job.1.pcz
refused "pack -o its CSV" "$tmp"/rank0.csv pack "$tmp"/rank0.csv -o "$tmp"/rank0.csv
refused "unpack -o its dump" "$tmp"/jobs/job.0.pcz unpack "$tmp"/jobs/job.0.pcz -o "$tmp"/jobs/job.0.pcz
refused "unpack --topology its dump" "$tmp"/jobs/job.0.pcz unpack "$tmp"/jobs/job.0.pcz --topology "$tmp"/jobs/job.0.pcz
cp "$tmp"/jobs/job.0.pcz "$tmp"/stdin.pcz
refused_stdin() {
	desc=$1
	shift
	cp "$tmp"/stdin.pcz "$tmp/before"
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" <"$tmp"/stdin.pcz
	status=$?
	if [ "$status" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "same file as the input (standard input)" "$tmp/err" &&
		cmp -s "$tmp/before" "$tmp"/stdin.pcz; then
		ok "$desc: $(cat "$tmp/err")"
	else
		not_ok "$desc (status $status, stderr: $(head -c 300 "$tmp/err"))"
	fi
}
refused_stdin "unpack - -o the file on standard input" unpack - -o "$tmp"/stdin.pcz

# predict: a dataset, a model trained on it.
tail -n +2 "$golden/import/gemstone.imp" >"$tmp"/gem.txt
cp "$golden/pdata/tiny.csv" "$tmp"/data.csv
$mpxkit predict train -o "$tmp"/model.mpxp "$tmp"/data.csv 2>/dev/null || not_ok "predict train on tiny.csv"
refused "predict import -o its file" "$tmp"/gem.txt predict import --from gemstone -o "$tmp"/gem.txt "$tmp"/gem.txt
refused "predict train -o its dataset" "$tmp"/data.csv predict train -o "$tmp"/data.csv "$tmp"/data.csv
refused "predict apply -o its dataset" "$tmp"/data.csv predict apply -m "$tmp"/model.mpxp -o "$tmp"/data.csv "$tmp"/data.csv
refused "predict apply -o its model" "$tmp"/model.mpxp predict apply -m "$tmp"/model.mpxp -o "$tmp"/model.mpxp "$tmp"/data.csv
refused "predict eval -o its dataset" "$tmp"/data.csv predict eval -o "$tmp"/data.csv "$tmp"/data.csv
refused "predict eval --plot its dataset" "$tmp"/data.csv predict eval --plot "$tmp"/data.csv "$tmp"/data.csv
printf 'train\ttest\n' >"$tmp"/split.txt
refused "predict eval -o its split file" "$tmp"/split.txt predict eval --split "$tmp"/split.txt -o "$tmp"/split.txt "$tmp"/data.csv
refused "predict --live -o its model" "$tmp"/model.mpxp predict --live -m "$tmp"/model.mpxp -o "$tmp"/model.mpxp -- true

# analyze and eval, train
cp "$golden/profile/minimal.prof" "$tmp"/x.prof
refused "analyze -o its profile" "$tmp"/x.prof analyze "$tmp"/x.prof -o "$tmp"/x.prof
refused "analyze --html its profile" "$tmp"/x.prof analyze "$tmp"/x.prof --html "$tmp"/x.prof
mkdir "$tmp/corpus"
for p in a b c; do
	printf 'step,E1,E2,E3\n' >"$tmp/corpus/$p.csv"
	awk -v p="$p" 'BEGIN { for (i = 0; i < 40; i++) printf "%d,%d,%d,%d\n", i, 100 + i, 200 + (i % 7) * 10, 50 + length(p) * i }' >>"$tmp/corpus/$p.csv"
done
refused "eval --plot its trace" "$tmp"/corpus/a.csv eval --plot "$tmp"/corpus/a.csv --trace "$tmp"/corpus/a.csv --event E1
printf 'E1,E2\nE3\n' >"$tmp"/groups.txt
refused "eval --plot its group file" "$tmp"/groups.txt eval -g "$tmp"/groups.txt --plot "$tmp"/groups.txt --trace "$tmp"/corpus/a.csv --event E1
refused "train -o a trace of its corpus directory" "$tmp"/corpus/b.csv train -o "$tmp"/corpus/b.csv "$tmp"/corpus
refused "train -o a trace it names" "$tmp"/corpus/c.csv train -o "$tmp"/corpus/c.csv "$tmp"/corpus/a.csv "$tmp"/corpus/b.csv "$tmp"/corpus/c.csv

# simt: the command list, a kernel trace, the GPU description
cp -r "$golden/simt-cli/trace" "$tmp/trace"
cp "$golden/simt-cli/test.gpu" "$tmp"/test.gpu
refused "simt -o its command list" "$tmp"/trace/kernelslist.g simt --gpu "$tmp"/test.gpu -o "$tmp"/trace/kernelslist.g "$tmp"/trace
refused "simt --svg a kernel trace" "$tmp"/trace/kernel-1.traceg simt --gpu "$tmp"/test.gpu --svg "$tmp"/trace/kernel-1.traceg "$tmp"/trace
refused "simt --export-gpu its GPU description" "$tmp"/test.gpu simt --gpu "$tmp"/test.gpu --export-gpu "$tmp"/test.gpu

# Commands that run a program: the program named by a path is an input too.
cp /bin/true "$tmp"/prog
refused "record -o the program it runs" "$tmp"/prog record -o "$tmp"/prog -- "$tmp"/prog
refused "record --perf -o the program it runs" "$tmp"/prog record --perf -e perf::TASK-CLOCK -o "$tmp"/prog -- "$tmp"/prog
refused "profile -o the program it runs" "$tmp"/prog profile -o "$tmp"/prog -- "$tmp"/prog
refused "stat -o the program it runs" "$tmp"/prog stat -e perf::TASK-CLOCK -o "$tmp"/prog -- "$tmp"/prog

# Devices are written through, never compared: a terminal or /dev/stdout may also be read.
# $MPXKIT itself, not under valgrind: libtool --mode=execute reads every argument that names a
# file to see whether it is a wrapper script, and /dev/stdout is its own pipe.
"$MPXKIT" report "$tmp"/jj.pcz -o /dev/stdout >"$tmp/out" 2>"$tmp/err" </dev/null
status=$?
if [ "$status" -eq 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then
	ok "report -o /dev/stdout still works"
else
	not_ok "report -o /dev/stdout (status $status, stderr: $(cat "$tmp/err"))"
fi
"$MPXKIT" unpack "$tmp"/jobs/job.0.pcz -o /dev/stdout <"$tmp"/jobs/job.0.pcz >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q "stop.total" "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "unpack -o /dev/stdout, the dump also on standard input, still works"
else
	not_ok "unpack -o /dev/stdout (stderr: $(cat "$tmp/err"))"
fi
# Counts agree with their nouns (issue 25: "1 threads"): a job of one rank, one region, one unit.
$mpxkit merge -v -o "$tmp"/one.pcz "$tmp"/jobs/job.0.pcz >"$tmp/out" 2>"$tmp/err"
grep -q "one.pcz: 1 rank, 1 region, 1 unit;" "$tmp/err" && ok "merge -v: 1 rank, 1 region, 1 unit" ||
	not_ok "merge -v of one rank: $(cat "$tmp/err")"
$mpxkit report "$tmp"/one.pcz >"$tmp/out" 2>"$tmp/err"
grep -q "one.pcz: 1 rank, 1 (rank, thread) unit," "$tmp/out" && ok "report: 1 rank, 1 unit" ||
	not_ok "report of one rank: $(head -3 "$tmp/out")"
# A different name in the same directory is fine.
run report "$tmp"/jj.pcz -o "$tmp"/report.txt
if [ "$status" -eq 0 ] && [ -s "$tmp"/report.txt ]; then ok "report -o another file"; else not_ok "report -o another file (status $status)"; fi
exit $failed
