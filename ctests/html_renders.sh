#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# html_renders.sh PAGE [MIN_COLOURED [GEOMETRY]]: PAGE is one self-contained HTML file (no URL, no
# script, nothing fetched) that headless chromium renders to a non-blank screenshot, with at least
# MIN_COLOURED strongly coloured pixels (chart marks; default 0) in its first 1200 x 900 pixels.
# For any test that writes a page: `$SHELL "$top_srcdir/ctests/html_renders.sh" page.html 500`.
# With GEOMETRY, also measures the page as chromium lays it out (a copy with a measuring script;
# the page itself stays script-free) and writes, tab-separated, one line per fact:
#   page WIDTH HEIGHT              the laid-out document, in CSS px at 1200 px wide
#   svg I WIDTH HEIGHT CLIPPED     the I-th <svg>: its size and how many of its texts reach
#                                  outside it (cut off on the screen)
#   clipped I TEXT                 each such text (its first 60 characters)
#   scale-lo I TEXT                the lowest label of each colour scale (.colour-scale .scale-lo)
#   pixel I X Y FILL SHOWN         each legend swatch (rect.swatch): its centre, its fill, and the
#                                  colour a full-page screenshot shows there
# Exit 0 pass, 1 fail (reason on stdout), 77 skip (no chromium), 99 hard error.
set -u
page=${1:?usage: html_renders.sh PAGE [MIN_COLOURED [GEOMETRY]]}
min_coloured=${2:-0}
geometry=${3:-}
png_pixels=${PNG_PIXELS:-${top_builddir:-.}/ctests/png_pixels}

if [ ! -r "$page" ]; then
	echo "html_renders: $page: cannot read"
	exit 99
fi
# Self-contained: no scheme at all (http, https, ftp, file, data: would all be fetches or
# embedded scripts), no script, no element that loads something by reference.  The SVG
# namespace is a name, never fetched: it is taken out before the search.
bad=$(sed 's|xmlns="http://www.w3.org/2000/svg"||g' "$page" |
	grep -Eion 'https?:|ftp:|\bfile:|<script|<iframe|<object|<embed|<link|@import|url\(|(src|href)="[^#]' |
	head -3)
if [ -n "$bad" ]; then
	echo "html_renders: $page is not self-contained:"
	echo "$bad" | cut -c1-200 | sed 's/^/#   /'
	exit 1
fi

chromium=${CHROMIUM:-}
if [ -z "$chromium" ]; then
	for c in chromium chromium-browser google-chrome; do
		if command -v "$c" >/dev/null 2>&1; then
			chromium=$c
			break
		fi
	done
fi
if [ -z "$chromium" ]; then
	echo "html_renders: no chromium: skipping the rendering check"
	exit 77
fi
if [ ! -x "$png_pixels" ]; then
	echo "html_renders: $png_pixels is not built (make check builds it)"
	exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-html-renders.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
