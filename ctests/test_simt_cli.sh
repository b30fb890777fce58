#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit simt end to end: usage, one-line errors, golden tables and JSON, CSV, SVG, --export-gpu.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-simt-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
golden="$top_srcdir/ctests/golden/simt-cli"
. "$top_srcdir/ctests/cli_lib.sh"
gpu="$golden/test.gpu"
trace="$golden/trace"

# same_table FILE GOLDEN: equal but for the first comment line, which names the GPU's path.
same_table() {
	[ "$(tail -n +2 "$1")" = "$(tail -n +2 "$2")" ] &&
		head -n 1 "$1" | grep -q '^# GPU: round-number test GPU (.*test.gpu); cycles = '
}

run simt --help
if [ "$status" -eq 0 ] && grep -q "^usage: mpxkit simt" "$tmp/out" && [ ! -s "$tmp/err" ]; then
	ok "--help"
else
	not_ok "--help"
fi
expect_fail "bad option" 1 "unknown option '--bogus'" simt --bogus "$trace"
expect_fail "no trace" 1 "no trace directory given" simt
expect_fail "two traces" 1 "not 'x' too" simt "$trace" x
expect_fail "format" 1 "--format takes table, csv or json" simt -f xml "$trace"
expect_fail "per-pc range" 1 "--per-pc takes a whole number" simt -p 0 "$trace"
expect_fail "missing value" 1 "option '--gpu' needs an argument" simt "$trace" --gpu
expect_fail "gpu and accelsim" 1 "alternatives" simt --gpu "$gpu" --accelsim-config . "$trace"
expect_fail "missing directory" 2 "none: No such file" simt --gpu "$gpu" "$tmp/none"
expect_fail "unknown GPU" 2 "GPU 'no such': neither a file" simt --gpu "no such" "$trace"

# A bad trace: FILE:LINE: reason, and no output file.
mkdir "$tmp/bad"
printf 'kernel-1.traceg\n' >"$tmp/bad/kernelslist.g"
sed 's/^0018 ffff0000 1 R4 IADD 1 R3 0$/0018 ffff0000 1 R4 IADD 1 R3 0 extra/' \
	"$golden/trace/kernel-1.traceg" >"$tmp/bad/kernel-1.traceg"
expect_fail "bad trace line" 2 "kernel-1.traceg:26: unexpected field 'extra'" simt \
	--gpu "$gpu" -o "$tmp/never.txt" "$tmp/bad"
[ -e "$tmp/never.txt" ] && not_ok "a failed run wrote its output"
# A trace that holds fewer blocks than its grid, and a copy that wraps past 2^64 (issue 25): on
# ced039f both were timed as if whole, exit 0.
mkdir "$tmp/short"
printf 'kernel-1.traceg\n' >"$tmp/short/kernelslist.g"
sed 's/^-grid dim = (2,1,1)$/-grid dim = (8,1,1)/' "$golden/trace/kernel-1.traceg" >"$tmp/short/kernel-1.traceg"
expect_fail "grid of 8 blocks, 2 in the trace" 2 \
	"kernel-1.traceg: holds 2 of the grid's 8 thread blocks (grid dim = (8,1,1))" simt \
	--gpu "$gpu" -o "$tmp/never.txt" "$tmp/short"
printf 'MemcpyHtoD,0xffffffffffffff00,512\nkernel-1.traceg\n' >"$tmp/short/kernelslist.g"
expect_fail "a copy past 2^64" 2 "kernelslist.g:1: MemcpyHtoD of 512 bytes at 0xffffffffffffff00 ends past 2^64" \
	simt --gpu "$gpu" -o "$tmp/never.txt" "$tmp/short"
[ -e "$tmp/never.txt" ] && not_ok "a refused trace wrote its output"
sed 's/ FADD / FOO /' "$golden/trace/kernel-1.traceg" >"$tmp/bad/kernel-1.traceg"
expect_fail "opcode missing from the GPU" 2 "opcode 'FOO' is not in the GPU description" simt \
	--gpu "$gpu" "$tmp/bad"
sed 's/binary version = 70/binary version = 35/' "$golden/trace/kernel-1.traceg" >"$tmp/bad/kernel-1.traceg"
expect_fail "no default GPU" 2 "no shipped GPU description for binary version 35" simt "$tmp/bad"

