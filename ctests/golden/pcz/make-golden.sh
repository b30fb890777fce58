#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates the golden .pcz files and their damaged variants; run after a format change only.
# usage: make-golden.sh PATH/TO/mpxkit   (from this directory)
set -eu
mpxkit=$1
# The settings are spelled out (the defaults changed once: zstd 3 with groups before, zstd 1
# without now), so the files come back byte for byte; fast-default.pcz is the fast coder's.
$mpxkit pack -c stored -g auto two-threads.csv -o two-threads.pcz
$mpxkit pack -c zlib -g auto series-placement.csv -o series-placement.pcz
$mpxkit pack -c zstd -l 3 -g auto callgrind-stencil.csv -o callgrind-stencil.pcz
# fast-default.pcz is kept as first written (an earlier writer's version-1 bytes): made only when missing.
[ -e fast-default.pcz ] || $mpxkit pack -c zstd -l 1 -g none fast-default.csv -o fast-default.pcz
# Version 2 (the model codec, the default since): the same inputs under model-*.
for f in two-threads series-placement callgrind-stencil; do
	cp $f.csv model-$f.csv
	$mpxkit pack -c model model-$f.csv -o model-$f.pcz
done

# flip FILE OUT BYTE MASK: OUT is FILE with BYTE xor MASK.
flip() {
	cp "$1" "$2"
	old=$(od -An -tu1 -j "$3" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((old ^ $4)))" | dd of="$2" bs=1 seek="$3" conv=notrunc 2>/dev/null
}
# crc32 of the first N bytes of FILE, as 4 little-endian bytes (gzip's trailer holds it).
crc_le() {
	head -c "$2" "$1" | gzip -c | tail -c 8 | head -c 4
}
# header_fix FILE: rewrites the header CRC so only the field under test is wrong.
header_fix() {
	crc_le "$1" 8 >"$1.crc"
	dd if="$1.crc" of="$1" bs=1 seek=8 conv=notrunc 2>/dev/null
	rm -f "$1.crc"
}

size=$(wc -c <two-threads.pcz)
: >bad-empty.pcz
head -c $((size - 1)) two-threads.pcz >bad-truncated-end-mark.pcz
head -c 40 two-threads.pcz >bad-truncated-meta.pcz
head -c 11 two-threads.pcz >bad-truncated-header.pcz
flip two-threads.pcz bad-magic.pcz 0 0x01
flip two-threads.pcz bad-header-crc.pcz 9 0x10
flip two-threads.pcz bad-version.pcz 4 0x02 && header_fix bad-version.pcz   # version 3
flip two-threads.pcz bad-reserved-flags.pcz 7 0x80 && header_fix bad-reserved-flags.pcz
flip two-threads.pcz bad-region-value.pcz 124 0x01     # a value byte of the REGIONS payload
flip two-threads.pcz bad-end-mark.pcz $((size - 1)) 0x40
flip callgrind-stencil.pcz bad-zstd-payload.pcz 400 0x08
flip series-placement.pcz bad-zlib-payload.pcz 200 0x02
flip fast-default.pcz bad-fast-payload.pcz 230 0x04    # inside the fast coder's zstd REGIONS payload
cp two-threads.pcz bad-trailing-byte.pcz && printf 'x' >>bad-trailing-byte.pcz
printf 'region,unit,start_ns,end_ns,A\nr,u,0,1,1\n' >bad-csv-not-pcz.pcz

# Version 2: truncated, a flipped byte under a section CRC, a version-1 file called version 2,
# and a REGIONS stream damaged behind correct CRCs (so the model decoder's own checks must
# catch it: the section CRC covers bytes A..B-1 at B, the content CRC everything before END).
size=$(wc -c <model-callgrind-stencil.pcz)
head -c $((size - 5)) model-callgrind-stencil.pcz >bad-model-truncated.pcz
flip model-callgrind-stencil.pcz bad-model-region-byte.pcz 300 0x10
flip two-threads.pcz bad-model-v1-body.pcz 4 0x03 && header_fix bad-model-v1-body.pcz
# crc_at FILE FROM LEN AT: writes the CRC32 of LEN bytes from FROM at offset AT.
crc_at() {
	tail -c +$(($2 + 1)) "$1" | head -c "$3" | gzip -c | tail -c 8 | head -c 4 >"$1.crc"
	dd if="$1.crc" of="$1" bs=1 seek="$4" conv=notrunc 2>/dev/null
	rm -f "$1.crc"
}
# Walk model-two-threads.pcz's sections (each under 128 bytes: one-byte varint sizes).
byte() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
pos=12
while :; do
	type=$(byte model-two-threads.pcz $pos) len=$(byte model-two-threads.pcz $((pos + 2)))
	[ "$type" -eq 4 ] && reg=$pos reg_len=$len
	[ "$type" -eq 255 ] && end=$pos && break
	pos=$((pos + 4 + len + 4))