case $page in
/*) url="file://$page" ;;
*) url="file://$(pwd)/$page" ;;
esac
# No network, no profile of the user's, no first-run or update traffic; no scroll bar, so a page
# is laid out the same at every window height.
browse() {
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --hide-scrollbars --force-device-scale-factor=1 \
		--user-data-dir="$tmp/profile" "$@"
}
browse --screenshot="$tmp/shot.png" --window-size=1200,900 "$url" >"$tmp/log" 2>&1
status=$?
if [ ! -s "$tmp/shot.png" ]; then
	echo "html_renders: chromium (status $status) wrote no screenshot of $page:"
	tail -5 "$tmp/log" | sed 's/^/#   /'
	exit 1
fi
set -- $("$png_pixels" "$tmp/shot.png") || exit 99
# A blank page inks nothing; a heading and a line of text alone ink a few thousand pixels.
if [ "$#" -ne 4 ] || [ "$3" -lt 2000 ] || [ "$4" -lt "$min_coloured" ]; then
	echo "html_renders: $page renders as ${1:-?} x ${2:-?} with ${3:-?} inked and ${4:-?} coloured pixels (want >= 2000 and >= $min_coloured)"
	exit 1
fi
echo "html_renders: $page renders: $1 x $2, $3 inked, $4 coloured pixels"
[ -z "$geometry" ] && exit 0

# The measuring script, for a copy of the page only.
cat >"$tmp/probe.js" <<'EOF'
window.addEventListener('load', function () {
  var out = [], tab = String.fromCharCode(9), e = document.documentElement;
  function box(el) { return el.getBoundingClientRect(); }
  out.push(['page', e.scrollWidth, e.scrollHeight].join(tab));
  document.querySelectorAll('svg').forEach(function (svg, i) {
    var r = box(svg), clipped = [];
    svg.querySelectorAll('text').forEach(function (t) {
      var b = box(t);
      if (b.width === 0 && b.height === 0) return;
      if (b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 ||
          b.bottom > r.bottom + 0.5)
        clipped.push(t.textContent.replace(/\s+/g, ' ').slice(0, 60));
    });
    out.push(['svg', i, svg.getAttribute('width'), svg.getAttribute('height'),
              clipped.length].join(tab));
    clipped.forEach(function (c) { out.push(['clipped', i, c].join(tab)); });
    svg.querySelectorAll('.colour-scale .scale-lo').forEach(function (t) {
      out.push(['scale-lo', i, t.textContent].join(tab));
    });
    svg.querySelectorAll('rect.swatch').forEach(function (s) {
      var b = box(s);
      out.push(['swatch', i, Math.round(b.left + b.width / 2 + window.scrollX),
                Math.round(b.top + b.height / 2 + window.scrollY),
                s.getAttribute('fill')].join(tab));
    });
  });
  var pre = document.createElement('pre');
  pre.id = 'mpxkit-geometry';
  pre.textContent = out.join(String.fromCharCode(10));
  document.body.appendChild(pre);
});
EOF
{
	sed '/<\/body>/,$d' "$page"
	echo '<script>'
	cat "$tmp/probe.js"
	echo '</script></body></html>'
} >"$tmp/probe.html"
browse --window-size=1200,900 --virtual-time-budget=3000 --dump-dom "file://$tmp/probe.html" \
	2>"$tmp/log" | sed -n '/<pre id="mpxkit-geometry">/,/<\/pre>/p' |
	sed 's/<pre id="mpxkit-geometry">//; s/<\/pre>.*//; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g' |
	sed 's/&amp;/\&/g' >"$tmp/facts"
height=$(awk -F '\t' '$1 == "page" { print $3 }' "$tmp/facts")
if [ -z "$height" ]; then
	echo "html_renders: chromium measured nothing of $page:"
	tail -5 "$tmp/log" | sed 's/^/#   /'
	exit 1
fi
[ "$height" -gt 16000 ] && height=16000
# Every swatch's colour as a screenshot of the whole page shows it.
browse --screenshot="$tmp/page.png" --window-size="1200,$height" "$url" >"$tmp/log" 2>&1
points=$(awk -F '\t' -v h="$height" '$1 == "swatch" && $4 < h { print $3 "," $4 }' "$tmp/facts")
: >"$tmp/shown"
# shellcheck disable=SC2086
if [ -n "$points" ] && ! "$png_pixels" "$tmp/page.png" $points >"$tmp/shown"; then
	echo "html_renders: cannot read the full-page screenshot of $page"
	exit 99
fi
awk -v OFS='\t' -v shown_file="$tmp/shown" 'FILENAME == shown_file { shown[$1 "," $2] = $3; next }
	$1 == "swatch" { if ((($3 "," $4) in shown)) print "pixel", $2, $3, $4, $5, shown[$3 "," $4]; next }
	{ print }' "$tmp/shown" FS='\t' "$tmp/facts" >"$geometry"
exit 0

