#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit profile and mpxkit analyze end to end: usage and failure lines, the table, CSV, JSON and
# HTML outputs of a real profile, and a perf-sampled profile where perf_event_open allows it.
set -u
: "${MPXKIT:?run through make check}" "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

workload=$top_builddir/ctests/planted/stride
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-spacetime-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# ---- usage ------------------------------------------------------------------------------------
for cmd in profile analyze; do
	# shellcheck disable=SC2086
	$mpxkit $cmd --help >"$tmp/out" 2>"$tmp/err"
	if [ $? -eq 0 ] && grep -q "^usage: mpxkit $cmd" "$tmp/out" && [ ! -s "$tmp/err" ]; then
		ok "$cmd --help: usage on stdout, status 0"
	else
		not_ok "$cmd --help"
	fi
done
expect_fail "profile: unknown option" 1 "unknown option '--bogus'.*try 'mpxkit profile --help'" \
	profile --bogus -o "$tmp/x.prof" -- true
expect_fail "profile: no output" 1 "no output file" profile -- true
expect_fail "profile: output on stdout" 1 "name a file" profile -o - -- true
expect_fail "profile: no command" 1 "no command to profile" profile -o "$tmp/x.prof"
expect_fail "profile: bad source" 1 "--source: 'gprof' is not callgrind, perf or auto" \
	profile -s gprof -o "$tmp/x.prof" -- true
expect_fail "profile: bad interval" 1 "--interval-bb: '0' is not" profile -i 0 -o "$tmp/x.prof" -- true
expect_fail "profile: bad frequency" 1 "--frequency: '0' is not" profile -F 0 -o "$tmp/x.prof" -- true
expect_fail "profile: bad geometry" 1 "--LL: LL: 3000000 bytes" \
	profile --LL 3000000,16,64 -o "$tmp/x.prof" -- true
expect_fail "profile: events with callgrind" 1 "--events: callgrind counts its own" \
	profile -s callgrind -e perf::PAGE-FAULTS -o "$tmp/x.prof" -- true
expect_fail "analyze: no profile" 1 "no profile to analyse" analyze
expect_fail "analyze: two profiles" 1 "one profile at a time" analyze a.prof b.prof
expect_fail "analyze: bad format" 1 "--format: 'xml' is not table, csv or json" analyze -f xml a.prof
expect_fail "analyze: bad top" 1 "--top: '-1' is not a number" analyze -n -1 a.prof
expect_fail "analyze: bad share" 1 "--min-share: '200' is not a percentage" analyze --min-share 200 a.prof
expect_fail "analyze: bad colour" 1 "--color-by: 'blue' is not a metric key" analyze --color-by blue a.prof

# ---- bad input: one line, status 2 ------------------------------------------------------------
expect_fail "analyze: missing file" 2 "No such file" analyze "$tmp/none.prof"
expect_fail "analyze: /dev/zero" 2 "/dev/zero: not a profile file" analyze /dev/zero
printf 'Ir,Dr\n1,2\n' >"$tmp/text.prof"
expect_fail "analyze: a text file" 2 "$tmp/text.prof" analyze "$tmp/text.prof"
expect_fail "analyze: a directory" 2 "Is a directory" analyze "$tmp"
expect_fail "profile: output directory missing" 2 "$tmp/none/x.prof" profile -o "$tmp/none/x.prof" -- true
expect_fail "profile: output is a directory" 2 "Is a directory" profile -o "$tmp" -- true

# ---- the HTML page, as chromium lays it out (ctests/html_renders.sh measures it) --------------
# Made-up profiles (ctests/synth_profile): few windows, so the charts are narrow; 13 code spaces,
# so a chart has 13 series; 5,000 threads.
synth=$top_builddir/ctests/synth_profile
"$synth" "$tmp/few.prof" 3 2 && "$synth" "$tmp/spaces.prof" 12 2 12 &&
	"$synth" "$tmp/threads.prof" 5000 20 || exit 99
