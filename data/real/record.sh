#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Records the real-counter corpus (data/real/NAME.csv.gz) with `mpxkit record --perf`; see
# data/real/README.md for the programs, their inputs, the events and the split.
#
# usage: data/real/record.sh [-m MPXKIT] [-g GENDATA] [-e EVENTS] [-i US] [-o OUTDIR]
#                            [-w WORKDIR] [-l] [NAME...]
#   -m  the mpxkit binary (default: $MPXKIT, else mpxkit on PATH)
#   -g  data/kernels/gendata of a build (default: $GENDATA, else ../kernels/gendata here)
#   -e  comma-separated events (default: the corpus's, README.md "Events"; tracepoints need
#       mpxkit to name them and --kernel, which the script passes)
#   -i  the sampling interval in microseconds (default 1000)
#   -o  where the traces go (default: data/real here)
#   -w  scratch directory for inputs (default: /tmp/mpxkit-real)
#   -l  list the recordings (name, split, package, input, command) and exit
# With NAMEs (a program, e.g. gzip, or one recording, e.g. gzip-big), only those are recorded.
#
# Each recording counts every event at once, exactly, every millisecond, the program's threads
# and children included (servers and their clients alike), in user and kernel mode, from its
# exec to its end (doc/recording.md, "All at once").  Inputs are generated with fixed seeds in
# the scratch directory; the programs come from Debian's packages (README.md lists them).  The
# Rodinia suite is the project's held-out evaluation set and must never be added here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
mpxkit=${MPXKIT:-mpxkit}
gendata=${GENDATA:-$here/../kernels/gendata}
out=$here
work=/tmp/mpxkit-real
interval=1000
list_only=0
events=raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_write,\
syscalls:sys_enter_openat,syscalls:sys_enter_close,syscalls:sys_enter_newfstatat,\
syscalls:sys_enter_lseek,syscalls:sys_enter_mmap,syscalls:sys_enter_munmap,\
syscalls:sys_enter_brk,syscalls:sys_enter_futex,perf::PAGE-FAULTS,perf::MINOR-FAULTS,\
perf::MAJOR-FAULTS,exceptions:page_fault_user,kmem:kmalloc,kmem:kfree,kmem:mm_page_alloc,\
kmem:mm_page_free,tlb:tlb_flush,perf::CONTEXT-SWITCHES,perf::CPU-MIGRATIONS,\
sched:sched_switch,sched:sched_wakeup,sched:sched_process_fork,timer:hrtimer_start,\
timer:timer_start,filemap:mm_filemap_add_to_page_cache,\
filemap:mm_filemap_delete_from_page_cache,writeback:writeback_dirty_folio,\
block:block_bio_queue,irq:softirq_entry,irq:irq_handler_entry,net:net_dev_queue,\
skb:consume_skb

while getopts m:g:e:i:o:w:lh opt; do
	case $opt in
	m) mpxkit=$OPTARG ;;
	g) gendata=$OPTARG ;;
	e) events=$OPTARG ;;
	i) interval=$OPTARG ;;
	o) out=$OPTARG ;;
	w) work=$OPTARG ;;
	l) list_only=1 ;;
	h) sed -n '3,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [-m MPXKIT] [-g GENDATA] [-e EVENTS] [-i US] [-o OUTDIR] [-w WORKDIR] [-l] [NAME...]" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
selected="$*"
failed=

# rec NAME SPLIT PACKAGE INPUT CMD [ARGS...]: records one program on one input (or lists it).
rec() {
	name=$1 split=$2 package=$3 input=$4
	shift 4
	if [ -n "$selected" ]; then
		case " $selected " in *" $name "* | *" ${name%%-*} "*) ;; *) return 0 ;; esac
	fi
	if [ "$list_only" = 1 ]; then
		printf '%s|%s|%s|%s|%s\n' "$name" "$split" "$package" "$input" "$*"
		return 0
	fi
	version=$(dpkg-query -W -f '${Version}' "$package" 2>/dev/null || echo unknown)
	printf 'recording %s (%s, %s %s): %s\n' "$name" "$split" "$package" "$version" "$*" >&2
	if ! "$mpxkit" record --perf --kernel --interval-us "$interval" -e "$events" \
		-o "$work/$name.raw.csv" -- "$@" <"$work/stdin" >"$work/$name.out" 2>"$work/$name.err"; then
		failed="$failed $name"
		cat "$work/$name.err" >&2
		return 0
	fi
	# The corpus's own metadata before the recorder's (doc/trace-format.md: '# key=value' lines).
	{
		printf '# program=%s\n# name=%s\n# split=%s\n# package=%s %s\n# input=%s\n' \
			"${name%%-*}" "$name" "$split" "$package" "$version" "$input"
		cat "$work/$name.raw.csv"
	} | gzip -n -9 >"$out/$name.csv.gz"
	rm -f "$work/$name.raw.csv" "$work/$name.out" "$work/$name.err"
}

