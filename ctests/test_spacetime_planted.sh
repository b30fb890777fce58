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

# profile_and_analyze NAME INTERVAL_BB ARGS...: $tmp/NAME.json, or not ok and 1.
profile_and_analyze() {
	name=$1 interval=$2
	shift 2
	# shellcheck disable=SC2086
	if ! $mpxkit profile -o "$tmp/$name.prof" -i "$interval" -- "$planted/$name" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"; then
		not_ok "$name: profile failed: $(cat "$tmp/$name.err")"
		return 1
	fi
	# shellcheck disable=SC2086
	if ! $mpxkit analyze -q -f json "$tmp/$name.prof" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
		not_ok "$name: analyze failed: $(cat "$tmp/$name.err")"
		return 1
	fi
}

# check NAME PLANTED CLASS TWIN INTERVAL_BB ARGS...: the top finding about code is PLANTED's CLASS
# defect (the program's own findings, past the top-down thresholds, rank before it and name
# where their events are: never the twin).
check() {
	name=$1 want_fn=$2 want_class=$3 twin=$4 interval=$5
	shift 5
	if ! profile_and_analyze "$name" "$interval" "$@"; then
		return
	fi
	top=$(jq -r '[.findings[] | select(.scope != "program")][0] |
		"\(.kind) \(.class) \(.function)"' "$tmp/$name.json")
	twin_flagged=$(jq -r --arg c "$want_class" --arg t "$twin" \
		'[.findings[] | select(.kind == "defect" and .class == $c and
		  (.function | startswith($t)))] | length' "$tmp/$name.json")
	twin_named=$(jq -r --arg t "$twin" '[.findings[] | select(.scope == "program" and
		  (.function | startswith($t)))] | length' "$tmp/$name.json")
	case $top in
	"defect $want_class $want_fn"*)
		if [ "$twin_flagged" -eq 0 ] && [ "$twin_named" -eq 0 ]; then
			ok "$name: $top"
		else
			not_ok "$name: the twin $twin has a $want_class defect too, or a program finding names it"
		fi
		;;
	*)
		not_ok "$name: top finding '$top', want 'defect $want_class $want_fn'"
		jq -r '.findings[:5][] | "#   \(.rank) \(.kind) \(.class) \(.function) \(.share)"' \
			"$tmp/$name.json"
		;;
	esac
}

# check_whole NAME CLASS FUNCTION INTERVAL_BB ARGS...: a defect that owns the whole program, so no
# code is worse than the rest: the top finding is the program's, past the top-down thresholds,
# of class CLASS, naming FUNCTION (where its events are).
check_whole() {
	name=$1 want_class=$2 want_fn=$3 interval=$4
	shift 4
	if ! profile_and_analyze "$name" "$interval" "$@"; then
		return
	fi
	top=$(jq -r '.findings[0] | "\(.kind) \(.scope) \(.basis) \(.class) \(.function)"' \
		"$tmp/$name.json")
	case $top in
	"defect program absolute $want_class $want_fn")
		ok "$name: $top ($(jq -r '.findings[0].direction' "$tmp/$name.json" | cut -c1-90))"
		;;
	*)
		not_ok "$name: top finding '$top', want 'defect program absolute $want_class $want_fn'"
		jq -r '.program.metrics | to_entries[] | select(.value != null) |
			"#   program \(.key) \(.value)"' "$tmp/$name.json"
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
# Nearly every indirect call of the hot loop mispredicts (16 targets at random), and the program
# does little else; on ced039f this was "0 defects".
check_whole allindirect indirect-mispredict dispatch 100000 4
# Every load of the chase, and of the shuffle that builds it, misses D1 and LL.
check_whole allmiss ll-miss main 100000 1
# A well-behaved program: nothing past any top-down threshold, for the program or its code.
if profile_and_analyze clean 100000 200; then
	absolute=$(jq -r '[.findings[] | select(.basis == "absolute" or .scope == "program") |
		"\(.scope) \(.class) \(.function)"] | join(", ")' "$tmp/clean.json")
	if [ -z "$absolute" ] && jq -e '.spaces | length > 0' "$tmp/clean.json" >/dev/null; then
		ok "clean: no absolute finding"
	else
		not_ok "clean: absolute findings: '$absolute'"
	fi
fi
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
