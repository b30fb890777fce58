#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit merge: rank dumps (packed here from CSV) into one file that holds every (rank, unit), refusals in one line.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-merge-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# refuse DESCRIPTION STATUS PATTERN CMD ARGS...: expect_fail, and no output file $tmp/m.pcz.
refuse() {
	rm -f "$tmp/m.pcz"
	expect_fail "$@"
	[ ! -e "$tmp/m.pcz" ] || not_ok "$1: $tmp/m.pcz written"
}

# rank_csv RANK [JOB [EVENTS [EXTRA_REGION]]]: a rank's dump as the component writes one, in CSV:
# two threads' totals, one thread's series; the values depend on the rank so nothing matches by chance.
rank_csv() {
	r=$1 job=${2:-4711} events=${3:-A,B,C}
	printf '# source=test\n# job.launcher=openmpi\n# job.id=%s\n# job.size=4\n# job.rank=%s\n' "$job" "$r"
	printf '# host=node%s\n# pid=%s\n' $((r / 2)) $((1000 + r))
	printf 'region,unit,start_ns,end_ns,cpu,numa,%s\n' "$events"
	printf 'stop.total,thread%s,100,900,%s,0,%s,%s,7\n' $((200 + r)) "$r" $((1000 * r + 11)) $((r * r))
	printf 'stop.total,thread%s,100,950,%s,1,%s,%s,7\n' $((300 + r)) $((r + 1)) $((1000 * r + 12)) 3
	printf 'stop,thread%s,100,500,%s,0,%s,1,3\n' $((200 + r)) "$r" $((500 * r))
	printf 'stop,thread%s,500,900,%s,0,%s,2,4\n' $((200 + r)) "$r" $((500 * r + 11))
	if [ $# -ge 4 ]; then
		printf 'extra,thread%s,900,901,%s,0,1,1,1\n' $((200 + r)) "$r"
	fi
}

pack_rank() { # pack_rank OUT ARGS...: rank_csv ARGS packed into OUT.
	out=$1
	shift
	rank_csv "$@" >"$tmp/in.csv" && $MPXKIT pack "$tmp/in.csv" -o "$out" || exit 99
}

for r in 0 1 2 3; do
	pack_rank "$tmp/job.$r.pcz" "$r"
done

# --help and usage errors.
run merge --help
if [ "$status" -eq 0 ] && grep -q "^usage: mpxkit merge" "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "merge --help"
else
	not_ok "merge --help"
fi
refuse "no output" 1 "no output file" merge "$tmp/job.0.pcz"
refuse "no input" 1 "no dump to merge" merge -o "$tmp/m.pcz"
refuse "bad option" 1 "unknown option '--bogus'" merge --bogus -o "$tmp/m.pcz" "$tmp/job.0.pcz"

# The merge, inputs in shuffled order: every (rank, unit) row of every region, values unchanged,
# each rank's regions in rank order; the expected CSV is built from the inputs with awk.
run merge -v -o "$tmp/job.pcz" "$tmp/job.2.pcz" "$tmp/job.0.pcz" "$tmp/job.3.pcz" "$tmp/job.1.pcz"
if [ "$status" -eq 0 ] && grep -q "4 ranks, 8 regions, 12 units" "$tmp/err"; then
	ok "merge of 4 ranks"
else
	not_ok "merge of 4 ranks (status $status: $(cat "$tmp/err"))"
fi
: >"$tmp/want.rows"
for r in 0 1 2 3; do
	$MPXKIT unpack "$tmp/job.$r.pcz" | awk -F, -v r="$r" 'BEGIN { OFS = "," }
		/^#/ || /^region,/ { next } { $2 = "rank" r "." $2; print }' >>"$tmp/want.rows"
done
$MPXKIT unpack "$tmp/job.pcz" >"$tmp/got.csv"
grep -v '^#' "$tmp/got.csv" | tail -n +2 >"$tmp/got.rows"
if cmp -s "$tmp/want.rows" "$tmp/got.rows"; then
	ok "every (rank, thread) with its values, cpu and numa"
else
	not_ok "merged rows differ: $(diff "$tmp/want.rows" "$tmp/got.rows" | head -5)"
fi
if grep -q '^region,unit,start_ns,end_ns,cpu,numa,A,B,C$' "$tmp/got.csv"; then
	ok "events and placement kept"
else
	not_ok "header: $(grep '^region' "$tmp/got.csv")"
fi
# Shared metadata once, the rest per rank; job.rank never shared.
want_meta='# source=test
# job.launcher=openmpi
# job.id=4711
# job.size=4
# merge.ranks=4
# rank.0.host=node0
# rank.0.pid=1000
# rank.1.host=node0
# rank.1.pid=1001
# rank.2.host=node1
# rank.2.pid=1002
# rank.3.host=node1
# rank.3.pid=1003'
if [ "$(grep '^#' "$tmp/got.csv")" = "$want_meta" ]; then
	ok "metadata: shared pairs, merge.ranks, rank.R.key"
else
	not_ok "metadata: $(grep '^#' "$tmp/got.csv" | tr '\n' ' ')"
fi
run info "$tmp/job.pcz"
if [ "$status" -eq 0 ] && grep -q '^regions: *8$' "$tmp/out" && grep -q '^units: *12 ' "$tmp/out"; then
	ok "info reads the merged file"
else
	not_ok "info: $(cat "$tmp/out" "$tmp/err" | head -20)"
fi
run verify "$tmp/job.pcz"
[ "$status" -eq 0 ] && ok "verify passes" || not_ok "verify: $(cat "$tmp/err")"

# A subset of the ranks, and a rank whose regions differ: merged, with one note each.
run merge -o "$tmp/half.pcz" "$tmp/job.0.pcz" "$tmp/job.1.pcz"
if [ "$status" -eq 0 ] && grep -q "note: 2 of the job's 4 ranks merged" "$tmp/err" &&
	[ "$(wc -l <"$tmp/err")" -eq 1 ]; then
	ok "a subset of ranks: one note"
else
	not_ok "subset: $(cat "$tmp/err")"
fi
pack_rank "$tmp/extra.3.pcz" 3 4711 A,B,C extra
run merge -o "$tmp/m2.pcz" "$tmp/job.0.pcz" "$tmp/job.1.pcz" "$tmp/job.2.pcz" "$tmp/extra.3.pcz"
if [ "$status" -eq 0 ] && grep -q "note: 1 rank's regions differ .*rank 3 has more regions than rank 0's 2" "$tmp/err"; then
	ok "misaligned regions: merged, with a note"
else
	not_ok "misaligned: $(cat "$tmp/err")"
fi

# Refusals: one line, status 2, nothing written.
pack_rank "$tmp/other.1.pcz" 1 4712
refuse "different jobs" 2 "other.1.pcz is of job 4712 (openmpi), .*job.0.pcz of job 4711 (openmpi): dumps of different jobs" \
	merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" "$tmp/other.1.pcz"
pack_rank "$tmp/ev.1.pcz" 1 4711 A,X,C
refuse "different event names" 2 "event 2 is X, in .*job.0.pcz it is B: dumps with different event lists" \
	merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" "$tmp/ev.1.pcz"
rank_csv 1 | awk '/^#/ { print; next } { sub(/,[^,]*$/, ""); print }' >"$tmp/in.csv"
$MPXKIT pack "$tmp/in.csv" -o "$tmp/two.1.pcz" || exit 99
refuse "different event counts" 2 "two.1.pcz has 2 events, .*job.0.pcz has 3: dumps with different event lists" \
	merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" "$tmp/two.1.pcz"
refuse "a rank twice" 2 "are both rank 1" merge -o "$tmp/m.pcz" "$tmp/job.1.pcz" "$tmp/job.0.pcz" "$tmp/job.1.pcz"
printf 'region,unit,start_ns,end_ns,A,B,C\nr,u,0,1,1,2,3\n' >"$tmp/plain.csv"
$MPXKIT pack "$tmp/plain.csv" -o "$tmp/plain.pcz" || exit 99
refuse "not a rank's dump" 2 "plain.pcz: no job.rank in its metadata" \
	merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" "$tmp/plain.pcz"
rank_csv 5 >"$tmp/in.csv"
$MPXKIT pack "$tmp/in.csv" -o "$tmp/big.5.pcz" || exit 99
refuse "rank beyond the size" 2 "rank 5 in a job of 4 ranks" merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" "$tmp/big.5.pcz"
refuse "not a dump" 2 "zero" merge -o "$tmp/m.pcz" "$tmp/job.0.pcz" /dev/zero
refuse "missing input" 2 "none.pcz" merge -o "$tmp/m.pcz" "$tmp/none.pcz"
refuse "unwritable output" 2 "nodir" merge -o "$tmp/nodir/m.pcz" "$tmp/job.0.pcz"

exit $failed
