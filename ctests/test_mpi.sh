#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A real MPI job through PAPI and the component: one dump per rank holding what each PAPI_stop returned,
# their merge and summary, and eight processes writing one name at once losing nothing.
set -u
: "${MPXKIT:?run through make check}"
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

prog="$top_builddir/ctests/mpi_job"
if [ -z "${PAPI_PREFIX:-}" ]; then
	echo "SKIP: PAPI with the mpxkit component was not built (configured with --disable-papi)"
	exit 77
fi
if ! command -v mpirun >/dev/null 2>&1; then
	echo "SKIP: no mpirun (Debian: apt-get install openmpi-bin libopenmpi-dev)"
	exit 77
fi
if [ ! -x "$prog" ]; then
	echo "SKIP: ctests/mpi_job was not built: configure found no MPI (libopenmpi-dev)"
	exit 77
fi
if ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
	echo "SKIP: mpirun is not Open MPI's; this test passes Open MPI's options"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-mpi.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# The component's settings are this test's alone: real software counters, 3 events on 2, 2 ms slices.
unset MPXKIT_REPLAY MPXKIT_REFERENCE MPXKIT_ESTIMATOR MPXKIT_MODEL MPXKIT_WHOLE_MAX
export MPXKIT_COUNTERS=2 MPXKIT_SLICE_US=2000
# As root (CI containers) mpirun needs both; elsewhere they change nothing.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# In make check-sanitizers the job is built with ASan, whose leak check at exit reports Open
# MPI's own allocations (about 17 per process, with or without the component, measured with
# mpirun -np 1 and 2): not ours, so off for the job only.  The component's leaks are checked by
# its own tests (test_component_dump, _threads, _mlp), mpxkit's by this one.
job_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# job NP DIR DUMP [--hide-launcher]: the MPI job on this machine only, over loopback and shared
# memory (no other interface, no binding: the ranks outnumber the cores), reports in DIR.
job() {
	np=$1 dir=$2 dump=$3
	shift 3
	mkdir -p "$dir" || exit 99
	ASAN_OPTIONS=$job_asan MPXKIT_DUMP=$dump timeout 300 mpirun --oversubscribe -np "$np" --bind-to none \
		--mca btl self,vader --mca pml ob1 --mca oob_tcp_if_include lo \
		--mca btl_vader_single_copy_mechanism none \
		-x MPXKIT_DUMP -x MPXKIT_COUNTERS -x MPXKIT_SLICE_US -x ASAN_OPTIONS \
		"$prog" "$dir" "$@" >"$dir/mpirun.out" 2>"$dir/mpirun.err"
	status=$?
	if [ -f "$dir/disabled.txt" ]; then
		echo "SKIP: mpxkit is disabled here: $(cat "$dir/disabled.txt")"
		exit 77
	fi
	if [ "$status" -ne 0 ]; then
		not_ok "mpirun -np $np exited with $status: $(tail -5 "$dir/mpirun.err")"
		exit 1
	fi
}

# meta FILE KEY: a dump's metadata value.
meta() { $MPXKIT unpack "$1" | sed -n "s/^# $2=//p"; }
# totals DUMP: its stop.total rows with the estimates only: a dump holds each event as a triple,
# the estimate, its lower and its upper bound (doc/pcz-format.md, "Intervals"), after the six
# columns region, unit, start_ns, end_ns, cpu, numa.
totals() {
	$MPXKIT unpack "$1" | grep '^stop\.total,' |
		awk -F, -v OFS=, '{ s = $1; for (i = 2; i <= 6; i++) s = s OFS $i
			for (i = 7; i <= NF; i += 3) s = s OFS $i; print s }'
}

