#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# README's usage examples, run exactly as written, from a copy of the tree's layout: utils/ and
# data/kernels from the build tree, the rest of data/ from the source tree.  MPXKIT_DATADIR is unset, as after the quick start: the uninstalled build finds its models.
set -u
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"
unset MPXKIT_DATADIR

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-readme.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
readme_block usage >"$tmp/lines"
[ -s "$tmp/lines" ] || { echo "FAIL: no usage block in README.md"; exit 1; }
# The lines that read the measurements next to the tree (../shared/data, never in git).
readme_block usage-data >"$tmp/data-lines"
[ -s "$tmp/data-lines" ] || { echo "FAIL: no usage-data block in README.md"; exit 1; }
shared=no
shared_dir=${MPXKIT_SHARED:-$top_srcdir/../shared}
if [ -d "$shared_dir/data/dvfs" ]; then
	shared=yes
	cat "$tmp/data-lines" >>"$tmp/lines"
fi

mkdir "$tmp/tree" "$tmp/tree/data"
[ $shared = yes ] && ln -s "$shared_dir" "$tmp/shared"
ln -s "$top_builddir/utils" "$tmp/tree/utils"
ln -s "$top_builddir/data/kernels" "$tmp/tree/data/kernels"
for d in "$top_srcdir"/data/*/; do
	d=$(basename "$d")
	[ "$d" = kernels ] || ln -s "$top_srcdir/data/$d" "$tmp/tree/data/$d"
done

# perf_event: stat and list count with it; where the kernel refuses, their lines are skipped,
# and said so.
perf=yes
# (mpxkit list opens nothing, so it says nothing about perf_event_open: a count does.)
(cd "$tmp/tree" && utils/mpxkit stat -e task-clock -- true >/dev/null 2>&1) || perf=no

# Tracepoints need tracefs mounted (mpxkit never mounts it; doc/events.md).
tracefs=no
[ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ] && tracefs=yes

n=0
while IFS= read -r line; do
	n=$((n + 1))
	case $line in
	*"syscalls:"*)
		if [ $tracefs = no ]; then
			echo "ok - line $n # SKIP tracefs is not mounted here: $line"
			continue
		fi
		;;
	esac
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
if [ $shared = no ]; then
	while IFS= read -r line; do
		echo "ok - # SKIP ../shared/data is not next to the tree: $line"
	done <"$tmp/data-lines"
fi

# What the lines wrote, each a real file of its kind.
written="lu.csv.gz my.mpxm out.svg matvec.pcz back.csv lu.prof report.html"
[ $shared = yes ] && written="$written nikov-cbench.csv"
for f in $written; do
	if [ -s "$tmp/tree/$f" ]; then
		ok "$f written"
	else
		not_ok "$f missing or empty"
	fi
done
exit $failed
