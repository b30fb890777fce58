#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpxkit pack, unpack, info, verify end to end: usage, one-line errors, byte-identical round trips.
set -u
: "${MPXKIT:?run through make check}"
: "${top_srcdir:?run through make check}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpxkit-test-pcz-cli.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
golden="$top_srcdir/ctests/golden/pcz"
. "$top_srcdir/ctests/cli_lib.sh"

# --help: usage on stdout, status 0, for each command.
for cmd in pack unpack info verify; do
	run "$cmd" --help
	if [ "$status" -eq 0 ] && grep -q "^usage: mpxkit $cmd" "$tmp/out" && [ ! -s "$tmp/err" ]; then
		ok "$cmd --help"
	else
		not_ok "$cmd --help"
	fi
	expect_fail "$cmd: bad option" 1 "unknown option '--bogus'" "$cmd" --bogus
done
expect_fail "pack: no input" 1 "need exactly one input file" pack
expect_fail "pack: bad codec" 1 "unknown codec 'lz4'" pack -c lz4 x.csv
expect_fail "pack: bad threshold" 1 "threshold '1.5'" pack -t 1.5 x.csv
expect_fail "pack: bad grouping" 1 "unknown grouping 'kmeans'" pack -g kmeans x.csv
expect_fail "pack: missing file" 2 "cannot open $tmp/none.csv: No such file" \
	pack "$tmp/none.csv" -o "$tmp/x.pcz"
expect_fail "unpack: missing file" 2 "cannot open $tmp/none.pcz: No such file" unpack "$tmp/none.pcz"

# Bad CSV: FILE:LINE: reason, and no output file.
printf 'region,unit,start_ns,end_ns,A\nr,u,0,1,1\nr,u,0,1\n' >"$tmp/bad.csv"
expect_fail "pack: ragged row" 2 "bad.csv:3: 4 fields, the header has 5" \
	pack "$tmp/bad.csv" -o "$tmp/bad.pcz"
if [ -e "$tmp/bad.pcz" ] || ls "$tmp" | grep -q '\.tmp\.'; then
	not_ok "pack: failed run leaves no file"
else
	ok "pack: failed run leaves no file"
fi