# A server and its client under one command, so the recorder counts both (and nothing else):
# the server runs in the foreground of a child shell, the client once it answers, then the stop.
write_servers() {
	cat >serve-redis.sh <<'EOF'
#!/bin/sh
redis-server --port 16379 --bind 127.0.0.1 --save '' --appendonly no --daemonize no >redis.log 2>&1 &
i=0; until redis-cli -p 16379 ping >/dev/null 2>&1; do i=$((i + 1)); [ $i -lt 200 ] || exit 1; sleep 0.05; done
redis-benchmark -p 16379 -q -n "$1" -t "$2" -P 4 >/dev/null
redis-cli -p 16379 shutdown nosave >/dev/null 2>&1; wait
EOF
	cat >serve-nginx.sh <<'EOF'
#!/bin/sh
mkdir -p nginx/logs nginx/html
cp "$2" nginx/html/
cat >nginx/nginx.conf <<CONF
daemon off; worker_processes 1; error_log $PWD/nginx/logs/error.log; pid $PWD/nginx/nginx.pid;
events { worker_connections 64; }
http { access_log off; server { listen 127.0.0.1:18080; root $PWD/nginx/html; } }
CONF
nginx -p "$PWD/nginx" -c "$PWD/nginx/nginx.conf" &
i=0; until [ -s nginx/nginx.pid ]; do i=$((i + 1)); [ $i -lt 200 ] || exit 1; sleep 0.05; done
ab -q -n "$1" -c 2 "http://127.0.0.1:18080/$(basename "$2")" >/dev/null
kill "$(cat nginx/nginx.pid)"; wait
EOF
	cat >serve-memcached.sh <<'EOF'
#!/bin/sh
memcached -l 127.0.0.1 -p 11311 -U 0 -t 1 -m 64 &
python3 - "$1" "$2" <<'PY'
import socket, sys, time
n, size = int(sys.argv[1]), int(sys.argv[2])
for _ in range(200):
    try:
        s = socket.create_connection(("127.0.0.1", 11311)); break
    except OSError:
        time.sleep(0.05)
f = s.makefile("rwb")
v = b"v" * size
for i in range(n):
    f.write(b"set k%d 0 0 %d\r\n%s\r\n" % (i % 997, size, v)); f.flush(); f.readline()
    f.write(b"get k%d\r\n" % (i % 991)); f.flush()
    while f.readline() not in (b"END\r\n", b""):
        pass
PY
kill $!; wait
EOF
	chmod +x serve-redis.sh serve-nginx.sh serve-memcached.sh
}