# check_dumps DIR NP: each of the NP reports (rank.R.PID.txt, a line per thread) has exactly one dump
# in DIR whose pid is its process's, and that dump's stop.total holds each thread's PAPI_stop values,
# and no unit else; sets found to the threads whose totals it found.  DIR/owners: "PID DUMP" lines.
check_dumps() {
	dir=$1 np=$2 found=0
	: >"$dir/owners"
	for f in "$dir"/*.pcz; do
		echo "$(meta "$f" pid) $f" >>"$dir/owners"
	done
	for rep in "$dir"/rank.*.txt; do
		pid=$(sed -n '1s/.* pid=\([0-9]*\) .*/\1/p' "$rep")
		dumps=$(awk -v p="$pid" '$1 == p { print $2 }' "$dir/owners")
		if [ "$(echo "$dumps" | grep -c .)" -ne 1 ]; then
			not_ok "pid $pid: $(echo "$dumps" | grep -c .) dumps"
			continue
		fi
		totals "$dumps" >"$dir/totals" || :
		if [ "$(wc -l <"$dir/totals")" -ne "$(wc -l <"$rep")" ]; then
			not_ok "$dumps: $(wc -l <"$dir/totals") units in stop.total, $(wc -l <"$rep") threads"
		fi
		while read -r line; do
			tid=${line##*tid=}
			tid=${tid%% *}
			values=${line##*values=}
			if grep -q "^stop\.total,thread$tid,[0-9]*,[0-9]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*,$values\$" "$dir/totals"; then
				found=$((found + 1))
			else
				not_ok "$dumps: thread $tid: PAPI_stop gave $values, the dump: $(grep "thread$tid," "$dir/totals")"
			fi
		done <"$rep"
	done
}

# ---- 4 ranks, MPXKIT_DUMP=job.%r.pcz ---------------------------------------------------------
run="$tmp/run"
job 4 "$run" "$run/job.%r.pcz"
names=$(cd "$run" && ls -- *.pcz | tr '\n' ' ')
if [ "$names" = "job.0.pcz job.1.pcz job.2.pcz job.3.pcz " ] && ! ls "$run" | grep -q '\.tmp\.'; then
	ok "4 ranks: 4 dumps, job.0.pcz .. job.3.pcz"
else
	not_ok "4 ranks: dumps $names"
fi
check_dumps "$run" 4
[ "$found" = 8 ] && ok "each rank's dump holds what its 2 threads' PAPI_stop returned" ||
	not_ok "$found of 8 threads' totals found in the dumps"
# The rank in each name and each dump's metadata is the one MPI_Comm_rank gave that process.
ids=""
for r in 0 1 2 3; do
	d="$run/job.$r.pcz"
	rep=$(ls "$run"/rank.$r.*.txt)
	pid=$(sed -n '1s/.* pid=\([0-9]*\) .*/\1/p' "$rep")
	if [ "$(meta "$d" job.rank)" = "$r" ] && [ "$(meta "$d" job.size)" = 4 ] &&
		[ "$(meta "$d" job.launcher)" = openmpi ] && [ "$(meta "$d" pid)" = "$pid" ] &&
		[ -n "$(meta "$d" host)" ]; then
		ok "job.$r.pcz: rank $r of 4, openmpi, pid $pid, host"
	else
		not_ok "job.$r.pcz: metadata $($MPXKIT unpack "$d" | grep '^#' | tr '\n' ' ')"
	fi
	ids="$ids$(meta "$d" job.id) "
	if $MPXKIT unpack "$d" --topology="$tmp/topo.$r.xml" >/dev/null && grep -q '<topology' "$tmp/topo.$r.xml"; then
		:
	else
		not_ok "job.$r.pcz: no hwloc topology"
	fi
done
if [ "$(echo "$ids" | tr ' ' '\n' | grep . | sort -u | wc -l)" -eq 1 ] && [ -n "${ids%% *}" ]; then
	ok "one job id in every dump (${ids%% *})"
else
	not_ok "job ids: $ids"
fi

# The merge holds every (rank, thread), with the values each PAPI_stop returned.
# shellcheck disable=SC2086
if $mpxkit merge -o "$tmp/job.pcz" "$run"/job.*.pcz 2>"$tmp/merge.err"; then
	totals "$tmp/job.pcz" >"$tmp/merged"
	n=0
	for rep in "$run"/rank.*.txt; do
		while read -r line; do
			r=${line#rank=}
			r=${r%% *}
			tid=${line##*tid=}
			tid=${tid%% *}
			values=${line##*values=}
			grep -q "^stop\.total,rank$r\.thread$tid,[0-9]*,[0-9]*,-\{0,1\}[0-9]*,-\{0,1\}[0-9]*,$values\$" "$tmp/merged" && n=$((n + 1))
		done <"$rep"
	done
	units=$(cut -d, -f2 "$tmp/merged" | sort -u | wc -l)
	[ "$n" = 8 ] && [ "$units" = 8 ] && ok "the merge holds all 8 (rank, thread) with their totals" ||
		not_ok "merge: $n of 8 totals, $units units"
else
	not_ok "merge failed: $(cat "$tmp/merge.err")"
fi

# The summary's totals are the sums of what the 8 PAPI_stop calls returned, event by event; the
# last rank worked twice as long as the first, so its task-clock is the larger.
# shellcheck disable=SC2086
if $mpxkit report -f csv "$tmp/job.pcz" >"$tmp/report.csv" 2>"$tmp/report.err"; then
	want=$(cat "$run"/rank.*.txt | sed 's/.*values=//' |
		awk -F, '{ for (e = 1; e <= NF; e++) s[e] += $e } END { print s[1] "," s[2] "," s[3] }')
	got=$(tail -n +2 "$tmp/report.csv" | cut -d, -f2 | paste -sd, -)
	[ "$got" = "$want" ] && ok "the summary's totals are the sums of the PAPI_stop values ($got)" ||
		not_ok "summary totals $got, sums of PAPI_stop $want"
	first=$(cat "$run"/rank.0.*.txt | sed 's/.*values=//' | awk -F, '{ s += $1 } END { print s }')
	last=$(cat "$run"/rank.3.*.txt | sed 's/.*values=//' | awk -F, '{ s += $1 } END { print s }')
	if [ "$last" -gt "$first" ]; then
		ok "task-clock: rank 3 ($last) above rank 0 ($first), which did half the work"
	else
		not_ok "task-clock: rank 0 $first, rank 3 $last"
	fi
	$mpxkit report "$tmp/job.pcz" --svg "$tmp/job.svg" >/dev/null 2>&1 &&
		grep -q '>rank 3<' "$tmp/job.svg" && ok "heat map of the job" || not_ok "heat map"
else
	not_ok "report failed: $(cat "$tmp/report.err")"
fi

# ---- 8 processes, one plain name ---------------------------------------------------------------
# Under the launcher, the rank goes into the name: job.pcz -> job.R.pcz.
plain="$tmp/plain"
job 8 "$plain" "$plain/job.pcz"
names=$(cd "$plain" && ls -- *.pcz | tr '\n' ' ')
check_dumps "$plain" 8
if [ "$names" = "job.0.pcz job.1.pcz job.2.pcz job.3.pcz job.4.pcz job.5.pcz job.6.pcz job.7.pcz " ] &&
	[ "$found" = 16 ]; then
	ok "8 ranks, MPXKIT_DUMP=job.pcz: job.0.pcz .. job.7.pcz, all 16 threads' totals"
else
	not_ok "8 ranks, plain name: $names; $found of 16 totals"
fi
# With the launcher hidden, all 8 write job.pcz at once: 8 dumps, none replaced, one line each
# from the 7 that found the name taken.
same="$tmp/same"
job 8 "$same" "$same/job.pcz" --hide-launcher
n_dumps=$(ls "$same"/*.pcz | wc -l)
check_dumps "$same" 8
moved=$(grep -c "holds a dump of another process of this run; this one is $same/job-[1-7].pcz" "$same/mpirun.err")
if [ "$n_dumps" = 8 ] && [ "$found" = 16 ] && [ "$moved" = 7 ] && ! ls "$same" | grep -q '\.tmp\.'; then
	ok "8 processes outside a launcher, one name at once: 8 dumps, all 16 threads' totals, 7 notes"
else
	not_ok "one name at once: $n_dumps dumps, $found of 16 totals, $moved notes: $(ls "$same")"
fi

exit $failed
