#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# README's own examples that count software events, under the default setting (--multiplex
# hardware: counted all the time), print no impossible result (issue 25, item 3): no negative
# count, no <not counted>, PAGE-FAULTS >= MINOR-FAULTS + MAJOR-FAULTS (the kernel counts a page
# fault when it is taken and a minor or major one when it is served, so retried faults make the
# first larger, never smaller), TASK-CLOCK at most the elapsed time on every CPU.
set -u
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-readme-counts.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
# The lines that count software events under the default setting.
readme_block usage | grep 'mpxkit stat ' | grep 'perf::' | grep -v -- '--multiplex all' >"$tmp/stat"
readme_block usage-papi | grep 'papi_command_line' | grep -v 'MPXKIT_MULTIPLEX=all' >"$tmp/papi"
[ -s "$tmp/stat" ] || { echo "FAIL: README has no mpxkit stat example of software events"; exit 1; }
[ -s "$tmp/papi" ] || { echo "FAIL: README has no papi_command_line example"; exit 1; }
if ! (cd "$top_builddir" && utils/mpxkit stat -e task-clock -- true) >/dev/null 2>&1; then
	echo "SKIP: perf_event_open is refused here"
	exit 77
fi
ncpu=$(getconf _NPROCESSORS_ONLN)

# check WHAT FILE: FILE holds "EVENT COUNT" pairs, one run's totals, and ELAPSED_NS or "-".
check() {
	awk -v what="$1" -v ncpu="$ncpu" -v elapsed="$3" '
		{ v[$1] = $2; n++ }
		$2 == "<not" || $2 < 0 { bad = bad " " $1 "=" $2 }
		END {
			if (n == 0) { print "no counts"; exit 1 }
			if (bad != "") { print "impossible:" bad; exit 1 }
			pf = v["perf::PAGE-FAULTS"]; mi = v["perf::MINOR-FAULTS"]; ma = v["perf::MAJOR-FAULTS"]
			if (pf != "" && mi != "" && pf < mi + (ma == "" ? 0 : ma)) {
				print "PAGE-FAULTS " pf " < MINOR-FAULTS " mi " + MAJOR-FAULTS " ma; exit 1 }
			tc = v["perf::TASK-CLOCK"]
			if (tc != "" && elapsed != "-" && tc > elapsed * ncpu * 1.01) {
				print "TASK-CLOCK " tc " ns > " ncpu " CPUs x " elapsed " ns"; exit 1 }
		}' "$2" >"$tmp/why" && ok "$1" || not_ok "$1: $(cat "$tmp/why")"
}

# counts: papi_command_line's "mpxkit:::EVENT : COUNT(u)" lines as "EVENT COUNT".
counts() {
	sed -n 's/^mpxkit:::\([^ ]*\) :[[:space:]]*\([-0-9][0-9]*\).*/\1 \2/p' "$tmp/out" >"$tmp/counts"
}

n=0
while IFS= read -r line; do
	n=$((n + 1))
	(cd "$top_builddir" && sh -c "$line") >/dev/null 2>"$tmp/err" </dev/null ||
		{ not_ok "stat line $n exited $?: $line"; continue; }
	# Totals ("  COUNT  EVENT ..."), not -I's rows (which start with the time); -r: the means.
	awk '$2 ~ /^perf::/ && $1 !~ /\./ { print $2, $1 } $1 == "<not" { print $3, "<not" }' \
		"$tmp/err" >"$tmp/counts"
	elapsed=$(awk '/seconds time elapsed/ { printf "%.0f", $1 * 1e9 }' "$tmp/err")
	case $line in
	*" -I "*)
		# Each interval's row: nothing negative, nothing <not counted>.
		awk '$3 ~ /^perf::/ { print $3, $2 }' "$tmp/err" >"$tmp/counts"
		elapsed=-
		;;
	esac
	check "stat line $n: $line" "$tmp/counts" "${elapsed:--}"
done <"$tmp/stat"

if [ -z "${PAPI_PREFIX-}" ]; then
	echo "ok - # SKIP PAPI with the mpxkit component was not built: the papi_command_line lines"
	exit $failed
fi
while IFS= read -r line; do
	n=$((n + 1))
	run=$(printf '%s\n' "$line" | sed "s|papi-build/install/bin/|$PAPI_PREFIX/bin/|; s|  *#.*||")
	sh -c "$run" >"$tmp/out" 2>&1 </dev/null || { not_ok "line $n exited $?: $line"; continue; }
	counts
	check "papi line: $line" "$tmp/counts" -
	# Each of the three 5 times: a pair that is impossible in one run of five is a bug, not luck.
	for i in 1 2 3 4 5; do
		sh -c "$run" >"$tmp/out" 2>&1 </dev/null || break
		counts
		check "papi line, run $i" "$tmp/counts" -
	done
done <"$tmp/papi"
exit $failed
