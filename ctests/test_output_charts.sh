#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every chart kind of utils/svg.h through xmllint, alone and in one HTML page; the page is
# self-contained and renders in chromium (ctests/html_renders.sh).
set -u
: "${top_builddir:?run through make check}"
: "${top_srcdir:?run through make check}"

if ! command -v xmllint >/dev/null 2>&1; then
	echo "xmllint is not installed (build-aux/debian-packages lists libxml2-utils): skipping"
	exit 77
fi
# MPXKIT_VALGRIND runs the chart writer under memcheck in `make check-valgrind`.
charts="${MPXKIT_VALGRIND:-} $top_builddir/ctests/output_charts"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-output-charts.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0

ok() {
	echo "ok - $1"
}

not_ok() {
	echo "not ok - $1"
	failed=1
}

# shellcheck disable=SC2086
if ! $charts "$tmp" 2>"$tmp/err"; then
	not_ok "output_charts failed:"
	sed 's/^/#   /' "$tmp/err"
	exit 1
fi

kinds="lines lines_log scatter scatter_log bars bars_norm heat heat_log_large"
for k in $kinds; do
	f="$tmp/$k.svg"
	if xmllint --noout "$f" 2>"$tmp/xerr" &&
		[ "$(head -c 5 "$f")" = "<?xml" ] && grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$f"; then
		ok "$k.svg: well-formed standalone SVG with its namespace"
	else
		not_ok "$k.svg"
		sed 's/^/#   /' "$tmp/xerr"
	fi
	# The nasty label, escaped: markup and quotes as entities, the control byte gone,
	# UTF-8 kept, the stray byte as U+FFFD.
	if grep -q "a&lt;b&gt;&amp;c &quot;q&quot; &#39;r&#39;  $(printf '\303\251t\303\251 \357\277\275') end" "$f" &&
		! grep -q "$(printf '\001')" "$f"; then
		ok "$k.svg: labels escaped"
	else
		not_ok "$k.svg: labels not escaped as expected"
	fi
done

for f in "$tmp"/edge*.svg; do
	if xmllint --noout "$f" 2>"$tmp/xerr" && ! grep -qi 'nan\|inf' "$f"; then
		ok "$(basename "$f"): an empty or degenerate chart is valid SVG with finite numbers"
	else
		not_ok "$(basename "$f")"
		sed 's/^/#   /' "$tmp/xerr"
	fi
done

# Marks, counted from what output_charts draws (ctests/output_charts.c):
# lines: "measured" one run; NASTY split by its NaNs at k = 5, 22, 39 into 4 runs; series 3 a
# lone point (a dot); "rings on a line" one run.  So 6 polylines.
count() {
	grep -o "$2" "$tmp/$1" | wc -l
}
if [ "$(count lines.svg '<polyline')" -eq 6 ]; then
	ok "lines: one polyline per run between gaps"
else
	not_ok "lines: $(count lines.svg '<polyline') polylines, want 6"
fi
# heat: 4 x 12 cells, one NaN: 47 cells with a tooltip, plus the flagged outlines, plus the
# 32 steps of the colour bar.  Flags: (r + c) % 11 == 0 -> (0,0) (0,11) (1,10) (2,9) (3,8).
cells=$(count heat.svg '<rect x="[0-9.]*" y="[0-9.]*" width="[0-9.]*" height="[0-9.]*" fill="#')
outlines=$(count heat.svg 'stroke="#d00000"')
titles=$(count heat.svg '<title>')
if [ "$outlines" -eq 5 ] && [ "$titles" -eq $((47 + 5)) ] && [ "$cells" -eq $((47 + 32)) ]; then
	ok "heat: 47 cells with tooltips, 5 flagged outlines, blank NaN"
else
	not_ok "heat: $cells filled rects, $outlines outlines, $titles tooltips (want 79, 5, 52)"
fi
# bars: 4 categories x 3 parts, values 0 and NaN drawn as nothing: 7 segments with tooltips.
if [ "$(count bars.svg '<title>')" -eq 7 ] && [ "$(count bars_norm.svg '<title>')" -eq 7 ] &&
	grep -q '>100 %<' "$tmp/bars_norm.svg"; then
	ok "bars: one segment per nonzero part, shares up to 100 %"
else
	not_ok "bars: $(count bars.svg '<title>') segments"
fi
if grep -q 'stroke-dasharray="5 4"><title>y = x</title>' "$tmp/scatter.svg"; then
	ok "scatter: the diagonal"
else
	not_ok "scatter: no diagonal"
fi

page="$tmp/page.html"
if xmllint --noout "$page" 2>"$tmp/xerr"; then
	ok "page.html: well-formed (polyglot) markup"
else
	not_ok "page.html: not well-formed"
	sed 's/^/#   /' "$tmp/xerr" | head -5
fi
if [ "$(count page.html '<svg')" -eq 8 ] &&
	! sed 's|xmlns="http://www.w3.org/2000/svg"||g' "$page" | grep -qi 'http' &&
	! grep -qi '<script' "$page"; then
	ok "page.html: 8 inline charts, no URL but the SVG namespace, no script"
else
	not_ok "page.html: $(count page.html '<svg') charts, or a URL or script in it"
fi

# The checker itself: a page that fetches something, and a blank page, both fail.
printf '<!DOCTYPE html>\n<html><body><img src="pic.png"/></body></html>\n' >"$tmp/fetch.html"
printf '<!DOCTYPE html>\n<html><body><p></p></body></html>\n' >"$tmp/blank.html"
$SHELL "$top_srcdir/ctests/html_renders.sh" "$tmp/fetch.html" >"$tmp/log" 2>&1
if [ $? -eq 1 ] && grep -q 'not self-contained' "$tmp/log"; then
	ok "html_renders: refuses a page that loads a file"
else
	not_ok "html_renders: accepted a page that loads a file"
fi
$SHELL "$top_srcdir/ctests/html_renders.sh" "$page" 3000
case $? in
0)
	ok "page.html renders in chromium"
	$SHELL "$top_srcdir/ctests/html_renders.sh" "$tmp/blank.html" >"$tmp/log" 2>&1
	if [ $? -eq 1 ]; then
		ok "html_renders: a blank page fails"
	else
		not_ok "html_renders: a blank page passed"
	fi
	;;
77) echo "# chromium absent: rendering not checked" ;;
*) not_ok "page.html does not render" ;;
esac

exit $failed
