#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every command doc/benchmarks.md shows still exists, so its table cannot drift: each `mpxkit SUB`
# names a subcommand that `mpxkit help` lists, each path under bench/, build-aux/, ctests/ or
# data/ is in the source tree (a program by its .c), and each `make TARGET` is a rule or a program.
set -u
: "${MPXKIT:=utils/mpxkit}"
: "${top_srcdir:=.}"
doc=${MPXKIT_BENCH_DOC:-$top_srcdir/doc/benchmarks.md}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
not_ok() { echo "not ok - $1"; failed=1; }

[ -r "$doc" ] || { echo "not ok - cannot read $doc"; exit 1; }
"$MPXKIT" help >"$tmp/help" 2>&1 || { echo "not ok - '$MPXKIT help' failed"; exit 1; }
# The subcommands: the indented first word of each line under "Commands:".
sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p' "$tmp/help" >"$tmp/subs"
[ "$(wc -l <"$tmp/subs")" -ge 10 ] || { echo "not ok - no subcommand list in '$MPXKIT help'"; exit 1; }

# The code the document shows, one piece a line: fenced blocks, 4-space indented lines, and the
# inline `spans` of each paragraph, whose lines are joined first (a span may wrap).
awk '
	function spans(text) {
		while (match(text, /`[^`]+`/)) {
			print substr(text, RSTART + 1, RLENGTH - 2)
			text = substr(text, RSTART + RLENGTH)
		}
	}
	/^```/ { spans(para); para = ""; fence = !fence; next }
	fence || /^    / { print; next }
	/^[ \t]*$/ { spans(para); para = ""; next }
	{ para = para " " $0 }
	END { spans(para) }' "$doc" >"$tmp/code"

# mpxkit SUB, where mpxkit is a word of its own or the end of a path (utils/mpxkit).
grep -oE '(^|[ /(=])mpxkit [a-z][a-z0-9-]*' "$tmp/code" | sed 's/.*mpxkit //' | sort -u >"$tmp/used"
n_subs=0
while read -r sub; do
	n_subs=$((n_subs + 1))
	grep -qx "$sub" "$tmp/subs" || not_ok "doc/benchmarks.md shows 'mpxkit $sub', which '$MPXKIT help' does not list"
done <"$tmp/used"

# Paths in the tree, at the start of a word (not inside ../shared/data/...).
grep -oE '(^|[ (=]|\./)(bench|build-aux|ctests|data)/[A-Za-z0-9_.+/-]*' "$tmp/code" |
	sed -e 's/^[ (=]//' -e 's|^\./||' -e 's/[.,:;)]*$//' -e 's|\.libs/||' | sort -u >"$tmp/paths"
n_paths=0
while read -r p; do
	n_paths=$((n_paths + 1))
	[ -e "$top_srcdir/$p" ] || [ -e "$top_srcdir/$p.c" ] ||
		not_ok "doc/benchmarks.md shows '$p', which is not in the tree"
done <"$tmp/paths"

# make TARGET: a rule in Makefile.am or a local.am, or a program whose .c is in the tree.
grep -oE '(^|[ (])make [a-z][A-Za-z0-9_/.-]*' "$tmp/code" | sed 's/.*make //' | sort -u >"$tmp/targets"
n_targets=0
while read -r t; do
	n_targets=$((n_targets + 1))
	if [ -e "$top_srcdir/$t.c" ]; then continue; fi
	find "$top_srcdir" -name local.am -o -name Makefile.am | grep -v '/papi-build/' |
		xargs grep -qE "^$t:" || not_ok "doc/benchmarks.md shows 'make $t', which no Makefile.am rule makes"
done <"$tmp/targets"

# A pattern that matched nothing would pass anything: the document shows all three kinds.
[ "$n_subs" -ge 3 ] && [ "$n_paths" -ge 10 ] && [ "$n_targets" -ge 3 ] ||
	not_ok "found only $n_subs subcommands, $n_paths paths and $n_targets make targets in $doc"
[ "$failed" -eq 0 ] && echo "ok - doc/benchmarks.md: $n_subs subcommands, $n_paths paths, $n_targets make targets exist"
exit "$failed"