# The golden outputs: numbers worked out by hand for this trace (ctests/golden/simt-cli/README).
run simt --gpu "$gpu" "$trace" -p 3
if [ "$status" -eq 0 ] && same_table "$tmp/out" "$golden/expected.txt" && [ ! -s "$tmp/err" ]; then
	ok "table equals the golden one"
else
	not_ok "table differs: $(diff "$golden/expected.txt" "$tmp/out" | head -5)"
fi
run simt --gpu "$gpu" "$trace" -f json
if [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$golden/expected.json"; then
	ok "JSON equals the golden one"
else
	not_ok "JSON differs: $(diff "$golden/expected.json" "$tmp/out" | head -5)"
fi
run simt --gpu "$gpu" "$trace" -f csv
if [ "$status" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 3 ] &&
	head -n 1 "$tmp/out" | grep -q '^kernel_id,kernel,cycles,.*,inst_executed,thread_inst_executed,' &&
	grep -q '^2,conflicts,136,36,' "$tmp/out"; then
	ok "CSV: a header and one row per kernel"
else
	not_ok "CSV"
fi
run simt --gpu "$gpu" "$trace" -f csv -p 2
if [ "$status" -eq 0 ] && head -n 1 "$tmp/out" | grep -q '^kernel_id,pc,opcode,cycles,' &&
	[ "$(wc -l <"$tmp/out")" -eq 5 ]; then
	ok "CSV with --per-pc: the per-PC rows"
else
	not_ok "CSV with --per-pc"
fi

# One kernel file on its own; output to a file, written whole.
run simt --gpu "$gpu" "$trace/kernel-2.traceg" -o "$tmp/one.txt"
if [ "$status" -eq 0 ] && [ ! -s "$tmp/out" ] && grep -q '^ 2  conflicts *136 ' "$tmp/one.txt"; then
	ok "one kernel file, -o"
else
	not_ok "one kernel file, -o"
fi
expect_fail "a full disk" 2 "/dev/full" simt --gpu "$gpu" "$trace" -o /dev/full

# The picture: a well-formed SVG with a bar segment per part.
run simt --gpu "$gpu" "$trace" --svg "$tmp/b.svg"
if [ "$status" -eq 0 ] && grep -q '<svg' "$tmp/b.svg" && grep -q 'stall_memory' "$tmp/b.svg"; then
	if command -v xmllint >/dev/null 2>&1 && ! xmllint --noout "$tmp/b.svg" 2>/dev/null; then
		not_ok "--svg: xmllint refuses it"
	else
		ok "--svg"
	fi
else
	not_ok "--svg"
fi

# --export-gpu writes the description in use; it reads back to the same results.
run simt --gpu "$gpu" --export-gpu "$tmp/exported.gpu"
st=$status
run simt --gpu "$tmp/exported.gpu" "$trace" -p 3
if [ "$st" -eq 0 ] && [ "$status" -eq 0 ] &&
	[ "$(tail -n +2 "$tmp/out")" = "$(tail -n +2 "$golden/expected.txt")" ]; then
	ok "--export-gpu round trip"
else
	not_ok "--export-gpu round trip"
fi

# The real traces, when the data is there: the profiler's instruction counts.
data="${MPXKIT_SHARED:-$top_srcdir/../shared}/data/simt"
if [ -d "$data" ]; then
	run simt "$data/gtx1080/vectoradd-100-32"
	if [ "$status" -eq 0 ] && grep -q 'gtx1080, the shipped one for binary version 61' "$tmp/out" &&
		grep -q ' 344  *10,516 ' "$tmp/out"; then
		ok "vecadd with the default GPU"
	else
		not_ok "vecadd with the default GPU"
	fi
	run simt --accelsim-config "$data/configs/SM7_QV100" --export-gpu "$tmp/qv100.gpu"
	[ "$status" -eq 0 ] && grep -q '^sms 80$' "$tmp/qv100.gpu" && ok "import and export" ||
		not_ok "import and export"
else
	echo "ok - # SKIP real traces: $data is not here"
fi

exit $failed
