#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the golden profiles of ctests/fuzz/profile_regression from doc/spacetime.md and
doc/container-format.md alone: an encoder independent of lib/spacetime, so the C reader is held
to the documents, not to its own writer.  NAME.prof with NAME.out (what fuzz_decode prints),
bad-NAME.prof for input the reader must refuse.  Run: python3 make-golden.py (in this folder)."""
import struct
import zlib

MAGIC = 0x50545389
END = bytes([0x8A, 0x45, 0x4E, 0x44])


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def string(s):
    b = s.encode() if isinstance(s, str) else s
    return varint(len(b)) + b


def crc(b):
    return zlib.crc32(b) & 0xFFFFFFFF


def container(sections, version=1):
    head = struct.pack("<IHHI", MAGIC, version, 0, 0)
    out = bytearray(head + struct.pack("<I", crc(head)))
    for tag, payload in sections:
        frame = tag.encode() + struct.pack("<IQ", 0, len(payload))
        out += frame + struct.pack("<I", crc(frame)) + payload + struct.pack("<I", crc(payload))
    end_payload = struct.pack("<QI", len(sections), crc(bytes(out)))
    frame = END + struct.pack("<IQ", 0, 12)
    out += frame + struct.pack("<I", crc(frame)) + end_payload + struct.pack("<I", crc(end_payload))
    return bytes(out)


def head(source="callgrind", unit="bb", events=("Ir", "D1mr"), meta=(("command", "./x 1"),)):
    b = string(source) + string(unit) + varint(len(events))
    for e in events:
        b += string(e)
    b += varint(len(meta))
    for k, v in meta:
        b += string(k) + string(v)
    return ("HEAD", b)


def table(tag, first, entries):
    b = varint(first) + varint(len(entries))
    for e in entries:
        b += e
    return (tag, b)


def objs(names, first=0):
    return table("OBJS", first, [string(n) for n in names])


def fils(names, first=0):
    return table("FILS", first, [string(n) for n in names])


def funs(entries, first=0):  # (name, object, lo, size)
    return table("FUNS", first, [string(n) + varint(o) + varint(lo) + varint(sz)
                                 for n, o, lo, sz in entries])


def code(entries, first=0):  # (function, file, line, address)
    return table("CODE", first, [varint(f) + varint(fl) + varint(l) + varint(a)
                                 for f, fl, l, a in entries])


def thrd(entries, first=0):  # (tid, name)
    return table("THRD", first, [varint(t) + string(n) for t, n in entries])


def wind(window, t_begin, t_len, thread, rows, jumps=(), raw_steps=None):
    """rows: (code, counts...); code steps as the format codes them, or raw_steps given."""
    b = varint(window) + varint(t_begin) + varint(t_len) + varint(thread) + varint(len(rows))
    prev = None
    for i, (c, *counts) in enumerate(rows):
        step = raw_steps[i] if raw_steps else (c if prev is None else c - prev)
        prev = c
        b += varint(step)
        for n in counts:
            b += varint(n)
    b += varint(len(jumps))
    for f, t, n in jumps:
        b += varint(f) + varint(t) + varint(n)
    return ("WIND", b)


def meta(pairs):
    b = varint(len(pairs))
    for k, v in pairs:
        b += string(k) + string(v)
    return ("META", b)


TABLES = [objs(["/bin/x"]), fils(["x.c", "???"]),
          funs([("main", 0, 0, 0), ("loop", 0, 0x40, 0x20)]),
          code([(0, 0, 7, 0x10), (1, 0, 12, 0x40), (1, 0, 13, 0x48)]),
          thrd([(42, "main"), (43, "")])]

GOOD = {
    "minimal": [head(), *TABLES, wind(0, 0, 1000, 0, [(0, 5, 1), (2, 9, 0)], [(2, 1, 3)])],
    # Two threads, two blocks of one window, a table grown after a block, metadata at the end.
    "threads": [head(events=("Ir", "D1mr", "Bc")), *TABLES,
                wind(0, 0, 1000, 0, [(0, 5, 1, 2)]),
                wind(0, 0, 1000, 1, [(1, 7, 0, 1), (2, 8, 0, 0)], [(2, 1, 4)]),
                code([(0, 1, 0, 0x14)], first=3),
                wind(2, 2000, 1000, 1, [(3, 1, 1, 1)]),
                meta([("exit_status", "0")])],
    "perf": [head("perf", "ns", ("samples", "perf::CPU-CLOCK"), ()), *TABLES,
             wind(3, 30000000, 10000000, 0, [(1, 4, 1000000)])],
}

EXPECT = {
    "minimal": """source callgrind
time_unit bb
events Ir D1mr
block window 0 time 0+1000 thread 0 rows 2 jumps 1
row code 0 5 1
row code 2 9 0
jump 2 -> 1 3
""",
    "threads": """source callgrind
