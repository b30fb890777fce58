#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# html_renders.sh PAGE [MIN_COLOURED]: PAGE is one self-contained HTML file (no URL, no script,
# nothing fetched) that headless chromium renders to a non-blank screenshot, with at least
# MIN_COLOURED strongly coloured pixels (chart marks; default 0) in its first 1200 x 900 pixels.
# For any test that writes a page: `$SHELL "$top_srcdir/ctests/html_renders.sh" page.html 500`.
# Exit 0 pass, 1 fail (reason on stdout), 77 skip (no chromium), 99 hard error.
set -u
page=${1:?usage: html_renders.sh PAGE [MIN_COLOURED]}
min_coloured=${2:-0}
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
# No network, no profile of the user's, no first-run or update traffic.
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/profile" \
	--screenshot="$tmp/shot.png" --window-size=1200,900 "$url" >"$tmp/log" 2>&1
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
exit 0
