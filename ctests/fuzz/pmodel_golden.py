#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Writes ctests/golden/pmodel: predict model files (.mpxp, doc/predict.md "Model file") encoded
# here, independently of lib/predict/file.c, with the description mpxkit_pmodel_describe must
# give for the good ones (NAME.out) and damaged ones that must be refused (bad-*.mpxp).  Run it
# from the top of the tree after a change to the format; `make check` only reads its output.
import math
import os
import struct
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "pmodel")
MAGIC = b"\x89PRD"
END = b"\x8aEND"


def crc(b):
    return zlib.crc32(b) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if v:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def string(s):
    b = s.encode()
    return varint(len(b)) + b


def f64(v):
    return struct.pack("<d", v)


def container(sections, version=1, flags=0):
    """The container of doc/container-format.md: header, framed sections, END."""
    head = MAGIC + struct.pack("<HHI", version, flags, 0)
    out = bytearray(head + struct.pack("<I", crc(head)))
    for tag, payload in sections:
        frame = tag + struct.pack("<IQ", 0, len(payload))
        out += frame + struct.pack("<I", crc(frame)) + payload + struct.pack("<I", crc(payload))
    content = crc(bytes(out))
    frame = END + struct.pack("<IQ", 0, 12)
    payload = struct.pack("<QI", len(sections), content)
    out += frame + struct.pack("<I", crc(frame)) + payload + struct.pack("<I", crc(payload))
    return bytes(out)


ROLES = ["cycles", "instructions", "misses", "icache", "dcache", "loads", "stores",
         "branches", "int_ops", "fp_ops"]


class Model:
    def __init__(self):
        self.meta = []
        self.inputs = [None] * 10  # the roles, then power events
        self.power_inputs = 0
        self.cores = []
        self.configs = []  # (core index, MHz, volts or nan)
        self.time = []  # (core, form, mu0, mu1)
        self.power = []  # (core, form, freq or nan, [coefs])
        self.xcore = []  # (from, to, form, [g0, g1, g2, g8])

    def sections(self):
        meta = varint(len(self.meta)) + b"".join(string(k) + string(v) for k, v in self.meta)
        inpt = varint(len(self.inputs))
        for name in self.inputs:
            inpt += b"\x01" + string(name) if name else b"\x00"
        inpt += struct.pack("<Q", self.power_inputs)
        core = varint(len(self.cores)) + b"".join(string(c) for c in self.cores)
        conf = varint(len(self.configs)) + b"".join(
            varint(c) + f64(f) + f64(v) for c, f, v in self.configs)
        time = varint(len(self.time)) + b"".join(
            varint(c) + bytes([form]) + f64(a) + f64(b) for c, form, a, b in self.time)
        powr = varint(len(self.power)) + b"".join(
            varint(c) + bytes([form]) + f64(f) + varint(len(k)) + b"".join(f64(x) for x in k)
            for c, form, f, k in self.power)
        xcor = varint(len(self.xcore)) + b"".join(
            varint(a) + varint(b) + bytes([form]) + b"".join(f64(x) for x in g)
            for a, b, form, g in self.xcore)
        return [(b"META", meta), (b"INPT", inpt), (b"CORE", core), (b"CONF", conf),
                (b"TIME", time), (b"POWR", powr), (b"XCOR", xcor)]

    def describe(self):
        """mpxkit_pmodel_describe's text, written out by hand from the fields."""
        met = ["none", "linear", "mlp", None, "cpi"]
        pform = [None, "per-freq", "voltage", "per-freq-v"]
        xform = [None, "ratio", "cpi", "cpi-mpki"]
        out = "roles:" + "".join(" %s=%s" % (ROLES[r], self.inputs[r])
                                 for r in range(10) if self.inputs[r])
        out += "\npower regressors: 1" + "".join(
            ", %s" % self.inputs[i] for i in range(len(self.inputs))
            if self.power_inputs >> i & 1)
        out += "\nconfigurations:"
        for c, f, v in self.configs:
            out += " %s@%g" % (self.cores[c], f)
            if not math.isnan(v):
                out += "(%.3f V)" % v
        out += "\n"
        for c, form, a, b in self.time:
            out += "time %s: MET %s" % (self.cores[c], met[form])
            if form == 1:
                out += ": MET/inst = miss/inst x %.6g ns" % a
            elif form == 2:
                out += ": MET/inst = miss/inst x (%.6g + %.6g x MPKI) ns" % (a, b)
            elif form == 4:
                out += ": MET/inst = %.6g + %.6g x CPI ns" % (a, b)
            out += "\n"
        for c, form, f, k in self.power:
            out += "power %s" % self.cores[c]
            if form != 2:
                out += "@%g" % f
            out += " (%s):" % pform[form] + "".join(" %.6g" % x for x in k) + "\n"
        for a, b, form, g in self.xcore:
            out += "cpi %s -> %s (%s): g0 %.6g, g1 %.6g, g2 %.6g, g8 %.6g\n" % (
                self.cores[a], self.cores[b], xform[form], g[0], g[1], g[2], g[3])
        for k, v in self.meta:
            out += "%s: %s\n" % (k, v)
        return out