done
payload=$((reg + 4))
# tables_end FILE AT W: the offset of the byte after the tables of the REGIONS payload whose
# tables start at AT, for W columns (doc/pcz-format.md, "Tables": bit fields, least significant
# bit first; 7 field tables, then a mode and 1, 3 or 8 tables per column).
tables_end() {
	od -An -tu1 -v -j "$2" "$1" | tr -s ' ' '\n' | grep -v '^$' | awk -v W="$3" -v at="$2" '
	{ byte[n++] = $1 }
	function bit() { b = int(byte[int(pos / 8)] / 2 ^ (pos % 8)) % 2; pos++; return b }
	function bits(k,   v, i) { v = 0; for (i = 0; i < k; i++) v += bit() * 2 ^ i; return v }
	function gamma(   z) { z = 0; while (bit() == 0) z++; return 2 ^ z + bits(z) }
	function rice(r) { while (bit() == 0) ; bits(r) }
	function table(   k, r, i) {
		k = gamma() - 1
		if (k == 1) gamma()
		if (k < 2) return
		bits(4); r = bits(4)
		for (i = 0; i < k; i++) gamma()
		for (i = 0; i < k - 1; i++) rice(r)
	}
	END {
		pos = 0; bits(3 * (W - 1))
		for (f = 0; f < 7; f++) table()
		for (c = 0; c < W && c < 64; c++) {
			m = bits(2); classes = m == 0 ? 1 : m == 1 ? 3 : 8
			for (k = 0; k < classes; k++) table()
		}
		print at + int((pos + 7) / 8)
	}'
}
# A predictor the format does not have (7 for the duration): 3 bits after the regions varint.
cp model-two-threads.pcz bad-model-predictor.pcz
old=$(byte model-two-threads.pcz $((payload + 1)))
printf "$(printf '\\%03o' $((old | 7)))" | dd of=bad-model-predictor.pcz bs=1 seek=$((payload + 1)) conv=notrunc 2>/dev/null
# A rANS state below 2^16: its top two bytes (after the tables and the one-byte ans_size) zeroed.
ans=$(($(tables_end model-two-threads.pcz $((payload + 1)) 4) + 1))
cp model-two-threads.pcz bad-model-ans-state.pcz
printf '\000\000' | dd of=bad-model-ans-state.pcz bs=1 seek=$((ans + 2)) conv=notrunc 2>/dev/null
# A rANS stream one byte longer than what follows its size (the bound once taken before the
# size's own byte: found by fuzz_pcz_decode).
cp model-two-threads.pcz bad-model-ans-size.pcz
left=$((reg + 4 + reg_len - ans + 1))
printf "$(printf '\\%03o' "$left")" | dd of=bad-model-ans-size.pcz bs=1 seek=$((ans - 1)) conv=notrunc 2>/dev/null
for f in bad-model-predictor.pcz bad-model-ans-state.pcz bad-model-ans-size.pcz; do
	crc_at $f "$reg" $((4 + reg_len)) $((reg + 4 + reg_len))
	crc_at $f 0 "$end" $((end + 4 + 3))
	crc_at $f "$end" $((4 + 7)) $((end + 4 + 7))
done

# Intervals (version 2, doc/pcz-format.md, "Intervals"): estimates with their bounds, some
# exact, some unbounded above, some not counted.
$mpxkit pack -c model model-intervals.csv -o model-intervals.pcz
# sections FILE: events, reg and end, the offsets of its EVENTS, REGIONS and END frames
# (every section under 128 bytes: one-byte varint sizes).
sections() {
	pos=12
	while :; do
		type=$(byte "$1" $pos) len=$(byte "$1" $((pos + 2)))
		[ "$type" -eq 3 ] && events=$pos events_len=$len
		[ "$type" -eq 4 ] && reg=$pos
		[ "$type" -eq 255 ] && end=$pos && break
		pos=$((pos + 4 + len + 4))
	done
}
# flag_intervals FILE: sets the EVENTS flags to INTERVALS and fixes the CRCs, so that only the
# rule of "Intervals" can find what is wrong.
flag_intervals() {
	sections "$1"
	printf '\002' | dd of="$1" bs=1 seek=$((events + 4)) conv=notrunc 2>/dev/null
	crc_at "$1" "$events" $((4 + events_len)) $((events + 4 + events_len))
	crc_at "$1" 0 "$end" $((end + 4 + 3))
	crc_at "$1" "$end" $((4 + 7)) $((end + 4 + 7))
}
# An interval [33, 50] that misses its estimate 51: packed as plain events (the last bound
# named cs.hj, no bound's name), then named cs.hi and flagged.
sed -e '3s/cs\.hi$/cs.hj/' -e '7s/,998,41,33,50,/,998,51,33,50,/' model-intervals.csv >plain.csv
$mpxkit pack -c model plain.csv -o bad-model-interval-value.pcz
rm -f plain.csv
at=$(grep -abo 'cs\.hj' bad-model-interval-value.pcz | cut -d: -f1)
printf 'i' | dd of=bad-model-interval-value.pcz bs=1 seek=$((at + 4)) conv=notrunc 2>/dev/null
flag_intervals bad-model-interval-value.pcz
# Two events flagged as intervals: not a multiple of 3.
cp model-two-threads.pcz bad-model-interval-names.pcz
flag_intervals bad-model-interval-names.pcz
