#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every reader on /dev/zero ends with one honest line and exit 2; every writer leaves devices,
# FIFOs and symbolic links as they were (written through, or the link's target replaced).
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"
: "${top_builddir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-io-cli.XXXXXX") || exit 99
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
. "$top_srcdir/ctests/cli_lib.sh"
corpus="$top_srcdir/data/corpus"
trace="$corpus/fft.csv.gz"

# A memory bound for the /dev/zero runs, where the build allows one: ASan and valgrind reserve
# far more address space than they use, so under them the bound is left out and the time limit
# alone catches a reader that never stops.
limit=
if [ -z "${MPXKIT_VALGRIND:-}" ] && (ulimit -v 1000000 && $MPXKIT help >/dev/null 2>&1); then
	limit="ulimit -v 1000000;"
fi

# zero DESC PATTERN ARGS...: mpxkit ARGS exits 2 with one stderr line matching PATTERN, no stdout.
zero() {
	desc=$1 pattern=$2
	shift 2
	# shellcheck disable=SC2086
	bash -c "$limit exec timeout 60 $mpxkit \"\$@\"" mpxkit "$@" >"$tmp/out" 2>"$tmp/err" </dev/zero
	status=$?
	if [ "$status" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- "$pattern" "$tmp/err" &&
		[ ! -s "$tmp/out" ]; then
		ok "$desc: $(cat "$tmp/err")"
	else
		not_ok "$desc (status $status, stderr: $(head -c 300 "$tmp/err"))"
	fi
}

zero "eval /dev/zero" "/dev/zero:1: NUL byte: not a text trace" eval /dev/zero
zero "eval -g /dev/zero" "/dev/zero:1: NUL byte: not a text group file" eval -g /dev/zero "$trace"
zero "eval --model /dev/zero" "magic" eval -e mlp --model /dev/zero "$trace"
zero "list --replay /dev/zero" "NUL byte: not a text trace" list --replay /dev/zero
zero "train /dev/zero" "NUL byte: not a text trace" train -o "$tmp/m.mpxm" /dev/zero "$trace" "$corpus/awk.csv.gz"
zero "pack /dev/zero" "/dev/zero:1: NUL byte: not a text counter CSV" pack /dev/zero -o "$tmp/z.pcz"
zero "pack - </dev/zero" "<stdin>:1: NUL byte: not a text counter CSV" pack - -o "$tmp/z.pcz"
zero "info /dev/zero" "/dev/zero" info /dev/zero
zero "verify /dev/zero" "/dev/zero" verify /dev/zero
zero "merge /dev/zero" "/dev/zero" merge -o "$tmp/z.pcz" /dev/zero
zero "report /dev/zero" "/dev/zero" report /dev/zero
zero "unpack /dev/zero" "/dev/zero" unpack /dev/zero -o "$tmp/z.csv"
zero "stat --model /dev/zero" "magic" stat --model /dev/zero --estimator mlp -e perf::TASK-CLOCK -- true
zero "analyze /dev/zero" "/dev/zero: not a profile file" analyze /dev/zero
zero "--model a directory" "cannot read $tmp: Is a directory" eval -e mlp --model "$tmp" "$trace"
zero "pack -o a directory/" "cannot write $tmp/: Is a directory" pack "$top_srcdir/data/threads/stencil.csv" -o "$tmp/"
for f in "$tmp"/*; do
	case "$f" in "$tmp/out" | "$tmp/err") ;; *) [ -e "$f" ] && not_ok "a failed run left $f behind" ;; esac
done

# ---- outputs ------------------------------------------------------------------------------------

pcz="$tmp/in.pcz"
$MPXKIT pack "$top_srcdir/data/threads/stencil.csv" -o "$pcz" || exit 99
stat_works=1
$MPXKIT stat -e perf::TASK-CLOCK -c 1 -- true >/dev/null 2>&1 || stat_works=0

# outputs NAME SLOW ARGS...: runs mpxkit ARGS with each @OUT@ replaced by the output under test.
outputs() {
	name=$1 slow=$2
	shift 2
	to_fifo "$name" "$@"
	to_null_device "$name" "$@"
	[ "$slow" = slow ] && return
	to_symlink "$name" "$@"
	to_full_device "$name" "$@"
}

# run_with OUT ARGS...: mpxkit ARGS, @OUT@ replaced by OUT; status in $status, stderr in $tmp/err.
run_with() {
	out=$1
	shift
	set -- "${@//@OUT@/$out}"
	# shellcheck disable=SC2086
	$mpxkit "$@" >/dev/null 2>"$tmp/err" </dev/null
	status=$?
}

to_fifo() {
	name=$1
	shift
	rm -f "$tmp/fifo" "$tmp/got"
	mkfifo "$tmp/fifo" || { not_ok "$name: mkfifo"; return; }
	cat "$tmp/fifo" >"$tmp/got" &
	reader=$!
	run_with "$tmp/fifo" "$@"
	# A writer that failed before opening the FIFO leaves cat waiting: open it once to end it.
	[ "$status" -ne 0 ] && : >"$tmp/fifo"
	wait "$reader"
	if [ "$status" -eq 0 ] && [ -p "$tmp/fifo" ] && [ -s "$tmp/got" ] && ! ls "$tmp"/fifo.tmp.* >/dev/null 2>&1; then
		ok "$name: a FIFO is written through ($(wc -c <"$tmp/got") bytes)"
	else
		not_ok "$name: FIFO (status $status, $(head -c 300 "$tmp/err"))"
	fi
}

to_symlink() {
	name=$1
	shift
	rm -f "$tmp/target" "$tmp/link"
	echo old >"$tmp/target"
	ln -s target "$tmp/link"
	run_with "$tmp/link" "$@"
	if [ "$status" -eq 0 ] && [ -L "$tmp/link" ] && [ -f "$tmp/target" ] && ! echo old | cmp -s - "$tmp/target"; then
		ok "$name: a symlink's target is replaced, the link stays"
	else
		not_ok "$name: symlink (status $status, $(head -c 300 "$tmp/err"))"
	fi
}

can_mknod=0
if mknod "$tmp/probe" c 1 3 2>/dev/null; then
	can_mknod=1
	rm -f "$tmp/probe"
fi

to_null_device() {
	name=$1
	shift
	if [ "$can_mknod" -eq 0 ]; then
		echo "ok - $name: device node # SKIP cannot make device nodes here (needs root)"
		return
	fi
	rm -f "$tmp/null"
	mknod "$tmp/null" c 1 3
	run_with "$tmp/null" "$@"
	if [ "$status" -eq 0 ] && [ -c "$tmp/null" ] && ! ls "$tmp"/null.tmp.* >/dev/null 2>&1; then
		ok "$name: a device stays a device"
	else
		not_ok "$name: null device (status $status, $(head -c 300 "$tmp/err"))"
	fi
	rm -f "$tmp/null"
}

to_full_device() {
	name=$1
	shift
	[ "$can_mknod" -eq 0 ] && return
	rm -f "$tmp/full"
	mknod "$tmp/full" c 1 7
	run_with "$tmp/full" "$@"
	# stat's report goes to stderr as perf stat's does; the error is the one line from mpxkit.
	if [ "$status" -eq 2 ] && [ -c "$tmp/full" ] && [ "$(grep -v '^mpxkit train: epoch ' "$tmp/err" | grep -c '^mpxkit ')" -eq 1 ] &&
		tail -n 1 "$tmp/err" | grep -q "^mpxkit .*No space left on device"; then
		ok "$name: a full device is one error line: $(tail -n 1 "$tmp/err")"
	else
		not_ok "$name: full device (status $status, $(head -c 300 "$tmp/err"))"
	fi
	rm -f "$tmp/full"
}

outputs "pack -o" fast pack "$top_srcdir/data/threads/stencil.csv" -o @OUT@
outputs "unpack -o" fast unpack "$pcz" -o @OUT@
outputs "eval --plot" fast eval --plot @OUT@ --trace "$trace" --event Ir
printf '# job.rank=0\nregion,unit,start_ns,end_ns,A\nstop.total,t1,0,1,5\n' >"$tmp/rank.csv"
$MPXKIT pack "$tmp/rank.csv" -o "$tmp/rank.pcz" || exit 99
outputs "merge -o" fast merge -o @OUT@ "$tmp/rank.pcz"
outputs "report -o" fast report -o @OUT@ "$tmp/rank.pcz"
outputs "report --svg" fast report --svg @OUT@ "$tmp/rank.pcz"
outputs "train -o" slow train -o @OUT@ --epochs 1 "$trace" "$corpus/awk.csv.gz" "$corpus/bc.csv.gz"
if command -v valgrind >/dev/null 2>&1; then
	outputs "record -o" slow record -o @OUT@ -- true
	outputs "profile -o" slow profile -s callgrind -o @OUT@ -- true
	if $MPXKIT profile -s callgrind -o "$tmp/run.prof" -- true >/dev/null 2>&1; then
		outputs "analyze -o" fast analyze -q -o @OUT@ "$tmp/run.prof"
		outputs "analyze --html" fast analyze -q --html @OUT@ "$tmp/run.prof"
	else
		not_ok "profile -s callgrind -- true"
	fi
fi
if [ "$stat_works" -eq 1 ]; then
	outputs "stat -o" fast stat -e perf::TASK-CLOCK -c 1 -o @OUT@ -- true
	outputs "stat --series" fast stat -e perf::TASK-CLOCK -c 1 --series @OUT@ -- true
else
	echo "ok - stat -o, stat --series # SKIP perf_event_open refused here"
fi

exit $failed