# page NAME: $tmp/NAME.html from $tmp/NAME.prof and its facts in $tmp/NAME.geo; 77 without chromium.
page() {
	# shellcheck disable=SC2086
	$mpxkit analyze -q "$tmp/$1.prof" --html "$tmp/$1.html" >/dev/null 2>"$tmp/err" || return 1
	$SHELL "$top_srcdir/ctests/html_renders.sh" "$tmp/$1.html" 0 "$tmp/$1.geo" >"$tmp/log"
}
for name in few spaces threads; do
	page $name
	status=$?
	if [ $status -eq 77 ]; then
		echo "ok - html geometry of $name # SKIP no chromium"
		continue
	elif [ $status -ne 0 ]; then
		not_ok "html $name: $(cat "$tmp/err" "$tmp/log")"
		continue
	fi
	clipped=$(awk -F '\t' '$1 == "clipped" { print "#" $2 ": " $3 }' "$tmp/$name.geo")
	if grep -q '^svg' "$tmp/$name.geo" && [ -z "$clipped" ]; then
		ok "html $name: no text of any chart reaches outside it"
	else
		not_ok "html $name: clipped: $clipped"
	fi
	scales=$(awk -F '\t' '$1 == "scale-lo" { print $3 }' "$tmp/$name.geo" | sort -u | tr '\n' ' ')
	if [ "$scales" = "0 " ]; then
		ok "html $name: every colour scale starts at 0"
	else
		not_ok "html $name: colour scales start at '$scales'"
	fi
	# A chart draws its legend's swatches in distinct colours, and the screenshot shows them so.
	awk -F '\t' '$1 == "pixel" { print $2, $5, $6 }' "$tmp/$name.geo" >"$tmp/swatches"
	if awk '$2 != $3 { bad = 1 } END { exit bad }' "$tmp/swatches" &&
		[ -z "$(cut -d' ' -f1,2 "$tmp/swatches" | sort | uniq -d)" ]; then
		ok "html $name: $(wc -l <"$tmp/swatches") legend swatches, distinct within each chart and shown as drawn"
	else
		not_ok "html $name: swatches: $(tr '\n' ';' <"$tmp/swatches")"
	fi
done
if [ -s "$tmp/spaces.geo" ]; then
	# 13 code spaces: the threads' stacked bars have 13 parts, more than the palette's 8 of old.
	if [ "$(awk -F '\t' '$1 == "pixel" { n[$2]++ } END { m = 0; for (i in n) if (n[i] > m) m = n[i]; print m }' \
		"$tmp/spaces.geo")" -ge 13 ]; then
		ok "html spaces: a chart of 13 series has 13 legend colours"
	else
		not_ok "html spaces: fewer than 13 swatches in a chart"
	fi
fi
if [ -s "$tmp/threads.geo" ]; then
	tallest=$(awk -F '\t' '$1 == "svg" && $4 > m { m = $4 } END { print m + 0 }' "$tmp/threads.geo")
	if [ "$tallest" -le 2000 ] && grep -q '4969 other threads (mean)' "$tmp/threads.html"; then
		ok "html threads: 5,000 threads, the tallest chart $tallest px (31 threads and one row for the others)"
	else
		not_ok "html threads: the tallest chart is $tallest px"
	fi