# Inputs, all made here with fixed seeds (gendata, Python's random with seed 1).
make_inputs() {
	"$gendata" text 500000 >big.txt
	"$gendata" text 100000 >text.txt
	"$gendata" csv 400000 >sales.csv
	"$gendata" json 15000 >items.json
	"$gendata" sql 60000 >workload.sql
	"$gendata" sql 20000 >small.sql
	: >stdin
	gzip -9 -c big.txt >big.txt.gz; bzip2 -9 -c text.txt >text.txt.bz2
	xz -6 -T1 -c big.txt >big.txt.xz; zstd -19 -q -c big.txt >big.txt.zst
	"$gendata" text 200000 | sort >sorted.txt
	sed 's/e/E/g' sorted.txt >sorted2.txt
	python3 - <<'PY'
import random, struct, wave
random.seed(1)
with wave.open("tone.wav", "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(44100)
    w.writeframes(b"".join(struct.pack("<hh", random.randint(-8000, 8000), random.randint(-8000, 8000)) for _ in range(441000)))
srcs = []
for i in range(24):
    with open("src%02d.c" % i, "w") as f:
        f.write("#include <stdio.h>\n#include <string.h>\n")
        for j in range(40):
            f.write("int f%d_%d(int x) { int s = 0; for (int k = 0; k < x; k++) s += k * %d; return s; }\n" % (i, j, random.randint(1, 99)))
    srcs.append("src%02d" % i)
with open("Makefile.gen", "w") as f:
    f.write("all: %s\n" % " ".join(s + ".o" for s in srcs))
    f.write("%.o: %.c\n\tgcc -O2 -c $< -o $@\nclean:\n\trm -f *.o\n")
with open("build.ninja", "w") as f:
    f.write("rule cc\n  command = gcc -O1 -c $in -o $out\n")
    for s in srcs:
        f.write("build %s.n.o: cc %s.c\n" % (s, s))
with open("CMakeLists.txt", "w") as f:
    f.write("cmake_minimum_required(VERSION 3.13)\nproject(gen C)\nadd_library(gen %s)\n" % " ".join(s + ".c" for s in srcs[:8]))
with open("script.py", "w") as f:
    f.write("import json, random\nrandom.seed(1)\nd = [{'k': random.randint(0, 1000), 's': 'x' * random.randint(1, 50)} for _ in range(200000)]\n"
            "print(sum(x['k'] for x in json.loads(json.dumps(d))))\n")
with open("regex.py", "w") as f:
    f.write("import re\nt = open('big.txt').read()\nprint(len(re.findall(r'\\b(\\w+)\\s+\\1\\b', t)), len(re.findall(r'[aeiou]{3,}', t)))\n")
PY
	printf 'proc fib {n} { if {$n < 2} { return $n }; return [expr {[fib [expr {$n-1}]] + [fib [expr {$n-2}]]}] }\nputs [fib 24]\n' >fib.tcl
	printf 'set s ""\nfor {set i 0} {$i < 200000} {incr i} { append s [format %%x $i] }\nputs [string length $s]\n' >strings.tcl
	printf 'local t = {}\nfor i = 1, 2000000 do t[i] = (i * 7919) %% 1000003 end\ntable.sort(t)\nprint(t[1], t[#t])\n' >sort.lua
	printf 'local s = 0\nfor w in io.open("big.txt"):read("a"):gmatch("%%a+") do s = s + #w end\nprint(s)\n' >words.lua
	printf 'scale=1200\n4*a(1)\n' >pi.bc
	printf 'define f(n) { if (n < 2) return 1; return n * f(n - 1) }\nf(900)\n' >fact.bc
	printf '%%!PS\n/Helvetica findfont 24 scalefont setfont\n1 1 60 { 20 exch 12 mul moveto (mpxkit real corpus) show } for\nshowpage\n' >page.ps
	convert -size 1200x900 plasma:fractal -seed 1 plasma.png 2>/dev/null || convert -size 1200x900 gradient:red-blue plasma.png
	mkdir -p tree && cp -r /usr/share/doc/bash /usr/share/doc/python3 /usr/include/linux tree/ 2>/dev/null || true
	[ -d repo/.git ] || git init -q repo && (cd repo && cp ../src0*.c . && git add . &&
		git -c user.name=corpus -c user.email=corpus@localhost commit -qm gen) >/dev/null 2>&1 || true
}

recordings() {
	# compile
	rec gcc-O2 train gcc-12 "src00.c (generated, 40 functions) at -O2" gcc -O2 -c src00.c -o gcc.o
	rec gcc-O0 train gcc-12 "src01.c (generated) at -O0 -g" gcc -O0 -g -c src01.c -o gcc.o
	rec cpp-stdio train cpp-12 "a file including stdio.h, string.h" gcc -E src02.c -o cpp.i
	rec cpp-big train cpp-12 "src03.c with -dD" gcc -E -dD src03.c -o cpp.i
	rec as-src train binutils "gcc -S of src04.c" sh -c 'gcc -S -o as.s src04.c && as as.s -o as.o'
	rec as-src2 train binutils "gcc -S -O2 of src05.c" sh -c 'gcc -S -O2 -o as.s src05.c && as as.s -o as.o'
	rec pycompile-json train python3.11 "json package, -m compileall -f" python3 -m compileall -q -f -d x /usr/lib/python3.11/json
	rec pycompile-email train python3.11 "email package, -m compileall -f" python3 -m compileall -q -f -d x /usr/lib/python3.11/email
	# compress and decompress
	rec gzip-big train gzip "big.txt (gendata text 500000), -9" gzip -9 -c big.txt
	rec gzip-text train gzip "text.txt (gendata text 100000), -1" gzip -1 -c text.txt
	rec gunzip-big train gzip "big.txt.gz" gzip -d -c big.txt.gz
	rec gunzip-sales train gzip "sales.csv gzip -6 on stdin" sh -c 'gzip -6 -c sales.csv | gzip -d -c'
	rec bzip2-text test bzip2 "text.txt, -9" bzip2 -9 -c text.txt
	rec bzip2-sales test bzip2 "sales.csv, -1" bzip2 -1 -c sales.csv
	rec bunzip2-text test bzip2 "text.txt.bz2" bzip2 -d -c text.txt.bz2
	rec bunzip2-sales test bzip2 "sales.csv bzip2 -9 on stdin" sh -c 'bzip2 -9 -c sales.csv | bzip2 -d -c'
	rec xz-text train xz-utils "text.txt, -6 -T1" xz -6 -T1 -c text.txt
	rec xz-sales train xz-utils "sales.csv, -3 -T2" xz -3 -T2 -c sales.csv
	rec unxz-big train xz-utils "big.txt.xz" xz -d -c big.txt.xz
	rec unxz-items train xz-utils "items.json xz on stdin" sh -c 'xz -c items.json | xz -d -c'
	rec zstd-big test zstd "big.txt, -19" zstd -19 -T1 -q -c big.txt
	rec zstd-sales test zstd "sales.csv, -3 -T2" zstd -3 -T2 -q -c sales.csv
	rec unzstd-big test zstd "big.txt.zst" zstd -d -q -c big.txt.zst
	rec unzstd-sales test zstd "sales.csv zstd on stdin" sh -c 'zstd -q -c sales.csv | zstd -d -q -c'
	rec lz4-big validation lz4 "big.txt, -9" lz4 -9 -c big.txt
	rec lz4-sales validation lz4 "sales.csv, -1" lz4 -1 -c sales.csv
	rec brotli-text train brotli "text.txt, -q 9" brotli -q 9 -c text.txt
	rec brotli-items train brotli "items.json, -q 5" brotli -q 5 -c items.json
	# query
	rec sqlite3-sql train sqlite3 "workload.sql (gendata sql 60000), in memory" sh -c 'sqlite3 :memory: <workload.sql'
	rec sqlite3-file train sqlite3 "small.sql (gendata sql 20000), into a file" sh -c 'rm -f db.sqlite && sqlite3 db.sqlite <small.sql'
	rec jq-group validation jq "items.json (gendata json 15000): group and count" jq -c 'group_by(.active) | map({a: .[0].active, n: length})' items.json
	rec jq-select validation jq "items.json: select and sort" jq -c '[.[] | select(.score > 500)] | sort_by(.name) | map(.name)' items.json
	# interpret
	rec python3-json train python3.11 "script.py: 200000 records through json" python3 script.py
	rec python3-regex train python3.11 "regex.py on big.txt" python3 regex.py
	rec perl-words test perl "word counts of big.txt" perl -ne '$c{$_}++ for split; END { print scalar(keys %c), "\n" }' big.txt
	rec perl-subst test perl "substitutions over sales.csv" perl -pe 's/(\d+)/<$1>/g; tr/a-z/A-Z/' sales.csv
	rec tclsh-fib validation tcl8.6 "fib.tcl: recursive fib 24" tclsh fib.tcl
	rec tclsh-strings validation tcl8.6 "strings.tcl: 200000 appends" tclsh strings.tcl
	rec lua-sort test lua5.4 "sort.lua: 2e6 numbers" lua5.4 sort.lua
	rec lua-words test lua5.4 "words.lua over big.txt" lua5.4 words.lua
	rec gawk-sums train gawk "sales.csv: sums by region" gawk -F, '{ s[$2] += $4 } END { for (k in s) print k, s[k] }' sales.csv
	rec gawk-fields train gawk "big.txt: field lengths" gawk '{ n += NF; l += length($0) } END { print n, l }' big.txt
	rec bc-pi train bc "pi.bc: 1200 digits" bc -lq pi.bc
	rec bc-fact train bc "fact.bc: 900!" bc -q fact.bc
	# build
	rec make-j1 train make "Makefile.gen: 24 generated C files, -j1" make -s -f Makefile.gen -j1 -B
	rec make-j2 train make "Makefile.gen, -j2" make -s -f Makefile.gen -j2 -B
	rec ninja-j1 test ninja-build "build.ninja: 24 files, -j1" sh -c 'rm -f *.n.o && ninja -j1 >/dev/null'
	rec ninja-j2 test ninja-build "build.ninja, -j2" sh -c 'rm -f *.n.o && ninja -j2 >/dev/null'
	rec cmake-configure validation cmake "CMakeLists.txt: a C library of 8 files" sh -c 'rm -rf cm && cmake -S . -B cm >/dev/null'
	rec cmake-build validation cmake "the same, configured and built" sh -c 'rm -rf cm && cmake -S . -B cm >/dev/null && cmake --build cm >/dev/null'
	# search
	rec grep-r train grep "-rc static under /usr/include" grep -rc static /usr/include
	rec grep-regex train grep "a back-reference regex over big.txt" grep -cE '(ab|cd)[a-z]+\1' big.txt
	rec rg-r test ripgrep "-c static under /usr/include" rg -c static /usr/include
	rec rg-regex test ripgrep "word regex over big.txt" rg -c '\b[a-z]{12,}\b' big.txt
	rec find-name train findutils "-name '*.h' under /usr/include" find /usr/include -name '*.h'
	rec find-type train findutils "-type f -size +4k under /usr/share" find /usr/share -type f -size +4k
	rec sed-subst validation sed "substitutions over big.txt" sed -e 's/[aeiou]/#/g' -e 's/  */ /g' big.txt
	rec sed-lines validation sed "line ranges over sales.csv" sed -n '2~3p' sales.csv
	# serve on loopback (server and client both counted)
	rec redis-set train redis-server "redis-benchmark -n 20000 -t set,get" ./serve-redis.sh 20000 set,get
	rec redis-lists train redis-server "redis-benchmark -n 20000 -t lpush,lpop" ./serve-redis.sh 20000 lpush,lpop
	rec nginx-small validation nginx-light "ab -n 2000 of a 2 KB page" ./serve-nginx.sh 2000 fib.tcl
	rec nginx-big validation nginx-light "ab -n 300 of big.txt" ./serve-nginx.sh 300 big.txt
	rec memcached-small test memcached "20000 set/get of 100 bytes" ./serve-memcached.sh 20000 100
	rec memcached-big test memcached "5000 set/get of 20000 bytes" ./serve-memcached.sh 5000 20000
	# files
	rec tar-c train tar "c of tree/ (docs and kernel headers)" tar -cf tree.tar tree
	rec tar-x train tar "x of tree.tar" sh -c 'rm -rf x && mkdir x && tar -xf tree.tar -C x'
	rec cp-r train coreutils "-r tree/" sh -c 'rm -rf cpd && cp -r tree cpd'
	rec cp-big train coreutils "big.txt, twice" sh -c 'cp big.txt b1 && cp b1 b2'
	rec rsync-a test rsync "-a tree/" sh -c 'rm -rf rs && rsync -a tree/ rs/'
	rec rsync-c test rsync "-ac tree/ over a copy" rsync -ac tree/ rs/
	rec du-s validation coreutils "-s /usr/share" du -s /usr/share
	rec du-a validation coreutils "-a tree/" du -a tree
	rec ls-R train coreutils "-lR /usr/include" ls -lR /usr/include
	rec ls-share train coreutils "-la /usr/share/doc" ls -la /usr/share/doc
	rec git-log train git "log -p of a generated repository" git -C repo log -p
	rec git-status train git "status and diff after an edit" sh -c 'echo x >>repo/src00.c && git -C repo status --short && git -C repo diff --stat'
	rec sort-text train coreutils "big.txt" sort -S 64M --parallel=1 big.txt
	rec sort-num train coreutils "sales.csv by the 4th field" sort -S 64M --parallel=2 -t, -k4,4n sales.csv
	rec sha256sum-big train coreutils "big.txt, sales.csv" sha256sum big.txt sales.csv
	rec sha256sum-tree train coreutils "every file of tree/" sh -c 'find tree -type f -exec sha256sum {} +'
	rec b2sum-big test coreutils "big.txt, sales.csv" b2sum big.txt sales.csv
	rec b2sum-tree test coreutils "every file of tree/" sh -c 'find tree -type f -exec b2sum {} +'
	rec diff-sorted train diffutils "sorted.txt against an edited copy" sh -c 'diff sorted.txt sorted2.txt; [ $? -le 1 ]'
	rec diff-tree train diffutils "-r tree/ against its copy" diff -r --no-dereference tree cpd
	rec openssl-enc train openssl "aes-256-cbc of big.txt" openssl enc -aes-256-cbc -pbkdf2 -pass pass:x -in big.txt -out big.enc
	rec openssl-dgst train openssl "sha512 of sales.csv" openssl dgst -sha512 sales.csv
	# media
	rec convert-resize validation imagemagick "plasma.png (1200x900) resized" convert plasma.png -resize 50% -blur 0x2 small.png
	rec convert-rotate validation imagemagick "plasma.png rotated, to jpeg" convert plasma.png -rotate 33 rot.jpg
	rec gs-page train ghostscript "page.ps to 150 dpi PNG" gs -q -dBATCH -dNOPAUSE -sDEVICE=png16m -r150 -sOutputFile=page.png page.ps
	rec gs-pdf train ghostscript "page.ps to PDF" gs -q -dBATCH -dNOPAUSE -sDEVICE=pdfwrite -sOutputFile=page.pdf page.ps
	rec sox-effects train sox "tone.wav (10 s stereo): reverb, rate" sox tone.wav fx.wav reverb rate 22050
	rec sox-stat train sox "tone.wav: stat" sox tone.wav -n stat
	rec flac-8 test flac "tone.wav at -8" flac -8 -f -s -o tone.flac tone.wav
	rec flac-d test flac "tone.flac decoded" sh -c 'flac -1 -f -s -o t1.flac tone.wav && flac -d -f -s -o t1.wav t1.flac'
}

if [ "$list_only" = 1 ]; then
	recordings
	exit 0
fi
mkdir -p "$work" "$out"
out=$(cd "$out" && pwd)
gendata=$(cd "$(dirname "$gendata")" && pwd)/$(basename "$gendata")
cd "$work"
# The programs are Debian's (README.md): a PATH with a version manager's shims first (pyenv's
# python3 is a shell script that execs a private build) would record the shim and another build.
PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH
# An uninstalled mpxkit is a libtool wrapper that sets LD_LIBRARY_PATH, which the recorded
# programs would inherit (gzip then made 19 more openat calls, its loader searching there).
if [ "$(head -c 2 "$(command -v "$mpxkit")" 2>/dev/null)" = '#!' ]; then
	echo "$0: $mpxkit is a libtool wrapper, whose LD_LIBRARY_PATH would reach the programs;" \
		"name an installed mpxkit (make install) with -m" >&2
	exit 2
fi
# The events must be nameable before anything runs: tracepoints need lib/event (issue 27).
first=${events%%,*}
if ! "$mpxkit" record --perf --kernel -e "$events" -o "$work/probe.csv" -- true 2>"$work/probe.err"; then
	echo "$0: $(cat "$work/probe.err") (is $first nameable by this mpxkit?)" >&2
	exit 2
fi
[ -x "$gendata" ] || { echo "$0: no gendata at $gendata (-g, or build data/kernels)" >&2; exit 2; }
# The inputs are made once per scratch directory (a fresh -w makes them again).
if [ ! -f inputs.done ]; then
	make_inputs
	: >inputs.done
fi
write_servers
recordings
if [ -n "$failed" ]; then
	echo "$0: failed:$failed" >&2
	exit 1
fi
