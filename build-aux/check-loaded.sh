#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check-loaded: `make -j2 check` five times while stress-ng keeps two CPUs busy; every run
# must pass.  The timing-sensitive tests compare estimates with exact counts of the same run, so
# load on the machine must never decide their verdict.  Usage: check-loaded.sh MAKE [ARGS...]
set -u
runs=5
command -v stress-ng >/dev/null 2>&1 || {
	echo "check-loaded: stress-ng not found (it is in build-aux/debian-packages)" >&2
	exit 1
}
stress-ng --cpu 2 --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP
passed=0
rm -f check-loaded-*.log
i=1
while [ "$i" -le "$runs" ]; do
	echo "check-loaded: run $i of $runs, with stress-ng --cpu 2 (pid $load)"
	if "$@" -j2 check; then
		passed=$((passed + 1))
	else
		# The next run removes the logs: keep the failed tests' (test-suite.log holds them).
		cp test-suite.log "check-loaded-$i.log" 2>/dev/null
		echo "check-loaded: run $i FAILED; its failed tests' logs are in check-loaded-$i.log"
	fi
	i=$((i + 1))
done
echo "check-loaded: $passed of $runs runs passed under load"
[ "$passed" -eq "$runs" ]
