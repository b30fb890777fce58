#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every command that writes an output checks it before its work starts: an output that cannot
# be written is one line and exit 2 before the command runs, the traces are read or the model
# is trained.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-outputs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
corpus="$top_srcdir/data/corpus"

# early DESC PATTERN ARGS...: mpxkit ARGS exits 2 with one stderr line matching PATTERN, prints
# nothing on stdout, and $tmp/ran (which the commands under test would create) is not there.
early() {
	desc=$1 pattern=$2
	shift 2
	rm -f "$tmp/ran"
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	if [ "$status" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pattern" "$tmp/err" &&
		[ ! -s "$tmp/out" ] && [ ! -e "$tmp/ran" ]; then
		ok "$desc: $(cat "$tmp/err")"
	else
		not_ok "$desc (status $status, stdout $(wc -c <"$tmp/out") bytes, ran: $([ -e "$tmp/ran" ] && echo yes || echo no), stderr: $(head -c 300 "$tmp/err"))"
	fi
}

nope="$tmp/no-such-dir"
mkdir "$tmp/dir"
printf 'region,unit,start_ns,end_ns,a,b\nmain,t0,0,10,1,2\nmain,t0,10,20,3,4\n' >"$tmp/in.csv"
$mpxkit pack "$tmp/in.csv" -o "$tmp/in.pcz" 2>/dev/null || not_ok "pack of a small CSV"

# The command under test would create $tmp/ran if it ran.
early "stat -o in a missing directory" "cannot create $nope/x.out" \
	stat -e perf::TASK-CLOCK -o "$nope/x.out" -- touch "$tmp/ran"
early "stat --series in a missing directory" "cannot create $nope/s.csv" \
	stat -e perf::TASK-CLOCK --series "$nope/s.csv" -- touch "$tmp/ran"
early "stat -o a directory" "$tmp/dir: Is a directory" \
	stat -e perf::TASK-CLOCK -o "$tmp/dir" -- touch "$tmp/ran"
early "record -o in a missing directory" "cannot create $nope/x.csv" \
	record -o "$nope/x.csv" -- touch "$tmp/ran"
early "record --perf -o in a missing directory" "cannot create $nope/x.csv" \
	record --perf -e perf::TASK-CLOCK -o "$nope/x.csv" -- touch "$tmp/ran"
# train and eval print their results on stdout: nothing there means no work was done.
start=$(date +%s)
early "train -o in a missing directory" "cannot create $nope/m.mpxm" \
	train -o "$nope/m.mpxm" "$corpus"
[ $(($(date +%s) - start)) -le 10 ] || not_ok "train took more than 10 s to refuse its output"
early "train --model bigru -o a directory" "$tmp/dir: Is a directory" \
	train --model bigru -o "$tmp/dir" "$corpus"
early "eval --plot in a missing directory" "cannot create $nope/p.svg" \
	eval --plot "$nope/p.svg" --trace "$corpus/lu.csv.gz" --event Ir
early "pack -o in a missing directory" "cannot create $nope/x.pcz" \
	pack "$tmp/in.csv" -o "$nope/x.pcz"
early "unpack -o in a missing directory" "cannot create $nope/x.csv" \
	unpack "$tmp/in.pcz" -o "$nope/x.csv"
early "unpack --topology in a missing directory" "cannot create $nope/t.xml" \
	unpack "$tmp/in.pcz" --topology "$nope/t.xml"

simt="$top_srcdir/ctests/golden/simt-cli"
early "simt -o in a missing directory" "cannot create $nope/s.txt" \
	simt --gpu "$simt/test.gpu" -o "$nope/s.txt" "$simt/trace"
early "simt --svg in a missing directory" "cannot create $nope/s.svg" \
	simt --gpu "$simt/test.gpu" --svg "$nope/s.svg" "$simt/trace"
# A job of one rank, as an MPI launcher would name it (doc/mpi.md).
{
	printf '# job.launcher=slurm\n# job.id=7.0\n# job.size=1\n# job.rank=0\n'
	printf 'region,unit,start_ns,end_ns,a,b\nstop.total,t0,0,10,1,2\n'
} >"$tmp/rank0.csv"
$mpxkit pack "$tmp/rank0.csv" -o "$tmp/rank0.pcz" 2>/dev/null &&
	$mpxkit merge -o "$tmp/job.pcz" "$tmp/rank0.pcz" 2>/dev/null || not_ok "a job dump of one rank"
early "report -o in a missing directory" "cannot create $nope/r.txt" \
	report -o "$nope/r.txt" "$tmp/job.pcz"
early "report --svg in a missing directory" "cannot create $nope/r.svg" \
	report --svg "$nope/r.svg" "$tmp/job.pcz"

# The check leaves nothing behind where it succeeds.
$mpxkit stat -e perf::TASK-CLOCK -o "$tmp/dir/report.txt" -- true 2>/dev/null
left=$(ls -A "$tmp/dir")
if [ "$left" = "report.txt" ]; then
	ok "stat -o: the report, and nothing else, in its directory"
else
	not_ok "stat -o left: $left"
fi
exit $failed
