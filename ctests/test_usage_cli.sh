#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# One rule for every subcommand: --help prints its usage on stdout and exits 0; an unknown
# option, an option without its argument or a number out of range is one line on stderr and
# exit 1, naming the limit.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-usage.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"

# usage_error PATTERN ARGS...: exit 1, nothing on stdout, exactly one stderr line matching PATTERN.
usage_error() {
	pattern=$1
	shift
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	if [ $status -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q -- "$pattern" "$tmp/err"; then
		ok "$*: $(cat "$tmp/err")"
	else
		not_ok "$* (status $status, $(wc -l <"$tmp/err") stderr lines, $(wc -c <"$tmp/out") stdout bytes): $(head -c 300 "$tmp/err")"
	fi
}

# helps ARGS...: exit 0, usage on stdout, nothing on stderr.
helps() {
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
	if [ $status -eq 0 ] && grep -q 'usage: mpxkit' "$tmp/out" && [ ! -s "$tmp/err" ]; then
		ok "$*: usage on stdout, status 0"
	else
		not_ok "$* (status $status): $(head -c 300 "$tmp/err")"
	fi
}

# Every subcommand mpxkit help lists, those added later included.
cmds=$($mpxkit help | awk '/^Commands:/ { on = 1; next } on && NF == 0 { exit } on { print $1 }')
[ "$(echo "$cmds" | wc -w)" -ge 11 ] || not_ok "mpxkit help lists only: $cmds"
for cmd in $cmds; do
	helps "$cmd" --help
	usage_error "^mpxkit $cmd: unknown option '--bogus' (try 'mpxkit $cmd --help')\$" "$cmd" --bogus
done
helps --help
helps help
helps help version
usage_error "^mpxkit version: takes no arguments, not 'x'" version x
usage_error "^mpxkit help: takes one command name" help eval stat
usage_error "^mpxkit: 'bogus' is not an mpxkit command" bogus
for cmd in train pack unpack stat; do
	usage_error "^mpxkit $cmd: option '-o' needs an argument" "$cmd" -o
done
usage_error "^mpxkit eval: unknown option '-q'" eval -qz x.csv
# Numbers out of range say the range.
usage_error "^mpxkit eval: --counters 99999999999: not a whole number in \[1, 1048576\]" \
	eval -c 99999999999 x.csv
usage_error "^mpxkit stat: --counters 99999999999: not a whole number in \[1, 64\]" \
	stat -c 99999999999 -- true
usage_error "^mpxkit record: --counters 99999999999: not a whole number in \[1, 64\]" \
	record --perf -e perf::TASK-CLOCK -c 99999999999 -- true
usage_error "^mpxkit train: --epochs 0: not a whole number in \[1, 100000\]" \
	train --epochs 0 -o m.mpxm x.csv
usage_error "^mpxkit pack: --level 99: not a whole number in \[-7, 22\]" pack -l 99 x.csv
# The man pages name pkgdatadir as a placeholder that `make install` fills in; none shows a
# make variable such as $(pkgdatadir) literally (issue 25).
if grep -l '\$(' "$top_srcdir"/doc/man/*.1 >"$tmp/out"; then
	not_ok "man pages with a make variable: $(cat "$tmp/out")"
else
	ok "no man page shows a make variable"
fi
# A 100,000-byte argument is echoed shortened, in one bounded line (issue 25).
long=$(awk 'BEGIN { s = "perf::"; for (i = 0; i < 100000; i++) s = s "X"; print s }')
usage_error "^mpxkit list: unexpected argument 'perf::X*\.\.\.\[100008 bytes\]\.\.\.X*' (try" list x "$long"
[ "$(wc -c <"$tmp/err")" -lt 300 ] && ok "the long argument's line is $(wc -c <"$tmp/err") bytes" ||
	not_ok "the long argument's line is $(wc -c <"$tmp/err") bytes"
# A pattern that matches nothing is no failure (as perf list), but its note is bounded too.
$mpxkit list "$long" >"$tmp/out" 2>"$tmp/err" </dev/null
status=$?
if [ $status -eq 0 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	[ "$(wc -c <"$tmp/err")" -lt 300 ] &&
	grep -q "^mpxkit list: no event matches 'perf::X*\.\.\.\[100008 bytes\]\.\.\.X*'$" "$tmp/err"; then
	ok "list of a long pattern: $(cat "$tmp/err")"
else
	not_ok "list of a long pattern (status $status, $(wc -c <"$tmp/err") stderr bytes): $(head -c 300 "$tmp/err")"
fi
exit $failed
