# SPDX-License-Identifier: BSD-3-Clause
# What the CLI shell tests share: result lines, running mpxkit, one-line failures.
# Sourced once $tmp (a scratch directory) is set.  MPXKIT_VALGRIND runs mpxkit under memcheck in
# `make check-valgrind`; word splitting intended.
mpxkit="${MPXKIT_VALGRIND:-} $MPXKIT"
failed=0

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1"; failed=1; }

# run CMD ARGS...: mpxkit's stdout in $tmp/out, stderr in $tmp/err, status in $status.
run() {
	# shellcheck disable=SC2086
	$mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	status=$?
}

# expect_fail DESCRIPTION STATUS PATTERN CMD ARGS...: that status, one stderr line matching
# PATTERN, nothing on stdout, no temporary file left in $tmp.
expect_fail() {
	desc=$1 want=$2 pattern=$3
	shift 3
	run "$@"
	if [ "$status" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		grep -q -- "$pattern" "$tmp/err" && [ ! -s "$tmp/out" ] &&
		! ls "$tmp" | grep -q '\.tmp\.'; then
		ok "$desc"
	else
		not_ok "$desc (status $status, stderr: $(cat "$tmp/err"))"
	fi
}

# expect_out DESCRIPTION WANT CMD ARGS...: status 0, nothing on stderr, stdout exactly WANT.
expect_out() {
	desc=$1 want=$2
	shift 2
	run "$@"
	if [ "$status" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "$(cat "$tmp/out")" = "$want" ]; then
		ok "$desc"
	else
		not_ok "$desc (status $status, stderr: $(cat "$tmp/err"))"
		printf '%s\n' "--- want" "$want" "--- got" >&2
		cat "$tmp/out" >&2
	fi
}

# readme_block MARKER: the fenced sh block after the line "<!-- MARKER -->" of README.md.
readme_block() {
	awk -v m="<!-- $1 -->" '$0 == m { on = 1; next } on && /^```sh$/ { block = 1; next }
		block && /^```$/ { exit } block { print }' "$top_srcdir/README.md"
}