fi
if [ -f "$tmp/few.html" ]; then
	# Defects first; the advantages in a section of their own, after every defect.
	adv_heading=$(grep -n '<h2>Advantages</h2>' "$tmp/few.html" | cut -d: -f1)
	first_adv=$(grep -n '<td>advantage</td>' "$tmp/few.html" | head -n 1 | cut -d: -f1)
	last_defect=$(grep -n '<td>defect</td>' "$tmp/few.html" | tail -n 1 | cut -d: -f1)
	if [ -n "$adv_heading" ] && [ -n "$first_adv" ] && [ -n "$last_defect" ] &&
		[ "$last_defect" -lt "$adv_heading" ] && [ "$adv_heading" -lt "$first_adv" ]; then
		ok "html: the defects first, the advantages in their own section"
	else
		not_ok "html: defects end at line '$last_defect', Advantages at '$adv_heading', first advantage at '$first_adv'"
	fi
	# No transitions (each thread stays in its loop): a line says so, no empty panel is drawn.
	patterns=$(sed -n '/<h2>Patterns<\/h2>/,/<h2>Threads<\/h2>/p' "$tmp/few.html")
	if echo "$patterns" | grep -q 'No transitions' && ! echo "$patterns" | grep -q '<svg'; then
		ok "html: no transitions, no empty pattern panel"
	else
		not_ok "html: the pattern section: $(echo "$patterns" | head -c 300)"
	fi
fi
# Progress goes to a terminal only: with stderr in a file, a long analysis writes nothing there.
# shellcheck disable=SC2086
$mpxkit analyze "$tmp/threads.prof" >/dev/null 2>"$tmp/progress.err"
if [ ! -s "$tmp/progress.err" ]; then
	ok "analyze: no progress in a log file"
else
	not_ok "analyze: stderr got $(tr '\r' '^' <"$tmp/progress.err" | head -c 200)"
fi

if ! command -v valgrind >/dev/null 2>&1; then
	echo "ok - callgrind profiles # SKIP valgrind is not installed"
	exit $failed
fi
expect_fail "profile: command not found" 2 "program 'mpxkit-no-such-command' not found on PATH" \
	profile -o "$tmp/x.prof" -- mpxkit-no-such-command
expect_fail "profile: valgrind missing" 2 "valgrind '/nonexistent/valgrind' not found" \
	profile --valgrind /nonexistent/valgrind -o "$tmp/x.prof" -- true
expect_fail "profile: command fails" 2 "false exited with status 1; no profile written" \
	profile -s callgrind -o "$tmp/x.prof" -- false
if [ -e "$tmp/x.prof" ]; then
	not_ok "a failed command left a profile"
fi
run profile -s callgrind --keep-failed -o "$tmp/x.prof" -- false
if [ "$status" -eq 0 ] && [ -s "$tmp/x.prof" ] &&
	grep -q "false exited with status 1; profile kept (--keep-failed)" "$tmp/err"; then
	ok "profile: --keep-failed writes the profile and says so"
else
	not_ok "profile: --keep-failed (status $status, stderr: $(cat "$tmp/err"))"