def minimal():
    m = Model()
    m.inputs[0], m.inputs[1], m.inputs[2] = "CYC", "INS", "MISS"
    m.cores = ["A15"]
    m.configs = [(0, 1000, math.nan), (0, 2000, math.nan)]
    m.time = [(0, 1, 17.5, 0)]
    return m


def full():
    m = Model()
    m.meta = [("data", "hand-written"), ("command", "pmodel_golden.py")]
    m.inputs = ["CPU_CYCLES", "INST_RETIRED", "L1D_CACHE_REFILL", None, None, None, None, None,
                None, None, "L1I_TLB_REFILL"]
    m.power_inputs = 1 << 0 | 1 << 1 | 1 << 10
    m.cores = ["A15", "A7"]
    m.configs = [(0, 1000, 0.9), (0, 2000, 1.3), (1, 800, math.nan), (1, 1400, math.nan)]
    m.time = [(0, 2, 30.25, -1.5), (1, 4, -0.25, 0.33)]
    m.power = [(0, 3, 1000, [0.1, 0.2, 0.3, 0.4, 5.5]), (0, 1, 2000, [1.0, 0.25, 0.5, 7.0])]
    m.xcore = [(0, 1, 3, [0.6, 0.7, 0.08, -4.0]), (1, 0, 1, [0, 0.5, 0, 0])]
    return m


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def replaced(sections, tag, payload):
    return [(t, payload if t == tag else p) for t, p in sections]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, m in [("minimal", minimal()), ("full", full())]:
        write(name + ".mpxp", container(m.sections()))
        write(name + ".out", m.describe().encode())
    good = full().sections()
    data = container(good)
    bad = {
        "bad-empty": b"",
        "bad-magic": b"\x89PRX" + data[4:],
        "bad-version-2": container(good, version=2),
        "bad-truncated": data[:-7],
        "bad-payload-crc": data[:40] + bytes([data[40] ^ 1]) + data[41:],
        "bad-missing-section": container(good[:-1]),
        "bad-section-twice": container(good + [good[2]]),
        "bad-unknown-section": container(good + [(b"ZZZZ", b"")]),
        "bad-trailing-bytes": container(replaced(good, b"CORE", dict(good)[b"CORE"] + b"\0")),
    }
    m = full()
    m.time[0] = (0, 2, math.nan, 0)
    bad["bad-nan-coefficient"] = container(m.sections())
    m = full()
    m.time[0] = (0, 3, 1, 0)
    bad["bad-met-form"] = container(m.sections())
    m = full()
    m.configs[2] = (2, 800, math.nan)
    bad["bad-core-index"] = container(m.sections())
    m = full()
    m.configs[1] = (0, 1000, 1.3)
    bad["bad-config-twice"] = container(m.sections())
    m = full()
    m.power[1] = (0, 1, 2000, [1.0, 0.25, 0.5])
    bad["bad-coefficient-count"] = container(m.sections())
    m = full()
    m.power[1] = (0, 1, 1500, [1.0, 0.25, 0.5, 7.0])
    bad["bad-power-frequency"] = container(m.sections())
    m = full()
    m.power_inputs |= 1 << 5
    bad["bad-power-input"] = container(m.sections())
    m = full()
    m.xcore[1] = (1, 1, 1, [0, 0.5, 0, 0])
    bad["bad-xcore-same-core"] = container(m.sections())
    m = full()
    m.configs[0] = (0, -1000, 0.9)
    bad["bad-negative-frequency"] = container(m.sections())
    m = full()
    m.cores = ["A15", "A15"]
    bad["bad-core-twice"] = container(m.sections())
    # A count that claims more items than the payload can hold: refused before any allocation.
    bad["bad-huge-count"] = container(replaced(good, b"CONF", varint(1 << 40)))
    for name, b in bad.items():
        write(name + ".mpxp", b)


if __name__ == "__main__":
    main()
