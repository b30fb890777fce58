#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# README's usage examples, run exactly as written, from a copy of the tree's layout: utils/ and
# data/kernels from the build tree, data/corpus, data/threads and data/models from the source
# tree.  MPXKIT_DATADIR is unset, as after the quick start: the uninstalled build finds its models.
set -u
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
unset MPXKIT_DATADIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-readme.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failed=1; }

# The fenced block after "<!-- usage -->".
awk '/^<!-- usage -->$/ { on = 1; next } on && /^```sh$/ { block = 1; next }
	block && /^```$/ { exit } block { print }' "$top_srcdir/README.md" >"$tmp/lines"
[ -s "$tmp/lines" ] || { echo "FAIL: no usage block in README.md"; exit 1; }

mkdir "$tmp/tree" "$tmp/tree/data"
ln -s "$top_builddir/utils" "$tmp/tree/utils"
ln -s "$top_builddir/data/kernels" "$tmp/tree/data/kernels"
for d in corpus threads models; do
	ln -s "$top_srcdir/data/$d" "$tmp/tree/data/$d"
done

# perf_event: stat and list count with it; where the kernel refuses, their lines are skipped,
# and said so.
perf=yes
(cd "$tmp/tree" && utils/mpxkit list >/dev/null 2>&1) || perf=no

n=0
while IFS= read -r line; do
	n=$((n + 1))
	case $line in
	*"mpxkit stat "* | *"mpxkit list"*)
		if [ $perf = no ]; then
			echo "ok - line $n # SKIP perf_event_open is refused here: $line"
			continue
		fi
		;;
	esac
	(cd "$tmp/tree" && sh -c "$line") >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	if [ $status -eq 0 ]; then
		ok "line $n: $line"
	else
		not_ok "line $n exited $status: $line"
		head -n 5 "$tmp/err" | sed 's/^/#   /'
	fi
done <"$tmp/lines"
[ "$n" -ge 10 ] || not_ok "only $n lines in the usage block"

# What the lines wrote, each a real file of its kind.
for f in lu.csv.gz my.mpxm out.svg matvec.pcz back.csv; do
	if [ -s "$tmp/tree/$f" ]; then
		ok "$f written"
	else
		not_ok "$f missing or empty"
	fi
done
exit $failed