fi
# Killed (here by its own SIGINT, as ^C would): the profile is kept, and the status is still 2
# with one line, so a script or a shell loop stops (ced039f said 0).
rm -f "$tmp/x.prof"
run profile -s callgrind --keep-failed -o "$tmp/x.prof" -- sh -c 'kill -INT $$'
if [ "$status" -eq 2 ] && [ -s "$tmp/x.prof" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	grep -q "sh was killed by signal 2; profile kept (--keep-failed)" "$tmp/err"; then
	ok "profile: --keep-failed of a command killed by SIGINT keeps it and exits 2"
else
	not_ok "profile: --keep-failed, SIGINT (status $status, stderr: $(cat "$tmp/err"))"
fi

# ---- a real profile through every output --------------------------------------------------------
# shellcheck disable=SC2086
if ! $mpxkit profile -s callgrind -i 100000 -o "$tmp/run.prof" -- "$workload" 1 >/dev/null \
	2>"$tmp/err"; then
	not_ok "profile of the stride program:"
	sed 's/^/#   /' "$tmp/err"
	exit 1
fi
grep -q "mpxkit profile: callgrind (as asked): [0-9]* windows, 1 thread, [0-9]* rows written to" \
	"$tmp/err" && ok "profile says which source it used" || not_ok "profile's summary line"
head -c 100 "$tmp/run.prof" >"$tmp/cut.prof"
expect_fail "analyze: a truncated profile" 2 "cut.prof: truncated" analyze "$tmp/cut.prof"

# shellcheck disable=SC2086
$mpxkit analyze -q "$tmp/run.prof" >"$tmp/table" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^# .*run.prof: callgrind profile' "$tmp/table" &&
	grep -Eq '^rank +kind +class +function +location +metric' "$tmp/table" &&
	grep -Eq '^ +1 +defect +ll-miss +column_walk .*stride.c:[0-9]+ +ll_mpki' "$tmp/table" &&
	[ ! -s "$tmp/err" ]; then
	ok "table: comments, header, the column walk first"
else
	not_ok "table:"
	sed 's/^/#   /' "$tmp/table" "$tmp/err"
fi
# shellcheck disable=SC2086
$mpxkit analyze -q -f csv "$tmp/run.prof" >"$tmp/csv"
if head -n 1 "$tmp/csv" | grep -q '^rank,kind,class,function,location,metric,value,reference,program,share_pct,direction$' &&
	! grep -q '^#' "$tmp/csv"; then
	ok "csv: one header line, no comments"
else
	not_ok "csv: $(head -n 1 "$tmp/csv")"
fi
# shellcheck disable=SC2086
$mpxkit analyze -q -f json -o "$tmp/run.json" "$tmp/run.prof"
if command -v jq >/dev/null 2>&1; then
	if jq -e '.schema == "mpxkit-analyze/1" and .profile.source == "callgrind" and
		(.spaces | length) > 0 and (.spaces[0] | has("start") and has("appearances") and
		has("max_gap") and has("metrics")) and .findings[0].rank == 1 and
		(.findings[0] | has("direction") and has("share") and has("program_value")) and
		(.patterns | type) == "array" and (.threads | length) == 1' \
		"$tmp/run.json" >/dev/null; then
		ok "json: the documented keys"
	else
		not_ok "json: $(head -c 300 "$tmp/run.json")"
	fi
else
	echo "ok - json # SKIP jq is not installed"
fi

# The HTML page: well-formed XML, self-contained, rendered by chromium with coloured marks.
# shellcheck disable=SC2086
$mpxkit analyze -q "$tmp/run.prof" --html "$tmp/run.html" >/dev/null
if command -v xmllint >/dev/null 2>&1; then
	if xmllint --noout "$tmp/run.html" 2>"$tmp/err"; then
		ok "html: xmllint accepts the page and its SVG"
	else
		not_ok "html: xmllint: $(head -c 300 "$tmp/err")"
	fi
fi
$SHELL "$top_srcdir/ctests/html_renders.sh" "$tmp/run.html" 500
case $? in
0) ok "html: renders in chromium" ;;
77) echo "ok - html renders # SKIP no chromium" ;;
*) not_ok "html: does not render" ;;
esac

# ---- perf sampling, where perf_event_open allows it ---------------------------------------------
# shellcheck disable=SC2086
$mpxkit profile -s perf -F 1000 -o "$tmp/perf.prof" -- "$workload" 20 >/dev/null 2>"$tmp/err"
status=$?
if [ $status -ne 0 ] && grep -q "perf_event_open\|refuses sampling" "$tmp/err"; then
	echo "ok - perf profile # SKIP $(cat "$tmp/err")"
elif [ $status -eq 0 ] && grep -Eq "perf \(as asked\): [1-9][0-9]* samples \(0 lost\)" "$tmp/err"; then
	ok "perf profile: $(cat "$tmp/err")"
	# shellcheck disable=SC2086
	if $mpxkit analyze -q -f json -o "$tmp/perf.json" "$tmp/perf.prof" && { ! command -v jq >/dev/null 2>&1 ||
		jq -e '.profile.source == "perf" and .profile.events[0] == "samples" and
		([.spaces[].function] | index("column_walk")) != null' "$tmp/perf.json" >/dev/null; }; then
		ok "perf profile: analysed, the column walk among its spaces"
	else
		not_ok "perf profile: analyze"
	fi
else
	not_ok "perf profile: status $status: $(cat "$tmp/err")"
fi
exit $failed
