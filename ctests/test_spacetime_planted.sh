#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The planted-defect suite: each program of ctests/planted runs through mpxkit profile (callgrind)
# and mpxkit analyze, which must rank the planted function first with the planted class, and must
# not give its well-behaved twin, doing the same work, a defect of that class.
set -u
: "${MPXKIT:?run through make check}" "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind is not installed: skipping"
	exit 77
fi
if ! command -v jq >/dev/null 2>&1; then
	echo "jq is not installed (build-aux/debian-packages): skipping"
	exit 77
fi
planted=$top_builddir/ctests/planted
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-planted.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# check NAME PLANTED CLASS TWIN INTERVAL_BB ARGS...: the top finding is PLANTED's CLASS defect.
check() {
	name=$1 want_fn=$2 want_class=$3 twin=$4 interval=$5
	shift 5
	# shellcheck disable=SC2086
	if ! $mpxkit profile -o "$tmp/$name.prof" -i "$interval" -- "$planted/$name" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"; then
		not_ok "$name: profile failed: $(cat "$tmp/$name.err")"
		return
	fi
	# shellcheck disable=SC2086
	if ! $mpxkit analyze -q -f json "$tmp/$name.prof" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
		not_ok "$name: analyze failed: $(cat "$tmp/$name.err")"
		return
	fi
	top=$(jq -r '.findings[0] | "\(.kind) \(.class) \(.function)"' "$tmp/$name.json")
	twin_flagged=$(jq -r --arg c "$want_class" --arg t "$twin" \
		'[.findings[] | select(.kind == "defect" and .class == $c and
		  (.function | startswith($t)))] | length' "$tmp/$name.json")
	case $top in
	"defect $want_class $want_fn"*)
		if [ "$twin_flagged" -eq 0 ]; then
			ok "$name: $top"
		else
			not_ok "$name: the twin $twin has a $want_class defect too"
		fi
		;;
	*)
		not_ok "$name: top finding '$top', want 'defect $want_class $want_fn'"
		jq -r '.findings[:5][] | "#   \(.rank) \(.kind) \(.class) \(.function) \(.share)"' \
			"$tmp/$name.json"
		;;
	esac
}

check stride column_walk ll-miss row_walk 100000 1
# The column walk thrashes D1 as well as LL: both are its defects, and only its.
if [ -s "$tmp/stride.json" ] && [ "$(jq -r '[.findings[] | select(.kind == "defect" and
	.class == "d1-miss")][0].function' "$tmp/stride.json")" = column_walk ]; then
	ok "stride: the first d1-miss defect is column_walk's"
else
	not_ok "stride: no d1-miss defect on column_walk first"
fi
check branch random_branches branch-mispredict sorted_branches 100000 1
check indirect random_calls indirect-mispredict grouped_calls 100000 1
# One pass of the huge body is a few hundred basic blocks, so windows are short.
check icache huge_body i1-miss small_body 2000 20
check phase phased_sweep phase-change steady_sweep 50000 4
if [ -x "$planted/omp" ]; then
	# Waiting threads sleep (passive), as they often do under callgrind: the analyser must
	# find the imbalance from the missing work, not from spinning.
	OMP_NUM_THREADS=4 OMP_WAIT_POLICY=passive
	export OMP_NUM_THREADS OMP_WAIT_POLICY
	check omp imbalanced_loop load-imbalance balanced_loop 100000 2
else
	echo "ok - omp # SKIP built without OpenMP"
fi
exit $failed