# Round trips of every golden CSV and every recorded data set, each codec: byte for byte.
for csv in "$golden"/*.csv "$top_srcdir"/data/threads/*.csv; do
	name=$(basename "$csv" .csv)
	for codec in model zstd zlib stored; do
		run pack -c "$codec" "$csv" -o "$tmp/$name.pcz"
		[ "$status" -eq 0 ] || { not_ok "pack $name ($codec): $(cat "$tmp/err")"; continue; }
		run unpack "$tmp/$name.pcz" -o "$tmp/$name.csv"
		if [ "$status" -eq 0 ] && cmp -s "$csv" "$tmp/$name.csv"; then
			ok "round trip $name ($codec)"
		else
			not_ok "round trip $name ($codec)"
		fi
	done
	# unpack to standard output gives the same bytes.
	run unpack "$tmp/$name.pcz"
	if [ "$status" -eq 0 ] && cmp -s "$csv" "$tmp/out"; then
		ok "unpack $name to stdout"
	else
		not_ok "unpack $name to stdout"
	fi
done

# The development set of issue 16 (data/threads-dev, gzip-compressed CSV), at the defaults:
# the validation files packed as they are (gzip), the tuning files after gzip -dc.
for gz in "$top_srcdir"/data/threads-dev/*/*.csv.gz; do
	name=$(basename "$gz" .csv.gz)
	gzip -dc "$gz" >"$tmp/dev.csv" || { not_ok "gunzip $name"; continue; }
	case $gz in
	*/valid/*) run pack "$gz" -o "$tmp/dev.pcz" ;;
	*) run pack "$tmp/dev.csv" -o "$tmp/dev.pcz" ;;
	esac
	st=$status
	run unpack "$tmp/dev.pcz"
	[ "$st" -eq 0 ] && [ "$status" -eq 0 ] && cmp -s "$tmp/out" "$tmp/dev.csv" &&
		ok "round trip threads-dev $name" || not_ok "round trip threads-dev $name"
done

# IN.csv.gz's default output is IN.pcz.
cp "$top_srcdir/data/threads-dev/valid/omp-cg-3.csv.gz" "$tmp/named.csv.gz"
run pack "$tmp/named.csv.gz"
[ "$status" -eq 0 ] && [ -s "$tmp/named.pcz" ] && [ ! -e "$tmp/named.csv.gz.pcz" ] &&
	ok "pack: IN.csv.gz -> IN.pcz" || not_ok "pack: IN.csv.gz -> IN.pcz"

# Version-1 options without -c select zstd; the model codec refuses them.
expect_fail "pack: model codec with a level" 1 "the model codec has no level" \
	pack -c model -l 3 "$golden/two-threads.csv" -o "$tmp/m.pcz"
expect_fail "pack: model codec with groups" 1 "grouping needs a version-1 codec" \
	pack -c model -g auto "$golden/two-threads.csv" -o "$tmp/m.pcz"
grep -v '^#' "$golden/two-threads.csv" >"$tmp/nometa.csv"
run pack "$tmp/nometa.csv" -o "$tmp/v2.pcz"
run info "$tmp/v2.pcz"
if grep -q '^format: *pcz version 2, codecs: stored model' "$tmp/out" &&
	grep -q '^  REGIONS' "$tmp/out" && grep -q '^    (durations)' "$tmp/out" &&
	! grep -q '^  META' "$tmp/out"; then
	ok "info of a version-2 file: sections and columns"
else
	not_ok "info of a version-2 file: $(cat "$tmp/out")"
fi

# The default output name, grouping options, and input from stdin.
cp "$golden/two-threads.csv" "$tmp/default.csv"
run pack "$tmp/default.csv"
[ "$status" -eq 0 ] && [ -s "$tmp/default.pcz" ] && ok "pack default output name" ||
	not_ok "pack default output name"
for g in auto balance cluster none; do
	run pack -g "$g" -t 0.5 -l 5 "$golden/two-threads.csv" -o "$tmp/g.pcz"
	st=$status
	run unpack "$tmp/g.pcz"
	[ "$st" -eq 0 ] && cmp -s "$tmp/out" "$golden/two-threads.csv" && ok "grouping $g" ||
		not_ok "grouping $g"
done
$mpxkit pack - -o "$tmp/stdin.pcz" <"$golden/two-threads.csv" 2>"$tmp/err"
run unpack "$tmp/stdin.pcz"
cmp -s "$tmp/out" "$golden/two-threads.csv" && ok "pack from stdin" || not_ok "pack from stdin"
# unpack from a pipe: the bytes arrive once, and are checked whole before any is written.
cat "$tmp/stdin.pcz" | $mpxkit unpack - -o "$tmp/pipe.csv" 2>"$tmp/err"
[ $? -eq 0 ] && cmp -s "$tmp/pipe.csv" "$golden/two-threads.csv" && ok "unpack from a pipe" ||
	not_ok "unpack from a pipe: $(cat "$tmp/err")"
head -c 40 "$tmp/stdin.pcz" | $mpxkit unpack - -o "$tmp/never.csv" 2>"$tmp/err"
[ $? -eq 2 ] && [ ! -e "$tmp/never.csv" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	ok "unpack of a cut pipe: one line, no output" || not_ok "unpack of a cut pipe"

# info and verify.
name=$(basename "$(ls "$top_srcdir"/data/threads/*.csv | head -n 1)" .csv)
run info "$tmp/$name.pcz"
if [ "$status" -eq 0 ] && grep -q '^regions: *[1-9]' "$tmp/out" && grep -q '^ratio:' "$tmp/out" &&
	grep -q 'REGIONS' "$tmp/out"; then
	ok "info"
else
	not_ok "info"
fi
run verify "$tmp/$name.pcz" "$golden/two-threads.pcz"
[ "$status" -eq 0 ] && [ "$(grep -c ': OK,' "$tmp/out")" -eq 2 ] && ok "verify intact files" ||
	not_ok "verify intact files"
for bad in "$golden"/bad-*.pcz; do
	expect_fail "verify $(basename "$bad")" 2 "$(basename "$bad"): offset [0-9]*: " verify -q "$bad"
	expect_fail "unpack $(basename "$bad")" 2 "$(basename "$bad"): offset" unpack "$bad" \
		-o "$tmp/never.csv"
	[ -e "$tmp/never.csv" ] && not_ok "unpack of a bad file wrote output"
done

# Topology: stored with --topology, given back by unpack --topology.
run pack --topology "$golden/two-threads.csv" -o "$tmp/topo.pcz"
st=$status
run unpack --topology "$tmp/topo.xml" "$tmp/topo.pcz"
if [ "$st" -eq 0 ] && [ "$status" -eq 0 ] && grep -q '<topology' "$tmp/topo.xml" &&
	cmp -s "$tmp/out" "$golden/two-threads.csv"; then
	ok "topology round trip"
else
	not_ok "topology round trip"
fi

exit $failed