time_unit bb
events Ir D1mr Bc
block window 0 time 0+1000 thread 0 rows 1 jumps 0
row code 0 5 1 2
block window 0 time 0+1000 thread 1 rows 2 jumps 1
row code 1 7 0 1
row code 2 8 0 0
jump 2 -> 1 4
block window 2 time 2000+1000 thread 1 rows 1 jumps 0
row code 3 1 1 1
""",
    "perf": """source perf
time_unit ns
events samples perf::CPU-CLOCK
block window 3 time 30000000+10000000 thread 0 rows 1 jumps 0
row code 1 4 1000000
""",
}

TAIL = """function 0 main object /bin/x lo 0x0 size 0
function 1 loop object /bin/x lo 0x40 size 32
code 0 function 0 x.c:7 address 0x10
code 1 function 1 x.c:12 address 0x40
code 2 function 1 x.c:13 address 0x48
"""
THREADS = """thread 0 tid 42 name 'main'
thread 1 tid 43 name ''
"""
META = {"minimal": "meta command=./x 1\n", "threads": "meta command=./x 1\nmeta exit_status=0\n",
        "perf": ""}
EXTRA_CODE = {"threads": "code 3 function 0 ???:0 address 0x14\n"}

BAD = {
    "empty": None,
    "not-head-first": [*TABLES],
    "second-head": [head(), head()],
    "bad-source": [head(source="gprof")],
    "bad-unit": [head(unit="us")],
    "no-events": [head(events=())],
    "event-with-blank": [head(events=("I r",))],
    "event-twice": [head(events=("Ir", "Ir"))],
    "meta-key": [head(meta=(("Bad-Key", "v"),))],
    "meta-twice": [head(), meta([("command", "y")])],
    "meta-newline": [head(meta=(("k", "a\nb"),))],
    "unknown-tag": [head(), ("XXXX", varint(0))],
    "table-gap": [head(), objs(["/bin/x"], first=1)],
    "table-empty": [head(), ("OBJS", varint(0) + varint(0))],
    "function-object": [head(), objs(["/bin/x"]), funs([("f", 1, 0, 0)])],
    "function-range": [head(), objs(["/bin/x"]), funs([("f", 0, 2**64 - 16, 32)])],
    "code-function": [head(), objs(["/bin/x"]), fils(["x.c"]), code([(0, 0, 1, 16)])],
    "code-twice": [head(), *TABLES, code([(0, 0, 1, 0x10)], first=3)],
    "code-line": [head(), objs(["/bin/x"]), fils(["x.c"]), funs([("f", 0, 0, 0)]),
                  code([(0, 0, 2**32, 16)])],
    "thread-twice": [head(), thrd([(42, ""), (42, "")])],
    "thread-name": [head(), thrd([(42, "n" * 65)])],
    "row-order": [head(), *TABLES, wind(0, 0, 1, 0, [(1, 1, 1), (1, 1, 1)], raw_steps=[1, 0])],
    "row-code": [head(), *TABLES, wind(0, 0, 1, 0, [(3, 1, 1)])],
    "row-thread": [head(), *TABLES, wind(0, 0, 1, 2, [(0, 1, 1)])],
    "window-back": [head(), *TABLES, wind(5, 0, 1, 0, [(0, 1, 1)]), wind(4, 0, 1, 0, [(0, 1, 1)])],
    "window-time": [head(), *TABLES, wind(5, 0, 1, 0, [(0, 1, 1)]), wind(5, 7, 1, 1, [(0, 1, 1)])],
    "time-overflow": [head(), *TABLES, wind(0, 2**64 - 1, 1, 0, [(0, 1, 1)])],
    "jump-zero": [head(), *TABLES, wind(0, 0, 1, 0, [(0, 1, 1)], [(0, 1, 0)])],
    "jump-code": [head(), *TABLES, wind(0, 0, 1, 0, [(0, 1, 1)], [(0, 9, 1)])],
    "too-many-rows": [head(), *TABLES, ("WIND", varint(0) * 4 + varint(1000) + varint(0) * 3)],
    "trailing-bytes": [head(), *TABLES, ("WIND", wind(0, 0, 1, 0, [(0, 1, 1)])[1] + b"\0")],
    "truncated-row": [head(), *TABLES, ("WIND", wind(0, 0, 1, 0, [(0, 1, 1)])[1][:-3])],
    "long-varint": [head(), ("OBJS", b"\x80\x00" + varint(1) + string("/x"))],
    "nul-in-name": [head(), objs(["/bin/\0x"])],
}


def main():
    for name, sections in GOOD.items():
        with open(name + ".prof", "wb") as f:
            f.write(container(sections))
        with open(name + ".out", "w") as f:
            f.write(EXPECT[name] + META[name] + TAIL + EXTRA_CODE.get(name, "") + THREADS)
    for name, sections in BAD.items():
        with open("bad-" + name + ".prof", "wb") as f:
            f.write(b"" if sections is None else container(sections))
    # A profile whose container is fine but whose version is not 1.
    with open("bad-version.prof", "wb") as f:
        f.write(container([head()], version=2))


if __name__ == "__main__":
    main()
